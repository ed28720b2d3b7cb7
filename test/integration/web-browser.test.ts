// The web interface in a real browser (Debian's Chromium driven by playwright-core): registering,
// signing in and out, creating a repository, with axe-core checking each main page for serious or
// critical accessibility violations and screenshots saved at 1280 and 375 px.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { startServer, type TestServer } from '../helpers/server.js';
import { launchBrowser, screenshots } from '../helpers/web.js';

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

describe('web interface in a browser', () => {
  let s: TestServer;
  let browser: Browser;
  before(async () => {
    s = await startServer();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s.close();
  });

  it('registers, signs out and in, creates a repository', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      // Statuses the test provokes on purpose (a failed sign-in) are not script errors.
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text());
    });

    await page.goto(`${s.url}/`);
    assert.equal(await page.title(), 'Explore - Anvil');
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'explore');

    await page.click('text=Register');
    assert.equal(await page.title(), 'Register - Anvil');
    assert.deepEqual(await accessibilityViolations(page), []);
    await page.fill('#f-user_name', 'browsy');
    await page.fill('#f-email', 'browsy@example.com');
    await page.fill('#f-password', 'browser-pass-1');
    await page.fill('#f-retype', 'browser-pass-1');
    await screenshots(page, 'sign-up');
    await page.click('main button[type=submit]');
    await page.waitForURL(`${s.url}/`);
    assert.match((await page.textContent('main')) ?? '', /Welcome back, browsy/);
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'dashboard');

    await page.click('text=Sign out');
    await page.waitForURL(`${s.url}/`);
    await page.click('text=Sign in');
    assert.equal(await page.title(), 'Sign in - Anvil');
    await page.fill('#f-user_name', 'browsy');
    await page.fill('#f-password', 'wrong-password');
    await page.click('main button[type=submit]');
    assert.match((await page.textContent('[role=alert]')) ?? '', /incorrect/);
    await screenshots(page, 'sign-in-failed');
    await page.fill('#f-password', 'browser-pass-1');
    await page.click('main button[type=submit]');
    await page.waitForURL(`${s.url}/`);

    await page.click('text=New repository');
    assert.deepEqual(await accessibilityViolations(page), []);
    await page.fill('#f-repo_name', 'hello');
    await page.check('#f-init');
    await screenshots(page, 'new-repository');
    await page.click('main button[type=submit]');
    await page.waitForURL(`${s.url}/browsy/hello`);
    const repo = await s.api<{ full_name: string }>('GET', '/repos/browsy/hello');
    assert.equal(repo.body.full_name, 'browsy/hello');

    // The repository home: files and the README, then the README file itself.
    assert.match((await page.textContent('main')) ?? '', /README\.md/);
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'repository-home');
    await page.click('table.files >> text=README.md');
    await page.waitForURL(`${s.url}/browsy/hello/src/branch/main/README.md`);
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'file');
    await page.click('text=History');
    await page.click('ul.commits a.title');
    assert.match(page.url(), /\/browsy\/hello\/commit\/[0-9a-f]{40}$/);
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'commit');

    await page.goto(`${s.url}/browsy`);
    assert.match((await page.textContent('main')) ?? '', /browsy\/hello/);
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'profile');
    assert.deepEqual(errors, [], 'no script errors or CSP refusals in the console');
    await context.close();
  });
});
