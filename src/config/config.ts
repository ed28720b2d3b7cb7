// Configuration: an INI file in Forgejo's sections and keys, every key overridable from the
// environment as ANVIL__SECTION__KEY. Each key is declared once below with its type and default;
// an invalid value stops start-up with a message naming the key. The settings' types are in
// settings.ts, reading the sources (and which keys were never read) in reader.ts, the sections
// read as a group in sections.ts and storage.ts, and the generated secrets in secrets.ts.
import fs from 'node:fs';
import path from 'node:path';
import {
  ConfigError,
  Reader,
  envName,
  envSections,
  merge,
  readIni,
  unusedSettings,
  type Raw,
} from './reader.js';
import {
  readCluster,
  readMailer,
  readOAuth2,
  readPasswordHash,
  readSigning,
  readStorage,
} from './sections.js';
import { persistSecretKey, readInternalToken } from './secrets.js';
import type { Config, DbType } from './settings.js';

export type {
  Config,
  CronTask,
  DbType,
  MailerConfig,
  PasswordHashParams,
  Schedule,
  SigningConfig,
} from './settings.js';
export { DEFAULT_PASSWORD_HASH, nextRunIn } from './settings.js';
export { ConfigError, editDistance, readIni } from './reader.js';
export { ensureInternalToken } from './secrets.js';

export interface LoadOptions {
  /** Path given with --config. */
  configPath?: string | undefined;
  /** Environment to read ANVIL__SECTION__KEY overrides from (defaults to process.env). */
  env?: NodeJS.ProcessEnv;
  /** Working directory that relative paths resolve against (defaults to process.cwd()). */
  cwd?: string;
  /** Generate and persist [security] SECRET_KEY when absent (true for the server). */
  persistSecretKey?: boolean;
}

/** Forgejo's default [attachment] ALLOWED_TYPES. */
const DEFAULT_ATTACHMENT_TYPES =
  '.avif,.cpuprofile,.csv,.dmp,.docx,.fodg,.fodp,.fods,.fodt,.gif,.gz,.jpeg,.jpg,.json,.jsonc,.log,.md,.mov,' +
  '.mp4,.odf,.odg,.odp,.ods,.odt,.patch,.pdf,.png,.pptx,.svg,.tgz,.txt,.webm,.webp,.xls,.xlsx,.zip';

/** Where the configuration file is: --config, else APP_DATA_PATH/app.ini (./data/app.ini by default). */
function resolveConfigPath(opts: LoadOptions, env: NodeJS.ProcessEnv, cwd: string): string | null {
  if (opts.configPath) {
    const p = path.resolve(cwd, opts.configPath);
    if (!fs.existsSync(p)) throw new ConfigError(`config file ${p} does not exist`);
    return p;
  }
  const dataPath = envSections(env)['server']?.['APP_DATA_PATH']?.trim() || 'data';
  const p = path.resolve(cwd, dataPath, 'app.ini');
  return fs.existsSync(p) ? p : null;
}

/**
 * [actions] DEFAULT_ACTIONS_URL as an absolute URL without a trailing slash, as Forgejo resolves
 * it: `github` is https://github.com, `self` this instance's ROOT_URL, anything else an http(s) URL.
 */
function defaultActionsUrl(r: Reader, rootUrl: string): string {
  const v = r.string('actions', 'DEFAULT_ACTIONS_URL', 'https://data.forgejo.org');
  if (v.toLowerCase() === 'github') return 'https://github.com';
  if (v.toLowerCase() === 'self') return rootUrl.replace(/\/+$/, '');
  try {
    const u = new URL(v);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    r.fail(`[actions] DEFAULT_ACTIONS_URL: "${v}" must be github, self or an http(s) URL`);
  }
  return v.replace(/\/+$/, '');
}

