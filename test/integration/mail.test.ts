// Mail, caught by an SMTP server the test starts (smtp-server, parsed with mailparser): the
// forgotten password (in Chromium: mail, link, new password, sign in; the code works once and
// expires; an unknown address gets the same answer), e-mail confirmation of new accounts
// ([service] REGISTER_EMAIL_CONFIRM), notification mail with Forgejo's threading headers and each
// user's email_notifications_preference, and the queue: mail that could not be sent while one
// server ran (SMTP down) is sent once by the servers started next on the same data.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';
import { pino } from 'pino';
import type { Browser } from 'playwright-core';
import { freePort, startServer, type TestServer } from '../helpers/server.js';
import { WebClient, accessibilityViolations, launchBrowser, screenshots } from '../helpers/web.js';
import { waitFor } from '../helpers/git.js';
import { createContext } from '../../src/app/context.js';

/** A local SMTP server that keeps what it receives. */
class MailCatcher {
  readonly mails: ParsedMail[] = [];
  private server: SMTPServer | undefined;
  constructor(readonly port: number) {}

  async start(): Promise<void> {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      onData: (stream, _session, callback) => {
        simpleParser(stream)
          .then((m) => {
            this.mails.push(m);
            callback();
          })
          .catch((err: Error) => callback(err));
      },
    });
    await new Promise<void>((resolve) => this.server!.listen(this.port, '127.0.0.1', resolve));
  }

  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  to(address: string): ParsedMail[] {
    return this.mails.filter((m) => {
      const to = Array.isArray(m.to) ? m.to : m.to ? [m.to] : [];
      return to.some((a) => a.value.some((v) => v.address === address));
    });
  }

  /** Waits for the `n`th mail to `address` and returns it. */
  async next(address: string, n = 1): Promise<ParsedMail> {
    assert.ok(await waitFor(async () => this.to(address).length >= n, 15_000), `no mail #${n} to ${address}`);
    return this.to(address)[n - 1]!;
  }
}

const link = (m: ParsedMail, path: string) => {
  const found = new RegExp(`http://127\\.0\\.0\\.1:\\d+${path}\\?code=[A-Za-z0-9_.-]+`).exec(m.text ?? '');
  assert.ok(found, `a ${path} link in: ${m.text}`);
  return new URL(found[0]);
};

