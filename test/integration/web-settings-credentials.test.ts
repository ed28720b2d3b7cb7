// A user's credentials in the web interface: /user/settings/applications (access tokens with
// scopes, shown once; OAuth2 applications: create, edit, new secret, delete) and
// /user/settings/keys (SSH keys; GPG keys added, verified by a signed token, deleted). Bad input
// answers 422 with the message beside its field and what was typed kept; another user's token, key
// or application is a 404; a form without its CSRF token is a 403. In Chromium: a token made on the
// page works on the API within its scopes, and an SSH key added on the page clones over SSH.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { startServer, type TestServer } from '../helpers/server.js';
import { makeKey, run } from '../helpers/ssh.js';
import { WebClient, accessibilityViolations, launchBrowser, screenshots } from '../helpers/web.js';
import { startSshServer, type RunningSshServer } from '../../src/ssh/server.js';

type User = { name: string; password: string; token: string; id: number };

const APPS = '/user/settings/applications';
const KEYS = '/user/settings/keys';

/** The text of the field error beside `name` (`f-<name>-error`), or undefined. */
function fieldError(html: string, id: string): string | undefined {
  const m = new RegExp(`id="f-${id}-error"[^>]*>([^<]*)<`).exec(html);
  return m?.[1];
}

/** The info flash of a page. */
const flashOf = (html: string) => /class="flash info"[^>]*>([^<]*)</.exec(html)?.[1] ?? '';