export function loadConfig(opts: LoadOptions = {}): Config {
  const env = opts.env ?? process.env;
  const cwd = opts.cwd ?? process.cwd();
  const configPath = resolveConfigPath(opts, env, cwd);
  let fromFile: Raw = {};
  if (configPath) {
    try {
      fromFile = readIni(configPath);
    } catch (err) {
      throw new ConfigError(`cannot read config file ${configPath}: ${(err as Error).message}`);
    }
  }
  const malformedEnv: string[] = [];
  const fromEnv = envSections(env, malformedEnv);
  const r = new Reader(merge(fromFile, fromEnv));
  const passwordWarnings: string[] = [];

  const httpPort = r.int('server', 'HTTP_PORT', 3000, 0, 65535);
  const httpAddr = r.string('server', 'HTTP_ADDR', '0.0.0.0');
  const appDataPath = path.resolve(cwd, r.string('server', 'APP_DATA_PATH', 'data'));
  let rootUrl = r.string('server', 'ROOT_URL', `http://localhost:${httpPort}/`);
  try {
    const u = new URL(rootUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    throw new ConfigError(`[server] ROOT_URL: "${rootUrl}" is not an http(s) URL`);
  }
  if (!rootUrl.endsWith('/')) rootUrl += '/';

  const dbType = r.oneOf<DbType>('database', 'DB_TYPE', 'sqlite3', {
    sqlite3: 'sqlite3',
    sqlite: 'sqlite3',
    postgres: 'postgres',
    postgresql: 'postgres',
    mysql: 'mysql',
    mariadb: 'mysql',
  });
  const mysqlDb = dbType === 'mysql';

  const localHost = ['0.0.0.0', '::', ''].includes(httpAddr)
    ? '127.0.0.1'
    : httpAddr.includes(':')
      ? `[${httpAddr}]`
      : httpAddr;
  let localRootUrl = r.string('server', 'LOCAL_ROOT_URL', `http://${localHost}:${httpPort}/`);
  if (!localRootUrl.endsWith('/')) localRootUrl += '/';
  const sshListenPort = r.int('server', 'SSH_LISTEN_PORT', 2222, 0, 65535);
  const minimumKeySize = (key: string, def: number) => r.int('ssh.minimum_key_sizes', key, def, -1, 16384);

  const config: Config = {
    configPath,
    warnings: [],
    server: {
      httpAddr,
      httpPort,
      rootUrl,
      appDataPath,
      localRootUrl,
      gracefulHammerTime: r.duration('server', 'GRACEFUL_HAMMER_TIME', 60),
    },
    ssh: {
      start: r.bool('server', 'START_SSH_SERVER', true),
      listenHost: r.string('server', 'SSH_LISTEN_HOST', '0.0.0.0'),
      listenPort: sshListenPort,
      port: r.int('server', 'SSH_PORT', sshListenPort || 22, 1, 65535),
      domain: r.string('server', 'SSH_DOMAIN', new URL(rootUrl).hostname.replace(/^\[|\]$/g, '')),
      user: r.string('server', 'BUILTIN_SSH_SERVER_USER', 'git'),
      minimumKeySizes: {
        ed25519: minimumKeySize('ED25519', 256),
        ecdsa: minimumKeySize('ECDSA', 256),
        rsa: minimumKeySize('RSA', 3071),
        dsa: minimumKeySize('DSA', -1),
      },
    },
    database: {
      type: dbType,
      path: path.resolve(cwd, r.string('database', 'PATH', path.join(appDataPath, 'anvil.db'))),
      host: r.string('database', 'HOST', mysqlDb ? '127.0.0.1:3306' : '127.0.0.1:5432'),
      name: r.string('database', 'NAME', 'anvil'),
      user: r.string('database', 'USER', mysqlDb ? 'root' : 'postgres'),
      charset: r.oneOf('database', 'CHARSET', 'utf8mb4', { utf8mb4: 'utf8mb4', utf8: 'utf8' }),
      passwd: r.string('database', 'PASSWD', ''),
      sslMode: r.oneOf('database', 'SSL_MODE', 'disable', {
        disable: 'disable',
        require: 'require',
        'verify-full': 'verify-full',
      }),
    },
    security: {
      secretKey: r.string('security', 'SECRET_KEY', ''),
      reverseProxyAuthenticationUser: r.string(
        'security',
        'REVERSE_PROXY_AUTHENTICATION_USER',
        'X-WEBAUTH-USER',
      ),
      reverseProxyTrustedProxies: r.list('security', 'REVERSE_PROXY_TRUSTED_PROXIES').length
        ? r.list('security', 'REVERSE_PROXY_TRUSTED_PROXIES')
        : ['127.0.0.0/8', '::1/128'],
      internalToken: r.string('security', 'INTERNAL_TOKEN', ''),
      passwordHash: readPasswordHash(r, (w) => passwordWarnings.push(w)),
      signInThrottle: {
        window: r.duration('security', 'LOGIN_THROTTLE_WINDOW', 15 * 60),
        maxPerAccount: r.int('security', 'LOGIN_MAX_FAILURES', 5, 1, 1_000_000),
        maxPerAddress: r.int('security', 'LOGIN_MAX_FAILURES_PER_ADDRESS', 20, 1, 1_000_000),
      },
    },
    service: {
      enableReverseProxyAuthenticationApi: r.bool(
        'service',
        'ENABLE_REVERSE_PROXY_AUTHENTICATION_API',
        false,
      ),
      disableRegistration: r.bool('service', 'DISABLE_REGISTRATION', false),
      autoWatchNewRepos: r.bool('service', 'AUTO_WATCH_NEW_REPOS', true),
      registerEmailConfirm: r.bool('service', 'REGISTER_EMAIL_CONFIRM', false),
      activeCodeLiveMinutes: r.int('service', 'ACTIVE_CODE_LIVE_MINUTES', 180, 1, 525600),
      resetPasswdCodeLiveMinutes: r.int('service', 'RESET_PASSWD_CODE_LIVE_MINUTES', 180, 1, 525600),
    },
    mailer: readMailer(r, new URL(rootUrl).hostname.replace(/^\[|\]$/g, '')),
    session: {
      cookieName: r.string('session', 'COOKIE_NAME', 'i_like_gitea'),
      lifetime: r.int('session', 'SESSION_LIFE_TIME', 86400, 60, 2 ** 31 - 1),
      cookieSecure: r.bool('session', 'COOKIE_SECURE', rootUrl.startsWith('https:')),
    },
    api: {
      defaultPagingNum: r.int('api', 'DEFAULT_PAGING_NUM', 30, 1, 10000),
      maxResponseItems: r.int('api', 'MAX_RESPONSE_ITEMS', 50, 1, 10000),
    },
    repository: {
      root: path.resolve(cwd, r.string('repository', 'ROOT', path.join(appDataPath, 'repositories'))),
      maxCreationLimit: r.int('repository', 'MAX_CREATION_LIMIT', -1, -1, 2 ** 31 - 1),
      allowForkWithoutMaximumLimit: r.bool('repository', 'ALLOW_FORK_WITHOUT_MAXIMUM_LIMIT', true),
      signing: readSigning(r, cwd),
    },
    migrations: {
      allowedDomains: r.list('migrations', 'ALLOWED_DOMAINS'),
      blockedDomains: r.list('migrations', 'BLOCKED_DOMAINS'),
      allowLocalNetworks: r.bool('migrations', 'ALLOW_LOCALNETWORKS', false),
    },
    mirror: {
      enabled: r.bool('mirror', 'ENABLED', true),
      defaultInterval: r.duration('mirror', 'DEFAULT_INTERVAL', 8 * 3600),
      minInterval: r.duration('mirror', 'MIN_INTERVAL', 10 * 60),
    },
    webhook: {
      deliverTimeout: r.int('webhook', 'DELIVER_TIMEOUT', 5, 1, 3600),
      allowedHostList: r.list('webhook', 'ALLOWED_HOST_LIST').length
        ? r.list('webhook', 'ALLOWED_HOST_LIST')
        : ['external'],
      skipTlsVerify: r.bool('webhook', 'SKIP_TLS_VERIFY', false),
      maxAttempts: r.int('webhook', 'MAX_ATTEMPTS', 6, 1, 100),
      retryDelay: r.duration('webhook', 'RETRY_DELAY', 30),
      concurrency: r.int('webhook', 'CONCURRENCY', 16, 1, 1000),
    },
    actions: {
      enabled: r.bool('actions', 'ENABLED', false),
      artifactRetentionDays: r.int('actions', 'ARTIFACT_RETENTION_DAYS', 90, 1, 36500),
      fetchTaskWait: r.duration('actions', 'FETCH_TASK_WAIT', 3),
      // The cache of actions/cache: per repository at most this many MiB, entries unused for this long go.
      cacheMaxSize: r.int('actions', 'CACHE_MAX_SIZE', 10240, 1, 2 ** 23) * 1024 * 1024,
      cacheRetentionDays: r.int('actions', 'CACHE_RETENTION_DAYS', 7, 1, 36500),
      defaultActionsUrl: defaultActionsUrl(r, rootUrl),
    },
    quota: {
      enabled: r.bool('quota', 'ENABLED', true),
      defaultGroups: r.list('quota', 'DEFAULT_GROUPS'),
    },
    attachment: {
      enabled: r.bool('attachment', 'ENABLED', true),
      maxSize: r.int('attachment', 'MAX_SIZE', 2048, 1, 2 ** 23) * 1024 * 1024,
      maxFiles: r.int('attachment', 'MAX_FILES', 5, 1, 1000),
      // Empty means Forgejo's default list, as there; `*/*` allows every type.
      allowedTypes: r.list('attachment', 'ALLOWED_TYPES').length
        ? r.list('attachment', 'ALLOWED_TYPES')
        : DEFAULT_ATTACHMENT_TYPES.split(','),
      releaseAllowedTypes: r.list('repository.release', 'ALLOWED_TYPES'),
    },
    packages: {
      enabled: r.bool('packages', 'ENABLED', true),
      limitTotalOwnerSize: r.size('packages', 'LIMIT_TOTAL_OWNER_SIZE', -1),
      limitTotalOwnerCount: r.int('packages', 'LIMIT_TOTAL_OWNER_COUNT', -1, -1, 2 ** 31 - 1),
      limitSizeGeneric: r.size('packages', 'LIMIT_SIZE_GENERIC', -1),
      limitSizeNpm: r.size('packages', 'LIMIT_SIZE_NPM', -1),
      limitSizeMaven: r.size('packages', 'LIMIT_SIZE_MAVEN', -1),
      limitSizePypi: r.size('packages', 'LIMIT_SIZE_PYPI', -1),
      limitSizeCargo: r.size('packages', 'LIMIT_SIZE_CARGO', -1),
      limitSizeConda: r.size('packages', 'LIMIT_SIZE_CONDA', -1),
      limitSizeGo: r.size('packages', 'LIMIT_SIZE_GO', -1),
      limitSizeComposer: r.size('packages', 'LIMIT_SIZE_COMPOSER', -1),
      limitSizeDebian: r.size('packages', 'LIMIT_SIZE_DEBIAN', -1),
      limitSizeRubygems: r.size('packages', 'LIMIT_SIZE_RUBYGEMS', -1),
      limitSizeRpm: r.size('packages', 'LIMIT_SIZE_RPM', -1),
      limitSizeAlt: r.size('packages', 'LIMIT_SIZE_ALT', -1),
      limitSizeArch: r.size('packages', 'LIMIT_SIZE_ARCH', -1),
      limitSizeCran: r.size('packages', 'LIMIT_SIZE_CRAN', -1),
      limitSizeHelm: r.size('packages', 'LIMIT_SIZE_HELM', -1),
      limitSizeVagrant: r.size('packages', 'LIMIT_SIZE_VAGRANT', -1),
      limitSizePub: r.size('packages', 'LIMIT_SIZE_PUB', -1),
      limitSizeChef: r.size('packages', 'LIMIT_SIZE_CHEF', -1),
      limitSizeConan: r.size('packages', 'LIMIT_SIZE_CONAN', -1),
      limitSizeSwift: r.size('packages', 'LIMIT_SIZE_SWIFT', -1),
      limitSizeAlpine: r.size('packages', 'LIMIT_SIZE_ALPINE', -1),
      limitSizeNuget: r.size('packages', 'LIMIT_SIZE_NUGET', -1),
      limitSizeContainer: r.size('packages', 'LIMIT_SIZE_CONTAINER', -1),
    },
    ui: {
      maxDisplayFileSize: r.int('ui', 'MAX_DISPLAY_FILE_SIZE', 8 * 1024 * 1024, 1, 2 ** 31 - 1),
    },
    other: {
      enableFeed: r.bool('other', 'ENABLE_FEED', true),
    },
    indexer: {
      repoIndexerEnabled: r.bool('indexer', 'REPO_INDEXER_ENABLED', false),
    },
    git: {
      maxDiffLines: r.int('git', 'MAX_GIT_DIFF_LINES', 1000, 1, 2 ** 31 - 1),
      maxDiffLineCharacters: r.int('git', 'MAX_GIT_DIFF_LINE_CHARACTERS', 5000, 1, 2 ** 31 - 1),
      maxDiffFiles: r.int('git', 'MAX_GIT_DIFF_FILES', 100, 1, 2 ** 31 - 1),
    },
    picture: {
      avatarMaxFileSize: r.int('picture', 'AVATAR_MAX_FILE_SIZE', 1024 * 1024, 1, 2 ** 31 - 1),
      avatarMaxWidth: r.int('picture', 'AVATAR_MAX_WIDTH', 4096, 1, 65535),
      avatarMaxHeight: r.int('picture', 'AVATAR_MAX_HEIGHT', 4096, 1, 65535),
    },
    cron: {
      cleanupPackages: {
        enabled: r.bool('cron.cleanup_packages', 'ENABLED', true),
        runAtStart: r.bool('cron.cleanup_packages', 'RUN_AT_START', true),
        schedule: r.schedule('cron.cleanup_packages', 'SCHEDULE', { at: 'day' }),
        olderThan: r.duration('cron.cleanup_packages', 'OLDER_THAN', 24 * 3600),
      },
    },
    storage: readStorage(r, appDataPath),
    log: {
      level: r.oneOf('log', 'LEVEL', 'info', {
        trace: 'trace',
        debug: 'debug',
        info: 'info',
        warn: 'warn',
        error: 'error',
        fatal: 'fatal',
        none: 'silent',
        silent: 'silent',
      }),
    },
    oauth2: readOAuth2(r),
    metrics: {
      enabled: r.bool('metrics', 'ENABLED', false),
      token: r.string('metrics', 'TOKEN', ''),
    },
    cluster: readCluster(r),
  };

  config.warnings = [
    ...unusedSettings(fromFile, r.known, {
      section: (s) => `[${s}]`,
      key: (s, k) => (s === '' ? `${k} (before the first section)` : `[${s}] ${k}`),
      where: ` in ${configPath}`,
    }),
    ...unusedSettings(fromEnv, r.known, { section: (s) => `${envName(s)}__*`, key: envName, where: '' }),
    ...malformedEnv.map((name) => `${name} is not of the form ANVIL__SECTION__KEY and is ignored`),
    ...passwordWarnings,
  ];

  if (config.api.defaultPagingNum > config.api.maxResponseItems) {
    config.api.defaultPagingNum = config.api.maxResponseItems;
  }
  if (!config.security.internalToken) config.security.internalToken = readInternalToken(config);
  if (!config.security.secretKey && opts.persistSecretKey) {
    config.security.secretKey = persistSecretKey(config);
  }
  return config;
}
