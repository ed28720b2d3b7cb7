// Configuration loading: defaults, the INI file, ANVIL__SECTION__KEY overrides, validation and the
// SECRET_KEY generated on first start. Pure: temp directories only, never process.env.
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  loadConfig,
  ConfigError,
  DEFAULT_PASSWORD_HASH,
  editDistance,
  readIni,
} from '../../src/config/config.js';
import { configurePasswordHashing, hashPassword, verifyPassword } from '../../src/auth/password.js';
import { mysqlConnection } from '../../src/db/mysql.js';

const dirs: string[] = [];
function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-config-'));
  dirs.push(d);
  return d;
}
after(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function write(file: string, text: string): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  return file;
}

/** Asserts that loading fails with a ConfigError whose message names `key`. */
function assertConfigError(fn: () => unknown, key: RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${String(err)}`);
    assert.match(err.message, key);
    return true;
  });
}

describe('config defaults', () => {
  it('has Forgejo-like defaults when there is no file and no environment', () => {
    const cwd = tmp();
    const c = loadConfig({ env: {}, cwd });
    assert.equal(c.configPath, null);
    assert.equal(c.server.httpPort, 3000);
    assert.equal(c.server.httpAddr, '0.0.0.0');
    assert.equal(c.server.rootUrl, 'http://localhost:3000/');
    assert.equal(c.server.appDataPath, path.join(cwd, 'data'));
    assert.equal(c.database.type, 'sqlite3');
    assert.equal(c.database.path, path.join(cwd, 'data', 'anvil.db'));
    assert.equal(c.api.defaultPagingNum, 30);
    assert.equal(c.api.maxResponseItems, 50);
    assert.equal(c.service.enableReverseProxyAuthenticationApi, false);
    assert.equal(c.actions.enabled, false);
    assert.equal(c.quota.enabled, true);
    assert.equal(c.security.secretKey, '');
    assert.equal(c.repository.root, path.join(cwd, 'data', 'repositories'));
  });

  it('does not write anything unless asked to persist a secret key', () => {
    const cwd = tmp();
    loadConfig({ env: {}, cwd });
    assert.deepEqual(fs.readdirSync(cwd), []);
  });
});

describe('config file', () => {
  it('reads an INI file given with configPath, relative to cwd', () => {
    const cwd = tmp();
    write(
      path.join(cwd, 'conf', 'app.ini'),
      [
        '; Anvil configuration',
        'APP_NAME = Test',
        '[server]',
        'HTTP_PORT = 4000',
        'HTTP_ADDR = 127.0.0.1',
        'APP_DATA_PATH = /srv/anvil',
        '',
        '[database]',
        'DB_TYPE = postgres',
        'HOST = db.example.com:5433',
        'NAME = forge',
        '',
        '[api]',
        'DEFAULT_PAGING_NUM = 10',
        'MAX_RESPONSE_ITEMS = 20',
        '',
        '# a comment',
        '[actions]',
        'ENABLED = true',
        '[quota]',
        'ENABLED = false',
        '[service]',
        'ENABLE_REVERSE_PROXY_AUTHENTICATION_API = true',
        '',
      ].join('\n'),
    );
    const c = loadConfig({ configPath: 'conf/app.ini', env: {}, cwd });
    assert.equal(c.configPath, path.join(cwd, 'conf', 'app.ini'));
    assert.equal(c.server.httpPort, 4000);
    assert.equal(c.server.httpAddr, '127.0.0.1');
    assert.equal(c.server.appDataPath, '/srv/anvil');
    assert.equal(c.server.rootUrl, 'http://localhost:4000/', 'the default ROOT_URL follows HTTP_PORT');
    assert.equal(c.database.type, 'postgres');
    assert.equal(c.database.host, 'db.example.com:5433');
    assert.equal(c.database.name, 'forge');
    assert.equal(c.database.path, '/srv/anvil/anvil.db', 'the database file lives in APP_DATA_PATH');
    assert.equal(c.api.defaultPagingNum, 10);
    assert.equal(c.api.maxResponseItems, 20);
    assert.equal(c.actions.enabled, true);
    assert.equal(c.quota.enabled, false);
    assert.equal(c.service.enableReverseProxyAuthenticationApi, true);
  });

  it('treats section names and keys case-insensitively', () => {
    const cwd = tmp();
    const file = write(
      path.join(cwd, 'app.ini'),
      '[Server]\nhttp_port = 4100\n[DATABASE]\nDB_TYPE = SQLite3\n',
    );
    const c = loadConfig({ configPath: file, env: {}, cwd });
    assert.equal(c.server.httpPort, 4100);
    assert.equal(c.database.type, 'sqlite3');
  });

  it('lets ANVIL__SECTION__KEY override the file, whatever the case of the section', () => {
    const cwd = tmp();
    const file = write(
      path.join(cwd, 'app.ini'),
      '[server]\nHTTP_PORT = 4000\nHTTP_ADDR = 127.0.0.1\n[actions]\nENABLED = false\n',
    );
    const c = loadConfig({
      configPath: file,
      env: {
        ANVIL__server__HTTP_PORT: '5000',
        ANVIL__Actions__ENABLED: 'true',
        ANVIL__API__MAX_RESPONSE_ITEMS: '70',
        OTHER__SERVER__HTTP_ADDR: '10.0.0.1',
      },
      cwd,
    });
    assert.equal(c.server.httpPort, 5000);
    assert.equal(c.actions.enabled, true);
    assert.equal(c.api.maxResponseItems, 70);
    assert.equal(c.server.httpAddr, '127.0.0.1', 'unrelated variables are ignored');
  });

  it('picks up APP_DATA_PATH/app.ini by default when present', () => {
    const cwd = tmp();
    write(path.join(cwd, 'data', 'app.ini'), '[server]\nHTTP_PORT = 4200\n');
    const c = loadConfig({ env: {}, cwd });
    assert.equal(c.configPath, path.join(cwd, 'data', 'app.ini'));
    assert.equal(c.server.httpPort, 4200);

    const elsewhere = tmp();
    write(path.join(elsewhere, 'app.ini'), '[server]\nHTTP_PORT = 4300\n');
    const d = loadConfig({ env: { ANVIL__SERVER__APP_DATA_PATH: elsewhere }, cwd });
    assert.equal(d.configPath, path.join(elsewhere, 'app.ini'));
    assert.equal(d.server.httpPort, 4300);
    assert.equal(d.server.appDataPath, elsewhere);
  });

  it('treats an empty APP_DATA_PATH variable as the default data directory', () => {
    const cwd = tmp();
    write(path.join(cwd, 'data', 'app.ini'), '[server]\nHTTP_PORT = 4250\n');
    const c = loadConfig({ env: { ANVIL__SERVER__APP_DATA_PATH: '' }, cwd });
    assert.equal(c.configPath, path.join(cwd, 'data', 'app.ini'));
    assert.equal(c.server.httpPort, 4250);
  });

  it('fails when --config points to a missing file', () => {
    const cwd = tmp();
    assertConfigError(
      () => loadConfig({ configPath: 'nope.ini', env: {}, cwd }),
      /nope\.ini.*does not exist/,
    );
  });

  it('appends a trailing slash to ROOT_URL', () => {
    const cwd = tmp();
    const c = loadConfig({ env: { ANVIL__SERVER__ROOT_URL: 'https://git.example.com/forge' }, cwd });
    assert.equal(c.server.rootUrl, 'https://git.example.com/forge/');
    const d = loadConfig({ env: { ANVIL__SERVER__ROOT_URL: 'https://git.example.com/' }, cwd });
    assert.equal(d.server.rootUrl, 'https://git.example.com/');
  });

  it('caps DEFAULT_PAGING_NUM at MAX_RESPONSE_ITEMS', () => {
    const c = loadConfig({
      env: { ANVIL__API__DEFAULT_PAGING_NUM: '80', ANVIL__API__MAX_RESPONSE_ITEMS: '40' },
      cwd: tmp(),
    });
    assert.equal(c.api.defaultPagingNum, 40);
    assert.equal(c.api.maxResponseItems, 40);
  });
});

describe('config validation', () => {
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    ['HTTP_PORT=abc', { ANVIL__SERVER__HTTP_PORT: 'abc' }, /\[server\] HTTP_PORT/],
    ['HTTP_PORT=70000', { ANVIL__SERVER__HTTP_PORT: '70000' }, /\[server\] HTTP_PORT/],
    ['HTTP_PORT=3.5', { ANVIL__SERVER__HTTP_PORT: '3.5' }, /\[server\] HTTP_PORT/],
    ['DB_TYPE=mssql', { ANVIL__DATABASE__DB_TYPE: 'mssql' }, /\[database\] DB_TYPE.*mssql/],
    [
      'CHARSET=latin1',
      { ANVIL__DATABASE__DB_TYPE: 'mysql', ANVIL__DATABASE__CHARSET: 'latin1' },
      /\[database\] CHARSET.*latin1/,
    ],
    ['[actions] ENABLED=maybe', { ANVIL__ACTIONS__ENABLED: 'maybe' }, /\[actions\] ENABLED.*maybe/],
    ['[quota] ENABLED=maybe', { ANVIL__QUOTA__ENABLED: 'maybe' }, /\[quota\] ENABLED/],
    ['ROOT_URL=ftp://x', { ANVIL__SERVER__ROOT_URL: 'ftp://x' }, /\[server\] ROOT_URL.*ftp:\/\/x/],
    ['ROOT_URL=not a url', { ANVIL__SERVER__ROOT_URL: 'not a url' }, /\[server\] ROOT_URL/],
    ['DEFAULT_PAGING_NUM=0', { ANVIL__API__DEFAULT_PAGING_NUM: '0' }, /\[api\] DEFAULT_PAGING_NUM/],
    ['[log] LEVEL=loud', { ANVIL__LOG__LEVEL: 'loud' }, /\[log\] LEVEL/],
    [
      'DEFAULT_ACTIONS_URL=gitlab',
      { ANVIL__ACTIONS__DEFAULT_ACTIONS_URL: 'gitlab' },
      /\[actions\] DEFAULT_ACTIONS_URL.*gitlab/,
    ],
  ];
  for (const [label, env, key] of cases) {
    it(`stops start-up on ${label} with a ConfigError naming the key`, () => {
      assertConfigError(() => loadConfig({ env, cwd: tmp() }), key);
    });
  }

  it('resolves [actions] DEFAULT_ACTIONS_URL as Forgejo does (github, self or a URL)', () => {
    const url = (v?: string) =>
      loadConfig({
        env: {
          ANVIL__SERVER__ROOT_URL: 'https://forge.example.com/sub/',
          ...(v === undefined ? {} : { ANVIL__ACTIONS__DEFAULT_ACTIONS_URL: v }),
        },
        cwd: tmp(),
      }).actions.defaultActionsUrl;
    assert.equal(url(), 'https://data.forgejo.org');
    assert.equal(url('github'), 'https://github.com');
    assert.equal(url('self'), 'https://forge.example.com/sub');
    assert.equal(url('http://mirror.local:3000/'), 'http://mirror.local:3000');
  });

  it('reports invalid values from the file as well', () => {
    const cwd = tmp();
    const file = write(path.join(cwd, 'app.ini'), '[server]\nHTTP_PORT = abc\n');
    assertConfigError(() => loadConfig({ configPath: file, env: {}, cwd }), /\[server\] HTTP_PORT.*abc/);
  });

  it('accepts the boolean spellings and the database aliases', () => {
    for (const v of ['true', 'TRUE', '1', 'yes', 'on']) {
      assert.equal(loadConfig({ env: { ANVIL__ACTIONS__ENABLED: v }, cwd: tmp() }).actions.enabled, true);
    }
    for (const v of ['false', '0', 'no', 'off']) {
      assert.equal(loadConfig({ env: { ANVIL__QUOTA__ENABLED: v }, cwd: tmp() }).quota.enabled, false);
    }
    for (const v of ['postgres', 'postgresql', 'Postgres']) {
      assert.equal(
        loadConfig({ env: { ANVIL__DATABASE__DB_TYPE: v }, cwd: tmp() }).database.type,
        'postgres',
      );
    }
    assert.equal(
      loadConfig({ env: { ANVIL__DATABASE__DB_TYPE: 'sqlite' }, cwd: tmp() }).database.type,
      'sqlite3',
    );
  });

  it('reads MySQL with its own defaults: port 3306, user root, utf8mb4', () => {
    for (const v of ['mysql', 'MySQL', 'mariadb']) {
      const db = loadConfig({ env: { ANVIL__DATABASE__DB_TYPE: v }, cwd: tmp() }).database;
      assert.deepEqual(
        [db.type, db.host, db.user, db.charset],
        ['mysql', '127.0.0.1:3306', 'root', 'utf8mb4'],
      );
    }
    const pgDb = loadConfig({ env: { ANVIL__DATABASE__DB_TYPE: 'postgres' }, cwd: tmp() }).database;
    assert.deepEqual([pgDb.host, pgDb.user], ['127.0.0.1:5432', 'postgres']);
    const set = loadConfig({
      env: {
        ANVIL__DATABASE__DB_TYPE: 'mysql',
        ANVIL__DATABASE__HOST: 'db.example:3307',
        ANVIL__DATABASE__USER: 'anvil',
        ANVIL__DATABASE__PASSWD: 'pw',
        ANVIL__DATABASE__CHARSET: 'utf8',
        ANVIL__DATABASE__SSL_MODE: 'require',
      },
      cwd: tmp(),
    }).database;
    const options = mysqlConnection(set);
    assert.equal(options.host, 'db.example');
    assert.equal(options.port, 3307);
    assert.equal(options.user, 'anvil');
    assert.equal(options.password, 'pw');
    assert.equal(options.charset, 'UTF8_BIN');
    assert.deepEqual(options.ssl, { rejectUnauthorized: false });
  });
});

describe('SECRET_KEY on first start', () => {
  const keyLines = (text: string) => text.split('\n').filter((l) => /^\s*SECRET_KEY\s*=/.test(l));

  it('is generated and written into the config file in use, keeping its content and comments', () => {
    const cwd = tmp();
    const original = '; Anvil configuration\n# keep me\n[server]\nHTTP_PORT = 4000 ; the port\n';
    const file = write(path.join(cwd, 'custom.ini'), original);
    const first = loadConfig({ configPath: file, env: {}, cwd, persistSecretKey: true });
    assert.ok(first.security.secretKey.length >= 32, 'a long random key');
    assert.equal(first.configPath, file);
    const text = fs.readFileSync(file, 'utf8');
    assert.ok(text.startsWith(original), 'the existing content is kept as it was');
    assert.match(text, /\[security\]\nSECRET_KEY = \S+\n$/);
    assert.equal(keyLines(text).length, 1);

    const second = loadConfig({ configPath: file, env: {}, cwd, persistSecretKey: true });
    assert.equal(second.security.secretKey, first.security.secretKey);
    assert.equal(fs.readFileSync(file, 'utf8'), text, 'the second start does not rewrite the file');
    assert.equal(second.server.httpPort, 4000);
  });

  it('goes into an existing [security] section', () => {
    const cwd = tmp();
    const file = write(
      path.join(cwd, 'app.ini'),
      '[security]\n; trusted proxies\nREVERSE_PROXY_TRUSTED_PROXIES = 10.0.0.0/8\n[server]\nHTTP_PORT = 4000\n',
    );
    const first = loadConfig({ configPath: file, env: {}, cwd, persistSecretKey: true });
    const text = fs.readFileSync(file, 'utf8');
    assert.equal(keyLines(text).length, 1);
    assert.match(
      text,
      /; trusted proxies\nREVERSE_PROXY_TRUSTED_PROXIES = 10\.0\.0\.0\/8\n\[server\]\nHTTP_PORT = 4000\n$/,
    );
    const second = loadConfig({ configPath: file, env: {}, cwd });
    assert.equal(second.security.secretKey, first.security.secretKey);
    assert.deepEqual(second.security.reverseProxyTrustedProxies, ['10.0.0.0/8']);
  });

  it('fills an empty SECRET_KEY line (as in Forgejo sample files) and is stable across starts', () => {
    const cwd = tmp();
    const file = write(
      path.join(cwd, 'app.ini'),
      '; sample\n[server]\nHTTP_PORT = 4000\n\n[security]\nINSTALL_LOCK = true\nSECRET_KEY =\nINTERNAL_TOKEN =\n',
    );
    const first = loadConfig({ configPath: file, env: {}, cwd, persistSecretKey: true });
    const second = loadConfig({ configPath: file, env: {}, cwd, persistSecretKey: true });
    assert.equal(second.security.secretKey, first.security.secretKey);
    const text = fs.readFileSync(file, 'utf8');
    assert.equal(keyLines(text).length, 1);
    assert.equal(
      text,
      `; sample\n[server]\nHTTP_PORT = 4000\n\n[security]\nINSTALL_LOCK = true\nSECRET_KEY = ${first.security.secretKey}\nINTERNAL_TOKEN =\n`,
    );
  });

  it('creates APP_DATA_PATH/app.ini when there is no config file, which the next start reads', () => {
    const cwd = tmp();
    const first = loadConfig({ env: {}, cwd, persistSecretKey: true });
    const file = path.join(cwd, 'data', 'app.ini');
    assert.equal(first.configPath, file);
    assert.ok(fs.existsSync(file));
    assert.equal((fs.statSync(file).mode & 0o777).toString(8), '600', 'the secret is not world-readable');
    const second = loadConfig({ env: {}, cwd, persistSecretKey: true });
    assert.equal(second.configPath, file);
    assert.equal(second.security.secretKey, first.security.secretKey);

    const dataDir = path.join(tmp(), 'nested', 'data');
    const env = { ANVIL__SERVER__APP_DATA_PATH: dataDir };
    const third = loadConfig({ env, cwd, persistSecretKey: true });
    assert.equal(third.configPath, path.join(dataDir, 'app.ini'));
    assert.notEqual(third.security.secretKey, first.security.secretKey);
    assert.equal(loadConfig({ env, cwd }).security.secretKey, third.security.secretKey);
  });

  it('leaves a configured key alone and writes nothing', () => {
    const cwd = tmp();
    const text = '[security]\nSECRET_KEY = configured\n';
    const file = write(path.join(cwd, 'app.ini'), text);
    const c = loadConfig({ configPath: file, env: {}, cwd, persistSecretKey: true });
    assert.equal(c.security.secretKey, 'configured');
    assert.equal(fs.readFileSync(file, 'utf8'), text);

    const bare = tmp();
    const d = loadConfig({
      env: { ANVIL__SECURITY__SECRET_KEY: 'from-env' },
      cwd: bare,
      persistSecretKey: true,
    });
    assert.equal(d.security.secretKey, 'from-env');
    assert.deepEqual(fs.readdirSync(bare), []);
  });

  it('is a ConfigError naming SECRET_KEY when the key cannot be saved', () => {
    const cwd = tmp();
    const blocker = write(path.join(cwd, 'blocker'), 'a file, not a directory');
    assertConfigError(
      () =>
        loadConfig({
          env: { ANVIL__SERVER__APP_DATA_PATH: path.join(blocker, 'data') },
          cwd,
          persistSecretKey: true,
        }),
      /\[security\] SECRET_KEY/,
    );
  });
});

describe('INI sections', () => {
  it('keeps dotted section names as Forgejo writes them', () => {
    const file = write(
      path.join(tmp(), 'app.ini'),
      '[server]\nHTTP_PORT = 4000\n[repository.upload]\nENABLED = false\nFILE_MAX_SIZE = 3\n[storage.lfs]\nPATH = /x\n',
    );
    const raw = readIni(file);
    assert.deepEqual(raw['server'], { HTTP_PORT: '4000' });
    assert.deepEqual(raw['repository.upload'], { ENABLED: 'false', FILE_MAX_SIZE: '3' });
    assert.deepEqual(raw['storage.lfs'], { PATH: '/x' });
  });
});

describe('config warnings', () => {
  it('has none for a configuration that uses only keys Anvil reads', () => {
    const cwd = tmp();
    const file = write(path.join(cwd, 'app.ini'), '[server]\nHTTP_PORT = 4000\n[log]\nLEVEL = warn\n');
    const c = loadConfig({ configPath: file, env: { ANVIL__API__MAX_RESPONSE_ITEMS: '20' }, cwd });
    assert.deepEqual(c.warnings, []);
  });

  it('names a misspelled key or section of the file with the closest one Anvil reads', () => {
    const cwd = tmp();
    const file = write(
      path.join(cwd, 'app.ini'),
      [
        'APP_NAME = Forge',
        '[server]',
        'HTTP_PROT = 4000',
        'LFS_JWT_SECRET = x',
        '[securty]',
        'SECRET_KEY = s',
        '[ui]',
        'THEMES = dark',
        '[ui.meta]',
        'AUTHOR = me',
      ].join('\n'),
    );
    const c = loadConfig({ configPath: file, env: {}, cwd });
    assert.equal(c.server.httpPort, 3000, 'the misspelled key is not used');
    assert.deepEqual(c.warnings, [
      `APP_NAME (before the first section) in ${file} is not used by Anvil`,
      `[server] HTTP_PROT in ${file} is not used by Anvil (did you mean [server] HTTP_PORT?)`,
      `[server] LFS_JWT_SECRET in ${file} is not used by Anvil`,
      `[securty] in ${file} is not a section used by Anvil (did you mean [security]?)`,
      `[ui] THEMES in ${file} is not used by Anvil`,
      `[ui.meta] in ${file} is not a section used by Anvil`,
    ]);
  });

  it('names misspelled ANVIL__SECTION__KEY variables as variables', () => {
    const cwd = tmp();
    const c = loadConfig({
      env: {
        ANVIL__SERVER__HTTP_PROT: '4000',
        ANVIL__SECURTY__SECRET_KEY: 's',
        ANVIL__REPOSITORY_0X2E_RELEASE__ALLOWED_TYPE: '.zip',
        ANVIL__HTTP_PORT: '1',
        PATH: '/usr/bin',
      },
      cwd,
    });
    assert.deepEqual(c.warnings, [
      'ANVIL__SERVER__HTTP_PROT is not used by Anvil (did you mean ANVIL__SERVER__HTTP_PORT?)',
      'ANVIL__SECURTY__* is not a section used by Anvil (did you mean ANVIL__SECURITY__*?)',
      'ANVIL__REPOSITORY_0X2E_RELEASE__ALLOWED_TYPE is not used by Anvil ' +
        '(did you mean ANVIL__REPOSITORY_0X2E_RELEASE__ALLOWED_TYPES?)',
      'ANVIL__HTTP_PORT is not of the form ANVIL__SECTION__KEY and is ignored',
    ]);
  });

  it('measures closeness with a plain edit distance', () => {
    assert.equal(editDistance('HTTP_PROT', 'HTTP_PORT'), 2);
    assert.equal(editDistance('securty', 'security'), 1);
    assert.equal(editDistance('', 'abc'), 3);
    assert.equal(editDistance('same', 'same'), 0);
  });
});

describe('[security] PASSWORD_HASH_ALGO', () => {
  const load = (v: string) => loadConfig({ env: { ANVIL__SECURITY__PASSWORD_HASH_ALGO: v }, cwd: tmp() });

  it('is argon2id with OWASP parameters by default and for plain argon2', () => {
    assert.deepEqual(loadConfig({ env: {}, cwd: tmp() }).security.passwordHash, DEFAULT_PASSWORD_HASH);
    assert.deepEqual(load('argon2').security.passwordHash, DEFAULT_PASSWORD_HASH);
  });

  it("takes Forgejo's argon2$passes$memory$threads$keylen", () => {
    assert.deepEqual(load('argon2$3$65536$4$50').security.passwordHash, {
      timeCost: 3,
      memoryCost: 65536,
      parallelism: 4,
      hashLength: 50,
    });
  });

  it("warns of Forgejo's other algorithms and keeps argon2id", () => {
    const c = load('pbkdf2_hi');
    assert.deepEqual(c.security.passwordHash, DEFAULT_PASSWORD_HASH);
    assert.ok(
      c.warnings.some((w) => /PASSWORD_HASH_ALGO = pbkdf2_hi.*argon2id/.test(w)),
      c.warnings.join('\n'),
    );
  });

  for (const bad of [
    'md5',
    'argon2$0$65536$1$32',
    'argon2$2$4$1$32',
    'argon2$2$65536$1',
    'argon2$x$1$1$32',
  ]) {
    it(`stops start-up on ${bad}`, () => {
      assertConfigError(() => load(bad), /\[security\] PASSWORD_HASH_ALGO/);
    });
  }

  it('hashes with the configured parameters; older hashes still verify', async () => {
    const before = await hashPassword('pw-1');
    assert.match(before, /^\$argon2id\$v=19\$m=19456,p=1,t=2\$/);
    configurePasswordHashing(load('argon2$1$64$1$32').security.passwordHash);
    try {
      const cheap = await hashPassword('pw-2');
      assert.match(cheap, /^\$argon2id\$v=19\$m=64,p=1,t=1\$/);
      assert.equal(await verifyPassword(cheap, 'pw-2'), true);
      assert.equal(await verifyPassword(cheap, 'pw-1'), false);
      assert.equal(await verifyPassword(before, 'pw-1'), true);
    } finally {
      configurePasswordHashing(DEFAULT_PASSWORD_HASH);
    }
  });
});