/** gpg in its own home, no prompts (keys without passphrase). */
function gpg(home: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'gpg',
      ['--batch', '--no-tty', ...args],
      { env: { PATH: process.env['PATH'], GNUPGHOME: home } },
      (err, stdout, stderr) =>
        err ? reject(new Error(`gpg ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    );
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(input ?? '');
  });
}

describe('web settings: tokens, OAuth2 applications, SSH and GPG keys', () => {
  let s: TestServer;
  let sshd: RunningSshServer;
  let browser: Browser;
  let home: string;
  let alice: User;
  let bob: User;
  const web = { alice: null as unknown as WebClient, bob: null as unknown as WebClient };

  before(async () => {
    s = await startServer();
    sshd = await startSshServer(s.ctx, { host: '127.0.0.1', port: 0 });
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-web-cred-'));
    alice = await s.createUser('alice');
    bob = await s.createUser('bob');
    for (const u of [alice, bob]) {
      const c = new WebClient(s.url);
      const r = await c.signIn(u.name, u.password);
      assert.equal(r.status, 303, r.text);
      web[u.name as 'alice' | 'bob'] = c;
    }
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await sshd?.close();
    await s?.close();
    if (home) fs.rmSync(home, { recursive: true, force: true });
  });

  async function createToken(c: WebClient, name: string, scope: string): Promise<string> {
    await c.get(APPS);
    const r = await c.post(APPS, { name, scope });
    assert.equal(r.status, 303, r.text);
    const page = await c.get(APPS);
    const token = /[0-9a-f]{40}/.exec(flashOf(page.text))?.[0];
    assert.ok(token, 'the new token is shown once');
    return token;
  }

  describe('access tokens', () => {
    it('signs in first', async () => {
      const r = await new WebClient(s.url).get(APPS);
      assert.equal(r.status, 303);
      assert.match(r.location ?? '', /^\/user\/login\?redirect_to=/);
    });

    it('refuses an empty name, a bad scope and no scope with 422 beside the field, keeping what was typed', async () => {
      const c = web.alice;
      await c.get(APPS);
      let r = await c.post(APPS, { name: '  ', scope: 'read:user' });
      assert.equal(r.status, 422);
      assert.match(fieldError(r.text, 'name') ?? '', /must not be empty/);
      assert.match(r.text, /<option value="read:user" selected/);

      r = await c.post(APPS, { name: 'bogus', scope: 'write:bogus' });
      assert.equal(r.status, 422);
      assert.match(fieldError(r.text, 'scope') ?? '', /Invalid access token scope provided: write:bogus/);
      assert.match(r.text, /id="f-name"[^>]*value="bogus"/);

      r = await c.post(APPS, { name: 'none' });
      assert.equal(r.status, 422);
      assert.match(fieldError(r.text, 'scope') ?? '', /at least one permission/);

      r = await c.post(APPS, { name: 'x'.repeat(256), scope: 'read:user' });
      assert.equal(r.status, 422);
      assert.match(fieldError(r.text, 'name') ?? '', /at most 255/);

      const list = await s.api<unknown[]>('GET', `/users/alice/tokens`, { basic: ['alice', alice.password] });
      assert.equal(list.body.length, 1, 'only the token createUser made');
    });

    it('creates a token shown once, refuses its name again, and deletes it', async () => {
      const c = web.alice;
      const token = await createToken(c, 'deploy', 'read:user');
      const me = await s.api<{ login: string }>('GET', '/user', { token });
      assert.equal(me.status, 200);
      assert.equal(me.body.login, 'alice');
      // Shown once: the next page has no token.
      const again = await c.get(APPS);
      assert.doesNotMatch(again.text, new RegExp(token));
      assert.match(again.text, /deploy/);
      assert.match(again.text, /read:user/);

      const taken = await c.post(APPS, { name: 'deploy', scope: 'read:repository' });
      assert.equal(taken.status, 422);
      assert.match(fieldError(taken.text, 'name') ?? '', /already exists/);

      const id = /name="id" value="(\d+)"/.exec(again.text.slice(again.text.indexOf('deploy')))?.[1];
      assert.ok(id);
      // Bob cannot delete it: not found for him.
      await web.bob.get(APPS);
      const denied = await web.bob.post(`${APPS}/delete`, { id });
      assert.equal(denied.status, 404);
      assert.equal((await s.api('GET', '/user', { token })).status, 200);
      // Without the CSRF token: refused, still there.
      const forged = await c.post(`${APPS}/delete`, { id, _csrf: null });
      assert.equal(forged.status, 403);
      assert.equal((await s.api('GET', '/user', { token })).status, 200);

      const del = await c.post(`${APPS}/delete`, { id });
      assert.equal(del.status, 303);
      assert.equal((await s.api('GET', '/user', { token })).status, 401);
    });

    it('refuses a token form without its CSRF token (403) and creates nothing', async () => {
      const c = web.alice;
      await c.get(APPS);
      const r = await c.post(APPS, { name: 'forged', scope: 'all', _csrf: null });
      assert.equal(r.status, 403);
      assert.doesNotMatch((await c.get(APPS)).text, /forged/);
    });
  });

  describe('OAuth2 applications', () => {
    it('refuses an empty name and a relative redirect URI (422), then creates, edits, renews and deletes', async () => {
      const c = web.alice;
      await c.get(APPS);
      let r = await c.post(`${APPS}/oauth2`, { application_name: '', redirect_uris: 'https://a.example/cb' });
      assert.equal(r.status, 422);
      assert.match(fieldError(r.text, 'application_name') ?? '', /must not be empty/);
      assert.match(r.text, /https:\/\/a\.example\/cb<\/textarea>/);

      r = await c.post(`${APPS}/oauth2`, { application_name: 'ci', redirect_uris: '/callback' });
      assert.equal(r.status, 422);
      assert.match(fieldError(r.text, 'redirect_uris') ?? '', /not an absolute URL/);

      r = await c.post(`${APPS}/oauth2`, {
        application_name: 'ci',
        redirect_uris: 'https://ci.example/cb\nhttp://127.0.0.1/cb',
        confidential_client: 'on',
      });
      assert.equal(r.status, 303, r.text);
      const edit = r.location!;
      assert.match(edit, /^\/user\/settings\/applications\/oauth2\/\d+$/);
      let page = await c.get(edit);
      assert.equal(page.status, 200);
      const secret = /gto_[A-Za-z0-9_-]+/.exec(flashOf(page.text))?.[0];
      assert.ok(secret, 'the client secret is shown once');
      assert.match(page.text, /id="client-id">[0-9a-f-]{36}</);
      assert.doesNotMatch((await c.get(edit)).text, new RegExp(secret));

      // Bob sees none of it.
      for (const [method, p] of [
        ['GET', edit],
        ['POST', `${edit}/regenerate_secret`],
        ['POST', `${edit}/delete`],
      ] as const) {
        await web.bob.get(APPS);
        const denied = method === 'GET' ? await web.bob.get(p) : await web.bob.post(p, {});
        assert.equal(denied.status, 404, `${method} ${p}`);
      }

      await c.get(edit);
      r = await c.post(edit, { application_name: 'ci', redirect_uris: 'nope' });
      assert.equal(r.status, 422);
      assert.match(fieldError(r.text, 'redirect_uris') ?? '', /not an absolute URL/);
      r = await c.post(edit, { application_name: 'ci 2', redirect_uris: 'https://ci.example/new' });
      assert.equal(r.status, 303);
      page = await c.get(edit);
      assert.match(page.text, /value="ci 2"/);
      assert.match(page.text, /https:\/\/ci\.example\/new<\/textarea>/);

      r = await c.post(`${edit}/regenerate_secret`, {});
      assert.equal(r.status, 303);
      page = await c.get(edit);
      const renewed = /gto_[A-Za-z0-9_-]+/.exec(flashOf(page.text))?.[0];
      assert.ok(renewed);
      assert.notEqual(renewed, secret);

      r = await c.post(`${edit}/delete`, {});
      assert.equal(r.status, 303);
      assert.equal((await c.get(edit)).status, 404);
    });
  });

  describe('SSH and GPG keys', () => {
    it('refuses bad key text, an empty title and a key already added (422 beside the field)', async () => {
      const key = await makeKey(home, 'dup');
      const c = web.alice;
      await c.get(KEYS);
      let r = await c.post(KEYS, { type: 'ssh', title: 'laptop', content: 'ssh-ed25519 not-base64!' });
      assert.equal(r.status, 422);
      assert.ok(fieldError(r.text, 'content'), 'message beside the key');
      assert.match(r.text, /id="f-title"[^>]*value="laptop"/);

      r = await c.post(KEYS, { type: 'ssh', title: '', content: key.pub });
      assert.equal(r.status, 422);
      assert.match(fieldError(r.text, 'title') ?? '', /must not be empty/);

      r = await c.post(KEYS, { type: 'ssh', title: 'laptop', content: key.pub });
      assert.equal(r.status, 303, r.text);
      let page = await c.get(KEYS);
      assert.match(page.text, new RegExp(key.fingerprint.replace(/[+/]/g, '\\$&')));
      assert.match(page.text, /Never used/);

      // Bob cannot add it again.
      await web.bob.get(KEYS);
      r = await web.bob.post(KEYS, { type: 'ssh', title: 'mine', content: key.pub });
      assert.equal(r.status, 422);
      assert.match(fieldError(r.text, 'content') ?? '', /already been added/);

      // Verified by signing the token with it (ssh-keygen -Y sign -n gitea).
      const id = /delete\?type=ssh"[\s\S]*?name="id" value="(\d+)"/.exec(page.text)?.[1];
      assert.ok(id);
      assert.match(page.text, /Not verified/);
      const token = /class="verify-token">([0-9a-f]+)</.exec(page.text)?.[1];
      assert.ok(token);
      const sign = async (text: string) => {
        const out = await run('ssh-keygen', ['-Y', 'sign', '-n', 'gitea', '-f', key.file], { input: text });
        assert.equal(out.code, 0, out.stderr);
        return out.stdout;
      };
      r = await c.post(KEYS, {
        type: 'verify_ssh',
        fingerprint: key.fingerprint,
        signature: await sign('other'),
      });
      assert.equal(r.status, 422);
      assert.match(fieldError(r.text, `verify-ssh-${id}`) ?? '', /does not match/);
      const good = await sign(token);
      r = await web.bob.post(KEYS, { type: 'verify_ssh', fingerprint: key.fingerprint, signature: good });
      assert.equal(r.status, 404, 'not his key');
      r = await c.post(KEYS, { type: 'verify_ssh', fingerprint: key.fingerprint, signature: good });
      assert.equal(r.status, 303, r.text);
      assert.match((await c.get(KEYS)).text, /class="pill verified">Verified</);

      // Bob cannot delete it.
      r = await web.bob.post(`${KEYS}/delete?type=ssh`, { id });
      assert.equal(r.status, 404);
      page = await c.get(KEYS);
      r = await c.post(`${KEYS}/delete?type=ssh`, { id, _csrf: null });
      assert.equal(r.status, 403);
      assert.equal((await s.api<unknown[]>('GET', '/user/keys', { token: alice.token })).body.length, 1);
      r = await c.post(`${KEYS}/delete?type=ssh`, { id });
      assert.equal(r.status, 303);
      assert.equal((await s.api<unknown[]>('GET', '/user/keys', { token: alice.token })).body.length, 0);
    });

    it('adds a GPG key, verifies it with the signed token, and only its owner deletes it', async () => {
      const gnupg = fs.mkdtempSync(path.join(os.tmpdir(), 'gpg-'));
      fs.chmodSync(gnupg, 0o700);
      try {
        await gpg(gnupg, [
          '--passphrase',
          '',
          '--quick-gen-key',
          'Alice <alice@example.com>',
          'ed25519',
          'sign',
        ]);
        const colons = await gpg(gnupg, ['--with-colons', '--list-keys', 'alice@example.com']);
        const keyId = colons
          .split('\n')
          .find((l) => l.startsWith('pub:'))!
          .split(':')[4]!;
        const armored = await gpg(gnupg, ['--armor', '--export', keyId]);
        const c = web.alice;
        await c.get(KEYS);
        let r = await c.post(KEYS, { type: 'gpg', content: 'not a key' });
        assert.equal(r.status, 422);
        assert.match(fieldError(r.text, 'gpg-content') ?? '', /GPG key/);

        r = await c.post(KEYS, { type: 'gpg', content: armored });
        assert.equal(r.status, 303, r.text);
        let page = await c.get(KEYS);
        assert.match(page.text, new RegExp(keyId));
        assert.match(page.text, /alice@example\.com/);
        assert.match(page.text, /Not verified/);

        const token = /class="verify-token">([0-9a-f]+)</.exec(page.text)?.[1];
        assert.ok(token);
        const wrong = await gpg(gnupg, ['--armor', '--detach-sign', '-u', keyId], 'not the token');
        r = await c.post(KEYS, { type: 'verify_gpg', key_id: keyId, signature: wrong });
        assert.equal(r.status, 422);
        assert.match(r.text, /do not match/);
        const sig = await gpg(gnupg, ['--armor', '--detach-sign', '-u', keyId], token);
        r = await c.post(KEYS, { type: 'verify_gpg', key_id: keyId, signature: sig });
        assert.equal(r.status, 303, r.text);
        page = await c.get(KEYS);
        assert.match(page.text, /class="pill verified">Verified</);

        const id = /delete\?type=gpg"[\s\S]*?name="id" value="(\d+)"/.exec(page.text)?.[1];
        assert.ok(id);
        await web.bob.get(KEYS);
        r = await web.bob.post(`${KEYS}/delete?type=gpg`, { id });
        assert.equal(r.status, 404);
        r = await c.post(`${KEYS}/delete?type=gpg`, { id });
        assert.equal(r.status, 303);
        assert.doesNotMatch((await c.get(KEYS)).text, new RegExp(keyId));
      } finally {
        fs.rmSync(gnupg, { recursive: true, force: true });
      }
    });
  });

  describe('in a browser', () => {
    it('makes a token on the applications page that works on the API within its scopes', async () => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      page.on('dialog', (d) => void d.accept());
      await page.goto(`${s.url}/user/login`);
      await page.fill('#f-user_name', 'bob');
      await page.fill('#f-password', bob.password);
      await page.click('main button[type=submit]');
      await page.waitForURL(`${s.url}/`);

      await page.goto(`${s.url}${APPS}`);
      assert.equal(await page.title(), 'Applications - Anvil');
      await page.fill('#f-name', 'from the browser');
      await page.selectOption('#f-scope-user', 'read:user');
      assert.deepEqual(await accessibilityViolations(page), []);
      await page.click('button:has-text("Generate token")');
      await page.waitForURL(`${s.url}${APPS}`);
      const token = /[0-9a-f]{40}/.exec((await page.textContent('.flash.info')) ?? '')?.[0];
      assert.ok(token);
      assert.deepEqual(await accessibilityViolations(page), []);
      await screenshots(page, 'settings-applications');

      const me = await s.api<{ login: string }>('GET', '/user', { token });
      assert.equal(me.status, 200);
      assert.equal(me.body.login, 'bob');
      const lacking = await s.api('GET', '/notifications', { token });
      assert.equal(lacking.status, 403, 'a scope the token lacks is refused');

      // A bad form in the browser: the message beside the field.
      await page.fill('#f-name', 'from the browser');
      await page.selectOption('#f-scope-repository', 'write:repository');
      await page.click('button:has-text("Generate token")');
      assert.match((await page.textContent('#f-name-error')) ?? '', /already exists/);
      assert.deepEqual(await accessibilityViolations(page), []);
      await screenshots(page, 'settings-applications-error');

      // Deleting asks first (the dialog is accepted above).
      await page.goto(`${s.url}${APPS}`);
      await page.click('.credential-list li:has-text("from the browser") button.danger');
      await page.waitForURL(`${s.url}${APPS}`);
      assert.match((await page.textContent('.flash.info')) ?? '', /deleted/);
      assert.equal((await s.api('GET', '/user', { token })).status, 401);
      await context.close();
    });

    it('adds an SSH key on the keys page and clones over SSH with it', async () => {
      const key = await makeKey(home, 'browser');
      const repo = await s.api('POST', '/user/repos', {
        token: bob.token,
        body: { name: 'secret', private: true, auto_init: true },
      });
      assert.equal(repo.status, 201, repo.text);
      const sshCommand =
        `ssh -i ${key.file} -o IdentitiesOnly=yes -o StrictHostKeyChecking=no ` +
        `-o UserKnownHostsFile=/dev/null -o LogLevel=DEBUG1 -o BatchMode=yes -o ConnectTimeout=30 ` +
        `-p ${sshd.port}`;
      // A clone that hangs is killed after a minute and fails with the client's own account of it
      // (the last lines of ssh's debug output), instead of holding the file until its timeout.
      const clone = async (dir: string) => {
        const r = await run('git', ['clone', `ssh://git@127.0.0.1:${sshd.port}/bob/secret.git`, dir], {
          cwd: home,
          env: { PATH: process.env['PATH'], HOME: home, LANG: 'C', GIT_SSH_COMMAND: sshCommand },
          limitMs: 60_000,
        });
        return { code: r.code, stderr: r.stderr.split('\n').slice(-40).join('\n') };
      };
      const before = await clone(path.join(home, 'before'));
      assert.notEqual(before.code, 0, 'an unknown key clones nothing');
      assert.match(before.stderr, /Permission denied/, before.stderr);

      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      await page.goto(`${s.url}/user/login`);
      await page.fill('#f-user_name', 'bob');
      await page.fill('#f-password', bob.password);
      await page.click('main button[type=submit]');
      await page.waitForURL(`${s.url}/`);
      await page.goto(`${s.url}${KEYS}`);
      assert.equal(await page.title(), 'SSH / GPG keys - Anvil');
      await page.fill('#f-title', 'browser laptop');
      await page.fill('#f-content', key.pub);
      await page.click('form:has(input[name=type][value=ssh]) button[type=submit]');
      await page.waitForURL(`${s.url}${KEYS}`);
      assert.match((await page.textContent('.flash.info')) ?? '', /has been added/);
      assert.ok(((await page.textContent('.credential-list')) ?? '').includes(key.fingerprint));
      assert.deepEqual(await accessibilityViolations(page), []);
      await screenshots(page, 'settings-keys');
      // The verification form (sign the token with the key) opens in place.
      await page.click('.credential-list summary:has-text("Verify")');
      assert.ok(await page.isVisible('.credential-list textarea[name=signature]'));
      assert.deepEqual(await accessibilityViolations(page), []);
      await screenshots(page, 'settings-keys-verify');

      const cloned = await clone(path.join(home, 'after'));
      assert.equal(cloned.code, 0, cloned.stderr);
      assert.ok(fs.existsSync(path.join(home, 'after', 'README.md')));
      await page.reload();
      assert.match((await page.textContent('.credential-list')) ?? '', /Last used on/);
      await context.close();
    });
  });
});