describe('mail', () => {
  let s: TestServer;
  let smtp: MailCatcher;
  let browser: Browser;
  before(async () => {
    smtp = new MailCatcher(await freePort());
    await smtp.start();
    s = await startServer({
      ANVIL__MAILER__ENABLED: 'true',
      ANVIL__MAILER__PROTOCOL: 'smtp',
      ANVIL__MAILER__SMTP_ADDR: '127.0.0.1',
      ANVIL__MAILER__SMTP_PORT: String(smtp.port),
      ANVIL__MAILER__FROM: 'Anvil <noreply@example.com>',
      ANVIL__MAILER__RETRY_DELAY: '1s',
      ANVIL__SERVICE__REGISTER_EMAIL_CONFIRM: 'true',
    });
    s.ctx.mailQueue.start();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await s.close();
    await smtp.stop();
  });

  it('forgot password in Chromium: mail, link, new password, sign in with it; other sessions end', async () => {
    const alice = await s.createUser('alice');
    // A session of alice's elsewhere, which the reset ends.
    const other = new WebClient(s.url);
    await other.get('/user/login');
    assert.equal((await other.signIn('alice', alice.password)).status, 303);
    assert.match((await other.get('/')).text, /alice/);

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${s.url}/user/login`);
    await page.click('text=Forgot password?');
    assert.equal(await page.title(), 'Forgot password - Anvil');
    assert.deepEqual(await accessibilityViolations(page), []);
    await page.fill('#f-email', 'alice@example.com');
    await page.click('main button[type=submit]');
    await page.waitForSelector('.flash.info');
    assert.match((await page.textContent('main')) ?? '', /If an account uses alice@example.com/);
    await screenshots(page, 'mail-forgot-password');

    const mail = await smtp.next('alice@example.com');
    assert.equal(mail.subject, 'Recover your account');
    assert.equal(mail.from?.value[0]?.address, 'noreply@example.com');
    const url = link(mail, '/user/recover_account');
    assert.match(mail.html || '', /href="http:\/\/127\.0\.0\.1:\d+\/user\/recover_account\?code=/);
    await page.goto(url.toString());
    assert.equal(await page.title(), 'Recover account - Anvil');
    assert.deepEqual(await accessibilityViolations(page), []);
    await page.fill('#f-password', 'brand-new-pass-1');
    await page.fill('#f-retype', 'brand-new-pass-1');
    await screenshots(page, 'mail-recover-account');
    await page.click('main button[type=submit]');
    await page.waitForURL(`${s.url}/user/login`);
    assert.match((await page.textContent('main')) ?? '', /Your password has been updated/);
    // Signing in with the new password.
    await page.fill('#f-user_name', 'alice');
    await page.fill('#f-password', 'brand-new-pass-1');
    await page.click('main button[type=submit]');
    await page.waitForURL(`${s.url}/`);
    assert.match((await page.textContent('header')) ?? '', /alice/);
    await context.close();

    // The other session ended; the old password no longer works, the new one does.
    assert.doesNotMatch((await other.get('/')).text, /Sign out/);
    const c = new WebClient(s.url);
    await c.get('/user/login');
    assert.equal((await c.signIn('alice', alice.password)).status, 401);
    assert.equal((await c.signIn('alice', 'brand-new-pass-1')).status, 303);

    // The code works once.
    const again = new WebClient(s.url);
    const reused = await again.get(url.pathname + url.search);
    assert.equal(reused.status, 400);
    assert.match(reused.text, /invalid or has expired/);
    const post = await again.post('/user/recover_account', {
      code: url.searchParams.get('code')!,
      password: 'third-pass-123',
      retype: 'third-pass-123',
    });
    assert.equal(post.status, 400);
  });

  it('the same answer for an unknown address; bad input 422; an expired or forged code is refused', async () => {
    await s.createUser('dora');
    const c = new WebClient(s.url);
    await c.get('/user/forgot_password');
    const known = await c.post('/user/forgot_password', { email: 'dora@example.com' });
    const unknown = await c.post('/user/forgot_password', { email: 'nobody@example.com' });
    assert.equal(known.status, 200);
    assert.equal(unknown.status, 200);
    const strip = (t: string, e: string) =>
      t.replaceAll(e, 'X').replace(/content="[^"]*"|value="[^"]{30,}"/g, '');
    assert.equal(strip(known.text, 'dora@example.com'), strip(unknown.text, 'nobody@example.com'));
    const mail = await smtp.next('dora@example.com');
    const rows = await s.ctx.db.selectFrom('mail_queue').select('recipient').execute();
    assert.equal(rows.filter((r) => r.recipient === 'nobody@example.com').length, 0);

    // Bad input: the message next to the field, what was typed kept.
    const empty = await c.post('/user/forgot_password', { email: '' });
    assert.equal(empty.status, 422);
    assert.match(empty.text, /class="field-error"[^>]*>Enter your email address/);
    const long = await c.post('/user/forgot_password', { email: `${'x'.repeat(300)}@example.com` });
    assert.equal(long.status, 422);
    assert.match(long.text, /at most 255 characters/);
    // CSRF missing: 403.
    assert.equal(
      (await c.post('/user/forgot_password', { email: 'dora@example.com', _csrf: null })).status,
      403,
    );

    const url = link(mail, '/user/recover_account');
    const code = url.searchParams.get('code')!;
    // A short password or a mismatch: 422, the code kept, the password unchanged.
    await c.get(url.pathname + url.search);
    const short = await c.post('/user/recover_account', { code, password: 'short', retype: 'short' });
    assert.equal(short.status, 422);
    assert.match(short.text, /at least 8 characters/);
    assert.ok(short.text.includes(`value="${code}"`));
    const mismatch = await c.post('/user/recover_account', {
      code,
      password: 'long-enough-1',
      retype: 'other-one-1',
    });
    assert.equal(mismatch.status, 422);
    assert.match(mismatch.text, /do not match/);
    // A forged code (its signature changed) and an expired one are refused.
    const forged = `${code.split('.')[0]}.${'A'.repeat(32)}`;
    assert.equal((await c.get(`/user/recover_account?code=${forged}`)).status, 400);
    await s.ctx.db.updateTable('mail_code').set({ expires_unix: 1 }).execute();
    const expired = await c.get(url.pathname + url.search);
    assert.equal(expired.status, 400);
    assert.match(expired.text, /invalid or has expired/);
    const dora = new WebClient(s.url);
    await dora.get('/user/login');
    assert.equal((await dora.signIn('dora', 'dora-password-1')).status, 303, 'the password is unchanged');
  });

  it('REGISTER_EMAIL_CONFIRM: sign-up makes an inactive account, the mailed link activates it once', async () => {
    const c = new WebClient(s.url);
    await c.get('/user/sign_up');
    const made = await c.post('/user/sign_up', {
      user_name: 'newbie',
      email: 'newbie@example.com',
      password: 'newbie-pass-1',
      retype: 'newbie-pass-1',
    });
    assert.equal(made.status, 303, made.text);
    assert.equal(made.location, '/user/activate');
    assert.equal(c.cookies.has('i_like_gitea'), false, 'not signed in');
    assert.match((await c.get('/user/activate')).text, /A confirmation mail was sent to newbie@example.com/);
    const user = await s.ctx.users.getByName('newbie');
    assert.equal(user?.is_active, 0);

    // Signing in before confirming says so.
    await c.get('/user/login');
    const early = await c.signIn('newbie', 'newbie-pass-1');
    assert.equal(early.status, 403);
    assert.match(early.text, /not activated yet/);

    // Resend: the same answer for any address (the resend limit keeps it at one mail here).
    await c.get('/user/activate');
    const resend = await c.post('/user/activate', { email: 'newbie@example.com' });
    assert.equal(resend.status, 200);
    assert.match(resend.text, /a new link is on its way/);
    assert.equal((await c.post('/user/activate', { email: '' })).status, 422);

    const mail = await smtp.next('newbie@example.com');
    assert.equal(mail.subject, 'Please activate your account');
    const url = link(mail, '/user/activate');
    const done = await c.get(url.pathname + url.search);
    assert.equal(done.status, 303);
    assert.match((await c.get('/')).text, /Your account newbie is now active/);
    assert.equal((await s.ctx.users.getByName('newbie'))?.is_active, 1);
    const twice = await new WebClient(s.url).get(url.pathname + url.search);
    assert.equal(twice.status, 400);
    const d = new WebClient(s.url);
    await d.get('/user/login');
    assert.equal((await d.signIn('newbie', 'newbie-pass-1')).status, 303);
  });

  it('a mention in a comment mails the mentioned with the thread headers; preferences; pulls, reviews, releases', async () => {
    const owner = await s.createUser('owen');
    const bob = await s.createUser('bob');
    const carol = await s.createUser('carol');
    const tok = (t: string) => ({ token: t });
    assert.equal(
      (await s.api('POST', '/user/repos', { ...tok(owner.token), body: { name: 'app', auto_init: true } }))
        .status,
      201,
    );
    assert.equal((await s.api('PUT', '/repos/owen/app/subscription', tok(carol.token))).status, 200);
    const issue = await s.api<{ number: number }>('POST', '/repos/owen/app/issues', {
      ...tok(owner.token),
      body: { title: 'Crash on start', body: 'It crashes.' },
    });
    assert.equal(issue.status, 201);
    // Carol watches the repository: she gets the new issue (enabled), the doer does not.
    const opened = await smtp.next('carol@example.com');
    assert.equal(opened.messageId, '<owen/app/issues/1@127.0.0.1>');
    assert.equal(opened.subject, '[owen/app] Crash on start (#1)');

    const comment = await s.api<{ id: number }>('POST', '/repos/owen/app/issues/1/comments', {
      ...tok(owner.token),
      body: { body: 'Hey @bob, can you look?' },
    });
    assert.equal(comment.status, 201);
    const m = await smtp.next('bob@example.com');
    assert.equal(m.messageId, `<owen/app/issues/1/comment/${comment.body.id}@127.0.0.1>`);
    assert.equal(m.inReplyTo, '<owen/app/issues/1@127.0.0.1>');
    assert.equal(m.references, '<owen/app/issues/1@127.0.0.1>');
    assert.equal(m.subject, 'Re: [owen/app] Crash on start (#1)');
    assert.match(
      m.headerLines.find((h) => h.key === 'list-id')?.line ?? '',
      /owen\/app <app\.owen\.127\.0\.0\.1>/,
    );
    assert.equal(m.headers.get('x-gitea-reason'), 'mention');
    assert.match(m.text ?? '', /Hey @bob, can you look\?/);
    assert.match(m.text ?? '', new RegExp(`/owen/app/issues/1#issuecomment-${comment.body.id}`));
    assert.match(m.html || '', /href="http:\/\/127\.0\.0\.1:\d+\/owen\/app\/issues\/1#issuecomment-/);
    assert.equal(smtp.to('owen@example.com').length, 0, 'never to the doer');

    const queued = async (to: string) =>
      (await s.ctx.db.selectFrom('mail_queue').select('id').where('recipient', '=', to).execute()).length;
    const comment2 = async (body: string) =>
      assert.equal(
        (await s.api('POST', '/repos/owen/app/issues/1/comments', { ...tok(owner.token), body: { body } }))
          .status,
        201,
      );
    // disabled: nothing, not even a mention.
    const carolRow = (await s.ctx.users.getByName('carol'))!;
    await s.ctx.users.updateSettings(carolRow, { emailNotificationsPreference: 'disabled' });
    const before = await queued('carol@example.com');
    await comment2('A plain comment.');
    await comment2('Now @carol is mentioned.');
    assert.equal(await queued('carol@example.com'), before);
    // onmention: only the mention.
    await s.ctx.users.updateSettings(carolRow, { emailNotificationsPreference: 'onmention' });
    await comment2('Another plain comment.');
    assert.equal(await queued('carol@example.com'), before);
    await comment2('Again @carol, please.');
    assert.equal(await queued('carol@example.com'), before + 1);
    const mention = await smtp.next('carol@example.com', before + 1);
    assert.match(mention.text ?? '', /Again @carol, please/);
    // A published release reaches the watchers who want all mail.
    await s.ctx.users.updateSettings(carolRow, { emailNotificationsPreference: 'enabled' });
    const rel = await s.api('POST', '/repos/owen/app/releases', {
      ...tok(owner.token),
      body: { tag_name: 'v1.0', name: 'First', body: 'Notes **here**' },
    });
    assert.equal(rel.status, 201, rel.text);
    const released = await smtp.next('carol@example.com', before + 2);
    assert.equal(released.subject, '[owen/app] First released');
    assert.match(released.text ?? '', /\/owen\/app\/releases\/tag\/v1\.0/);
    assert.match(released.html || '', /<strong>here<\/strong>/);
    // A pull request and its review: threads of their own under pulls/.
    const file = await s.api('POST', '/repos/owen/app/contents/fix.txt', {
      ...tok(owner.token),
      body: { content: Buffer.from('fix').toString('base64'), new_branch: 'fix' },
    });
    assert.equal(file.status, 201, file.text);
    const pr = await s.api<{ number: number }>('POST', '/repos/owen/app/pulls', {
      ...tok(owner.token),
      body: { head: 'fix', base: 'main', title: 'Fix the crash' },
    });
    assert.equal(pr.status, 201, pr.text);
    const prMail = await smtp.next('carol@example.com', before + 3);
    assert.equal(prMail.messageId, `<owen/app/pulls/${pr.body.number}@127.0.0.1>`);
    assert.equal(prMail.subject, `[owen/app] Fix the crash (PR #${pr.body.number})`);
    const review = await s.api('POST', `/repos/owen/app/pulls/${pr.body.number}/reviews`, {
      token: bob.token,
      body: { event: 'APPROVED', body: 'Looks good.' },
    });
    assert.equal(review.status, 200, review.text);
    const reviewMail = await smtp.next('carol@example.com', before + 4);
    assert.equal(reviewMail.inReplyTo, `<owen/app/pulls/${pr.body.number}@127.0.0.1>`);
    assert.match(reviewMail.text ?? '', /@bob approved pull request/);
    assert.match(reviewMail.text ?? '', /Looks good\./);
    // An unknown preference is refused.
    await assert.rejects(s.ctx.users.updateSettings(carolRow, { emailNotificationsPreference: 'sometimes' }));
  });

  it('asking too often from one address is refused (429)', async () => {
    const c = new WebClient(s.url);
    await c.get('/user/forgot_password');
    let status = 0;
    for (let i = 0; i < 12 && status !== 429; i++) {
      status = (await c.post('/user/forgot_password', { email: `someone${i}@example.com` })).status;
    }
    assert.equal(status, 429);
  });

  it('mail unsent while SMTP was down is sent once by the servers started next on the same data', async () => {
    const owner = await s.createUser('rita');
    await s.createUser('sam');
    assert.equal(
      (await s.api('POST', '/user/repos', { token: owner.token, body: { name: 'lib' } })).status,
      201,
    );
    await s.api('POST', '/repos/rita/lib/issues', { token: owner.token, body: { title: 'Later' } });
    await smtp.stop();
    const r = await s.api<{ id: number }>('POST', '/repos/rita/lib/issues/1/comments', {
      token: owner.token,
      body: { body: 'Ping @sam' },
    });
    assert.equal(r.status, 201);
    const row = async (db: typeof s.ctx.db) =>
      db
        .selectFrom('mail_queue')
        .select(['id', 'status', 'attempts', 'last_error'])
        .where('recipient', '=', 'sam@example.com')
        .executeTakeFirstOrThrow();
    assert.ok(await waitFor(async () => (await row(s.ctx.db)).attempts >= 1, 15_000), 'an attempt failed');
    assert.equal((await row(s.ctx.db)).status, 0);
    assert.notEqual((await row(s.ctx.db)).last_error, '');

    // The server stops; SMTP comes back; two servers start on the same data.
    await s.app.close();
    await s.ctx.close();
    Object.assign(s.ctx, { close: async () => undefined });
    Object.assign(s.app, { close: async () => undefined });
    await smtp.start();
    const ctx2 = await createContext(s.config, pino({ level: 'silent' }));
    const ctx3 = await createContext(s.config, pino({ level: 'silent' }));
    try {
      ctx2.mailQueue.start();
      ctx3.mailQueue.start();
      const got = await smtp.next('sam@example.com');
      assert.equal(got.inReplyTo, '<rita/lib/issues/1@127.0.0.1>');
      assert.ok(await waitFor(async () => (await row(ctx2.db)).status === 1));
      // Both workers have looked at the queue since: still one mail.
      await ctx2.mailQueue.stop();
      await ctx3.mailQueue.stop();
      assert.equal(smtp.to('sam@example.com').length, 1);
    } finally {
      await ctx2.close();
      await ctx3.close();
    }
  });
});
