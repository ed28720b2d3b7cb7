// Helpers for the web interface's tests: a form-posting client with a cookie jar (what a browser
// does, without one), and Chromium driven by playwright-core for the end-to-end tests.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';

export interface WebReply {
  status: number;
  text: string;
  headers: Headers;
  location: string | null;
}

/** A browser-like HTTP client: keeps cookies, reads the page's CSRF token, posts forms. */
export class WebClient {
  readonly cookies = new Map<string, string>();
  csrf = '';

  constructor(readonly base: string) {}

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private remember(res: Response) {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(c) || /max-age=0\b/i.test(c) || value === '')
        this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async request(
    method: string,
    p: string,
    body?: string,
    headers: Record<string, string> = {},
  ): Promise<WebReply> {
    const res = await fetch(this.base + p, {
      method,
      redirect: 'manual',
      headers: { accept: 'text/html', cookie: this.cookieHeader(), ...headers },
      body,
    });
    this.remember(res);
    const text = await res.text();
    const m = /<meta name="csrf-token" content="([^"]*)"/.exec(text);
    if (m) this.csrf = m[1]!;
    return { status: res.status, text, headers: res.headers, location: res.headers.get('location') };
  }

  get(p: string): Promise<WebReply> {
    return this.request('GET', p);
  }

  /** Posts a form with the CSRF token of the last page (unless `_csrf` is given, or null to omit it). */
  post(p: string, form: Record<string, string | null>): Promise<WebReply> {
    const params = new URLSearchParams();
    if (!('_csrf' in form)) params.set('_csrf', this.csrf);
    for (const [k, v] of Object.entries(form)) if (v !== null) params.set(k, v);
    return this.request('POST', p, params.toString(), {
      'content-type': 'application/x-www-form-urlencoded',
    });
  }

  /**
   * Posts a multipart form (files included) with the CSRF token of the last page as its first
   * field, where the site's forms put it (unless the form has its own `_csrf`).
   */
  async postMultipart(p: string, form: FormData): Promise<WebReply> {
    let body = form;
    if (!form.has('_csrf')) {
      body = new FormData();
      body.append('_csrf', this.csrf);
      form.forEach((v, k) => body.append(k, v));
    }
    const res = await fetch(this.base + p, {
      method: 'POST',
      redirect: 'manual',
      headers: { accept: 'text/html', cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') },
      body,
    });
    this.remember(res);
    return {
      status: res.status,
      text: await res.text(),
      headers: res.headers,
      location: res.headers.get('location'),
    };
  }

  async signIn(user: string, password: string): Promise<WebReply> {
    await this.get('/user/login');
    return this.post('/user/login', { user_name: user, password });
  }
}

export const CHROMIUM = '/usr/bin/chromium';

/** Chromium as the tests drive it (Debian's package, installed by scripts/setup-system.sh). */
export async function launchBrowser(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}

/** Where the browser tests save their screenshots (test-results/screenshots, not committed). */
export const SCREENSHOTS = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  '..',
  'test-results',
  'screenshots',
);

/**
 * The screenshots are for people to look at, and the pages are the same whichever database is
 * under them: they are taken on the SQLite pass (and `npm test`), not again on PostgreSQL and
 * MariaDB, where drawing some hundred full pages would only cost time.
 */
const TAKE_SCREENSHOTS = !['postgres', 'postgresql', 'mysql', 'mariadb'].includes(
  (process.env['ANVIL__DATABASE__DB_TYPE'] ?? '').toLowerCase(),
);

/** Saves a screenshot of the page at 1280 and 375 px wide (see TAKE_SCREENSHOTS). */
export async function screenshots(page: Page, name: string): Promise<void> {
  if (!TAKE_SCREENSHOTS) return;
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const size = page.viewportSize() ?? { width: 1280, height: 800 };
  for (const width of [1280, 375]) {
    await page.setViewportSize({ width, height: 800 });
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize(size);
}

const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Serious and critical accessibility violations on the page, as axe-core reports them. */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  // Evaluated through the debugging protocol, which the page's Content-Security-Policy does not govern.
  await page.evaluate(AXE);
  const result = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: { run(): Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }> };
      }
    ).axe;
    return axe.run();
  });
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}, ${v.nodes.length} nodes: ${JSON.stringify(v.nodes.map((n) => (n as { target: unknown }).target))})`,
    );
}
