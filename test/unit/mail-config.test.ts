// [mailer] as Forgejo names it (every key also ANVIL__MAILER__KEY), [service]
// REGISTER_EMAIL_CONFIRM and the code lifetimes, and the threading headers of notification mail.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { issueMail, threadId, type ThreadInfo } from '../../src/mail/compose.js';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-mail-config-'));

describe('[mailer] settings', () => {
  it('defaults: off, smtp on port 25, From on the ROOT_URL host', () => {
    const c = loadConfig({ env: { ANVIL__SERVER__ROOT_URL: 'https://code.example.com/' }, cwd: tmp() });
    assert.equal(c.mailer.enabled, false);
    assert.equal(c.mailer.protocol, 'smtp');
    assert.equal(c.mailer.smtpPort, 25);
    assert.equal(c.mailer.from, 'Anvil <noreply@code.example.com>');
    assert.equal(c.mailer.forceTrustServerCert, false);
    assert.equal(c.service.registerEmailConfirm, false);
    assert.equal(c.service.resetPasswdCodeLiveMinutes, 180);
    assert.deepEqual(c.warnings, []);
  });

  it('reads every key from app.ini, the protocol giving the default port', () => {
    const dir = tmp();
    fs.writeFileSync(
      path.join(dir, 'app.ini'),
      [
        '[mailer]',
        'ENABLED = true',
        'PROTOCOL = smtps',
        'SMTP_ADDR = mail.example.com',
        'USER = anvil',
        'PASSWD = s3cret-pass',
        'FROM = Forge <forge@example.com>',
        'SUBJECT_PREFIX = [forge] ',
        'SENDMAIL_PATH = /usr/sbin/sendmail',
        'FORCE_TRUST_SERVER_CERT = true',
        '[service]',
        'REGISTER_EMAIL_CONFIRM = true',
        'ACTIVE_CODE_LIVE_MINUTES = 30',
      ].join('\n'),
    );
    const c = loadConfig({ env: { ANVIL__SERVER__APP_DATA_PATH: dir }, cwd: dir });
    assert.equal(c.mailer.enabled, true);
    assert.equal(c.mailer.protocol, 'smtps');
    assert.equal(c.mailer.smtpAddr, 'mail.example.com');
    assert.equal(c.mailer.smtpPort, 465);
    assert.equal(c.mailer.user, 'anvil');
    assert.equal(c.mailer.passwd, 's3cret-pass');
    assert.equal(c.mailer.from, 'Forge <forge@example.com>');
    assert.equal(c.mailer.sendmailPath, '/usr/sbin/sendmail');
    assert.equal(c.mailer.forceTrustServerCert, true);
    assert.equal(c.service.registerEmailConfirm, true);
    assert.equal(c.service.activeCodeLiveMinutes, 30);
    assert.deepEqual(c.warnings, []);
  });

  it('takes ANVIL__MAILER__* from the environment; starttls is smtp+starttls on 587', () => {
    const c = loadConfig({
      env: {
        ANVIL__MAILER__ENABLED: 'true',
        ANVIL__MAILER__PROTOCOL: 'starttls',
        ANVIL__MAILER__SMTP_ADDR: '127.0.0.1',
        ANVIL__MAILER__PASSWD: 'env-secret',
      },
      cwd: tmp(),
    });
    assert.equal(c.mailer.protocol, 'smtp+starttls');
    assert.equal(c.mailer.smtpPort, 587);
    assert.equal(c.mailer.passwd, 'env-secret');
    const port = loadConfig({
      env: { ANVIL__MAILER__PROTOCOL: 'smtp+starttls', ANVIL__MAILER__SMTP_PORT: '2525' },
      cwd: tmp(),
    });
    assert.equal(port.mailer.smtpPort, 2525);
    assert.equal(
      loadConfig({ env: { ANVIL__MAILER__PROTOCOL: 'sendmail' }, cwd: tmp() }).mailer.protocol,
      'sendmail',
    );
  });

  it('refuses an unknown protocol, a bad port, and ENABLED without SMTP_ADDR, naming the key', () => {
    assert.throws(
      () => loadConfig({ env: { ANVIL__MAILER__PROTOCOL: 'pigeon' }, cwd: tmp() }),
      (e: unknown) => e instanceof ConfigError && /\[mailer\] PROTOCOL/.test(e.message),
    );
    assert.throws(
      () => loadConfig({ env: { ANVIL__MAILER__SMTP_PORT: '70000' }, cwd: tmp() }),
      (e: unknown) => e instanceof ConfigError && /\[mailer\] SMTP_PORT/.test(e.message),
    );
    assert.throws(
      () => loadConfig({ env: { ANVIL__MAILER__ENABLED: 'true' }, cwd: tmp() }),
      (e: unknown) => e instanceof ConfigError && /\[mailer\] SMTP_ADDR/.test(e.message),
    );
  });

  it('a misspelt key is warned of', () => {
    const c = loadConfig({ env: { ANVIL__MAILER__SMTP_ADDRESS: 'x' }, cwd: tmp() });
    assert.equal(c.warnings.length, 1);
    assert.match(c.warnings[0]!, /SMTP_ADDRESS/);
  });
});

describe('notification mail headers', () => {
  const thread: ThreadInfo = {
    owner: 'alice',
    repo: 'app',
    repoUrl: 'https://code.example.com/alice/app',
    index: 7,
    isPull: false,
    title: 'Broken <build>',
    url: 'https://code.example.com/alice/app/issues/7',
    domain: 'code.example.com',
  };
  const base = {
    thread,
    doer: { name: 'bob', display: 'Bob' },
    text: 'hello',
    bodyHtml: '<p>hello</p>',
    recipient: { name: 'carol', display: 'Carol', email: 'carol@example.com' },
    reason: 'subscribed',
    stamp: 1234,
  };

  it('the issue is the thread; a comment has its own Message-ID pointing to it', () => {
    assert.equal(threadId(thread), '<alice/app/issues/7@code.example.com>');
    const opened = issueMail({ ...base, action: 'new' });
    assert.equal(opened.headers['Message-ID'], '<alice/app/issues/7@code.example.com>');
    assert.equal(opened.subject, '[alice/app] Broken <build> (#7)');
    const comment = issueMail({ ...base, action: 'comment', commentId: 42 });
    assert.equal(comment.headers['Message-ID'], '<alice/app/issues/7/comment/42@code.example.com>');
    assert.equal(comment.headers['In-Reply-To'], '<alice/app/issues/7@code.example.com>');
    assert.equal(comment.headers['References'], '<alice/app/issues/7@code.example.com>');
    assert.equal(comment.headers['List-ID'], 'alice/app <app.alice.code.example.com>');
    assert.equal(comment.subject, 'Re: [alice/app] Broken <build> (#7)');
    assert.match(comment.text, /issues\/7#issuecomment-42/);
    assert.match(comment.html, /Broken &lt;build&gt;/);
    const pull = issueMail({ ...base, thread: { ...thread, isPull: true }, action: 'close' });
    assert.equal(pull.headers['Message-ID'], '<alice/app/pulls/7/close/1234@code.example.com>');
    assert.equal(pull.headers['References'], '<alice/app/pulls/7@code.example.com>');
  });
});
