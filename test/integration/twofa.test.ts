// Two-factor authentication with TOTP: enrolment on /user/settings/security (QR code drawn on the
// server, the secret as text, a passcode to confirm, a recovery code shown once), the sign-in step
// after the password (/user/two_factor, /user/two_factor/scratch), Basic authentication of the API
// with X-Forgejo-OTP / X-Gitea-OTP, git over HTTP refusing passwords, no replay of a passcode,
// throttled wrong codes, regenerating the recovery code and disabling; in Chromium the whole
// enrolment and a sign-in with a code computed here, with axe and screenshots.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser } from 'playwright-core';
import { Secret, TOTP } from 'otpauth';
import { startServer, type TestServer } from '../helpers/server.js';
import { WebClient, accessibilityViolations, launchBrowser, screenshots } from '../helpers/web.js';

const SECURITY = '/user/settings/security';
const ENROL = '/user/settings/security/two_factor/enroll';

const stepNow = () => Math.floor(Date.now() / 30_000);
const codeAt = (secret: string, step: number) =>
  TOTP.generate({
    secret: Secret.fromBase32(secret),
    algorithm: 'SHA1',
    digits: 6,
    period: 30,
    timestamp: step * 30_000,
  });

/**
 * The authenticator app of a test: each code it hands out belongs to a later time step than the
 * one before (the server accepts a step once), never beyond the step after now.
 */
class Device {
  private last = -1;
  constructor(readonly secret: string) {}
  /** The code of now, not counted as used (the enrolment's, which the server does not record). */
  current(): string {
    return codeAt(this.secret, stepNow());
  }
  next(): string {
    const step = Math.max(stepNow(), this.last + 1);
    assert.ok(step <= stepNow() + 1, 'the test used more codes than the window allows');
    this.last = step;
    return codeAt(this.secret, step);
  }
  /** Six digits that are none of the codes the server accepts now. */
  wrong(): string {
    const valid = new Set([-1, 0, 1, 2].map((d) => codeAt(this.secret, stepNow() + d)));
    let n = 123456;
    while (valid.has(String(n))) n++;
    return String(n);
  }
}

const flashOf = (html: string) => /class="flash [a-z]+"[^>]*>([^<]*)</.exec(html)?.[1] ?? '';
const decode = (s: string) =>
  s
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"');

describe('two-factor authentication', () => {
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

  const basic = (name: string, password: string) =>
    `Basic ${Buffer.from(`${name}:${password}`).toString('base64')}`;

  /** Signs in a new user and enrols them: the client, their device and recovery code. */
  async function enrolled(name: string) {
    const u = await s.createUser(name);
    const c = new WebClient(s.url);
    assert.equal((await c.signIn(u.name, u.password)).status, 303);
    const page = await c.get(ENROL);
    assert.equal(page.status, 200);
    const secret = /class="twofa-secret">([A-Z2-7]+)</.exec(page.text)?.[1];
    const state = /name="state" value="([^"]+)"/.exec(page.text)?.[1];
    assert.ok(secret && state);
    const device = new Device(secret);
    const done = await c.post(ENROL, { state: decode(state), passcode: device.current() });
    assert.equal(done.status, 303);
    assert.equal(done.location, SECURITY);
    const security = await c.get(SECURITY);
    const scratch = /recovery code ([A-Z2-9]{10})/.exec(decode(security.text))?.[1];
    assert.ok(scratch, 'the recovery code is shown once');
    return { u, c, device, scratch };
  }

  /** Signs out and enters the password again: the step that asks for the passcode. */
  async function passwordStep(c: WebClient, name: string, password: string) {
    await c.post('/user/logout', {});
    await c.get('/user/login');
    const r = await c.post('/user/login', { user_name: name, password, redirect_to: '/explore/repos' });
    assert.equal(r.status, 303);
    assert.equal(r.location, '/user/two_factor');
    return r;
  }

  const signedIn = async (c: WebClient) => (await c.get(SECURITY)).status === 200;

  it('enrols with a passcode: bad input, a wrong passcode and a form without CSRF change nothing', async () => {
    const anon = new WebClient(s.url);
    const redirect = await anon.get(SECURITY);
    assert.equal(redirect.status, 303);
    assert.match(redirect.location ?? '', /^\/user\/login\?redirect_to=/);

    const u = await s.createUser('alice');
    const c = new WebClient(s.url);
    await c.signIn(u.name, u.password);
    const security = await c.get(SECURITY);
    assert.equal(security.status, 200);
    assert.match(security.text, /not enrolled/);
    assert.match(security.text, /aria-current="page"[^>]*>Security</);

    const page = await c.get(ENROL);
    assert.equal(page.status, 200);
    assert.match(page.text, /<svg[^>]*viewBox/, 'the QR code is drawn on the server');
    const secret = /class="twofa-secret">([A-Z2-7]+)</.exec(page.text)![1]!;
    const state = decode(/name="state" value="([^"]+)"/.exec(page.text)![1]!);
    const device = new Device(secret);

    const empty = await c.post(ENROL, { state, passcode: '' });
    assert.equal(empty.status, 422);
    assert.match(empty.text, /class="field-error"[^>]*>Enter the passcode/);
    assert.ok(empty.text.includes(secret), 'the same secret is offered again');

    const wrong = await c.post(ENROL, { state, passcode: device.wrong() });
    assert.equal(wrong.status, 422);
    assert.match(wrong.text, /passcode is incorrect/);
    assert.ok(wrong.text.includes(secret));

    const tooLong = await c.post(ENROL, { state, passcode: '1'.repeat(40) });
    assert.equal(tooLong.status, 422);

    const tampered = await c.post(ENROL, { state: state.slice(0, -4) + 'AAAA', passcode: device.current() });
    assert.equal(tampered.status, 303);
    assert.equal(tampered.location, ENROL);

    const noCsrf = await c.post(ENROL, { _csrf: null, state, passcode: device.current() });
    assert.equal(noCsrf.status, 403);
    assert.match((await c.get(SECURITY)).text, /not enrolled/);

    // Another user cannot use this user's offer.
    const other = await s.createUser('alice2');
    const oc = new WebClient(s.url);
    await oc.signIn(other.name, other.password);
    await oc.get(ENROL);
    const stolen = await oc.post(ENROL, { state, passcode: device.current() });
    assert.equal(stolen.status, 303);
    assert.equal(stolen.location, ENROL);
    assert.match((await oc.get(SECURITY)).text, /not enrolled/);

    const ok = await c.post(ENROL, { state, passcode: device.current() });
    assert.equal(ok.status, 303);
    const after = await c.get(SECURITY);
    assert.match(after.text, /<strong>enrolled<\/strong>/);
    assert.match(flashOf(after.text), /recovery code [A-Z2-9]{10}/);
    assert.doesNotMatch(flashOf((await c.get(SECURITY)).text), /recovery code/, 'shown once');
    // Enrolled already: the enrol page sends back.
    const again = await c.get(ENROL);
    assert.equal(again.status, 303);
    assert.equal(again.location, SECURITY);
  });

  it('signs in with password and passcode only; wrong, replayed and missing codes sign nobody in', async () => {
    const { u, c, device } = await enrolled('bruno');
    await passwordStep(c, u.name, u.password);
    assert.equal(await signedIn(c), false, 'no session after the password alone');
    const stepPage = await c.get('/user/two_factor');
    assert.equal(stepPage.status, 200);
    assert.match(stepPage.text, /name="passcode"/);

    const empty = await c.post('/user/two_factor', { passcode: '' });
    assert.equal(empty.status, 422);
    const wrong = await c.post('/user/two_factor', { passcode: device.wrong() });
    assert.equal(wrong.status, 401);
    assert.match(wrong.text, /passcode is incorrect/);
    assert.equal(await signedIn(c), false);
    const noCsrf = await c.post('/user/two_factor', { _csrf: null, passcode: device.current() });
    assert.equal(noCsrf.status, 403);

    // The pending sign-in is this browser's only.
    const thief = new WebClient(s.url);
    await thief.get('/user/login');
    thief.cookies.set('anvil_twofa', c.cookies.get('anvil_twofa')!);
    const stolen = await thief.get('/user/two_factor');
    assert.equal(stolen.status, 303);
    assert.equal(stolen.location, '/user/login');

    const code = device.next();
    const ok = await c.post('/user/two_factor', { passcode: code });
    assert.equal(ok.status, 303);
    assert.equal(ok.location, '/explore/repos');
    assert.equal(await signedIn(c), true);
    assert.equal(c.cookies.has('anvil_twofa'), false, 'the pending sign-in is gone');

    // The same code again: refused.
    await passwordStep(c, u.name, u.password);
    const replay = await c.post('/user/two_factor', { passcode: code });
    assert.equal(replay.status, 401);
    assert.equal(await signedIn(c), false);

    // Without a pending sign-in there is no step to take.
    const fresh = new WebClient(s.url);
    await fresh.get('/user/login');
    const none = await fresh.post('/user/two_factor', { passcode: device.current() });
    assert.equal(none.status, 303);
    assert.equal(none.location, '/user/login');
  });

  it('accepts the recovery code once, and a regenerated one replaces it', async () => {
    const { u, c, device, scratch } = await enrolled('carla');
    await passwordStep(c, u.name, u.password);
    assert.equal((await c.get('/user/two_factor/scratch')).status, 200);
    const wrong = await c.post('/user/two_factor/scratch', { token: 'ABCDEFGHJK' });
    assert.equal(wrong.status, 401);
    assert.equal(await signedIn(c), false);
    const ok = await c.post('/user/two_factor/scratch', { token: scratch.toLowerCase() });
    assert.equal(ok.status, 303);
    assert.equal(ok.location, SECURITY);
    const security = await c.get(SECURITY);
    assert.match(flashOf(security.text), /used your recovery code/);
    assert.match(security.text, /You have used your recovery code/);

    await passwordStep(c, u.name, u.password);
    const reused = await c.post('/user/two_factor/scratch', { token: scratch });
    assert.equal(reused.status, 401, 'a recovery code works once');

    // Signed in with a passcode, a new recovery code replaces the used one.
    assert.equal((await c.post('/user/two_factor', { passcode: device.next() })).status, 303);
    await c.get(SECURITY);
    const noCsrf = await c.post('/user/settings/security/two_factor/regenerate_scratch', { _csrf: null });
    assert.equal(noCsrf.status, 403);
    const regen = await c.post('/user/settings/security/two_factor/regenerate_scratch', {});
    assert.equal(regen.status, 303);
    const fresh = /recovery code is now ([A-Z2-9]{10})/.exec(flashOf((await c.get(SECURITY)).text))?.[1];
    assert.ok(fresh);
    await passwordStep(c, u.name, u.password);
    assert.equal((await c.post('/user/two_factor/scratch', { token: fresh })).status, 303);
    assert.equal(await signedIn(c), true);
  });

  it('needs X-Forgejo-OTP or X-Gitea-OTP beside a Basic password; tokens unaffected; git refuses passwords', async () => {
    const { u, device } = await enrolled('dmitri');
    const without = await s.api<{ message: string }>('GET', '/user', { basic: [u.name, u.password] });
    assert.equal(without.status, 401);
    assert.equal(without.body.message, 'invalid provided OTP');
    const wrong = await s.api('GET', '/user', {
      basic: [u.name, u.password],
      headers: { 'x-forgejo-otp': device.wrong() },
    });
    assert.equal(wrong.status, 401);

    const code = device.next();
    const withOtp = await s.api<{ login: string }>('GET', '/user', {
      basic: [u.name, u.password],
      headers: { 'x-forgejo-otp': code },
    });
    assert.equal(withOtp.status, 200);
    assert.equal(withOtp.body.login, u.name);
    const replay = await s.api('GET', '/user', {
      basic: [u.name, u.password],
      headers: { 'x-forgejo-otp': code },
    });
    assert.equal(replay.status, 401, 'a passcode is accepted once');
    const gitea = await s.api('GET', '/user', {
      basic: [u.name, u.password],
      headers: { 'x-gitea-otp': device.next() },
    });
    assert.equal(gitea.status, 200);

    assert.equal((await s.api('GET', '/user', { token: u.token })).status, 200);
    assert.equal((await s.api('GET', '/user', { basic: [u.name, u.token] })).status, 200);

    // git over HTTP: a password is refused (no client sends a passcode), a token works.
    const created = await s.api('POST', '/user/repos', {
      token: u.token,
      body: { name: 'code', auto_init: true, private: true },
    });
    assert.equal(created.status, 201);
    const refs = `${s.url}/${u.name}/code.git/info/refs?service=git-upload-pack`;
    const byPassword = await fetch(refs, { headers: { authorization: basic(u.name, u.password) } });
    assert.equal(byPassword.status, 401);
    assert.match(await byPassword.text(), /two-factor authentication enabled cannot perform HTTP/);
    const byToken = await fetch(refs, { headers: { authorization: basic(u.name, u.token) } });
    assert.equal(byToken.status, 200);
    await byToken.arrayBuffer();

    // Someone without 2FA signs in with a password alone, as before.
    const plain = await s.createUser('plain');
    assert.equal((await s.api('GET', '/user', { basic: [plain.name, plain.password] })).status, 200);
  });

  it('throttles wrong passcodes like wrong passwords', async () => {
    const { u, c, device } = await enrolled('erika');
    await passwordStep(c, u.name, u.password);
    const max = s.config.security.signInThrottle.maxPerAccount;
    for (let i = 0; i < max; i++) {
      assert.equal((await c.post('/user/two_factor', { passcode: device.wrong() })).status, 401);
    }
    const blocked = await c.post('/user/two_factor', { passcode: device.next() });
    assert.equal(blocked.status, 429);
    assert.match(blocked.text, /Too many failed/);
    assert.equal(await signedIn(c), false);
  });

  it('disables two-factor authentication (confirmed), after which the password is enough', async () => {
    const { u, c } = await enrolled('fiona');
    const noCsrf = await c.post('/user/settings/security/two_factor/disable', { _csrf: null });
    assert.equal(noCsrf.status, 403);
    const page = await c.get(SECURITY);
    assert.match(page.text, /data-confirm="Disabling two-factor/);
    const off = await c.post('/user/settings/security/two_factor/disable', {});
    assert.equal(off.status, 303);
    const after = await c.get(SECURITY);
    assert.match(flashOf(after.text), /has been disabled/);
    assert.match(after.text, /not enrolled/);
    const twice = await c.post('/user/settings/security/two_factor/disable', {});
    assert.equal(twice.status, 303);
    assert.match(flashOf((await c.get(SECURITY)).text), /not enrolled/);

    await c.post('/user/logout', {});
    await c.get('/user/login');
    const r = await c.post('/user/login', { user_name: u.name, password: u.password });
    assert.equal(r.location, '/');
    assert.equal(await signedIn(c), true);
    assert.equal((await s.api('GET', '/user', { basic: [u.name, u.password] })).status, 200);
  });

  it('in Chromium: enrols from the QR page, signs out, signs in with password and computed code', async () => {
    const u = await s.createUser('greta');
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text());
    });
    page.on('dialog', (d) => void d.accept());

    await page.goto(`${s.url}/user/login`);
    await page.fill('#f-user_name', u.name);
    await page.fill('#f-password', u.password);
    await page.click('main button[type=submit]');
    await page.waitForURL(`${s.url}/`);

    await page.goto(`${s.url}${SECURITY}`);
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'twofa-security');
    await page.click('text=Enroll into two-factor authentication');
    await page.waitForURL(`${s.url}${ENROL}`);
    assert.equal(await page.locator('.twofa-qr svg').count(), 1);
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'twofa-enroll');
    const secret = ((await page.textContent('.twofa-secret')) ?? '').trim();
    const device = new Device(secret);
    await page.fill('#f-passcode', device.current());
    await page.click('main form[action$="enroll"] button[type=submit]');
    await page.waitForURL(`${s.url}${SECURITY}`);
    const flash = (await page.textContent('.flash')) ?? '';
    assert.match(flash, /recovery code [A-Z2-9]{10}/);
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'twofa-enrolled');

    await page.click('.user-menu summary');
    await page.click('text=Sign out');
    await page.waitForURL(`${s.url}/`);
    await page.goto(`${s.url}/user/login`);
    await page.fill('#f-user_name', u.name);
    await page.fill('#f-password', u.password);
    await page.click('main button[type=submit]');
    await page.waitForURL(`${s.url}/user/two_factor`);
    assert.equal(await page.title(), 'Two-factor authentication - Anvil');
    await page.fill('#f-passcode', device.wrong());
    await page.click('main button[type=submit]');
    assert.match((await page.textContent('[role=alert]')) ?? '', /incorrect/);
    assert.deepEqual(await accessibilityViolations(page), []);
    await screenshots(page, 'twofa-sign-in');
    await page.fill('#f-passcode', device.next());
    await page.click('main button[type=submit]');
    await page.waitForURL(`${s.url}/`);
    assert.match((await page.textContent('header')) ?? '', /Sign out/);

    // Disabling asks first.
    await page.goto(`${s.url}${SECURITY}`);
    await page.click('text=Disable two-factor authentication >> nth=-1');
    await page.waitForURL(`${s.url}${SECURITY}`);
    assert.match((await page.textContent('.flash')) ?? '', /has been disabled/);
    assert.equal(await s.ctx.twoFactor.isEnrolled(u.id), false);
    assert.deepEqual(errors, [], 'no script errors or CSP refusals in the console');
    await context.close();
  });
});
