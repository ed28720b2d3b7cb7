// Configuration: an INI file in Forgejo's sections and keys, every key overridable from the
// environment as ANVIL__SECTION__KEY. Each key is declared once below with its type and default;
// an invalid value stops start-up with a message naming the key.
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import crypto from 'node:crypto';
import ini from 'ini';
import { parseGoDuration } from '../mirrors/duration.js';
import { STORAGE_KINDS, resolveStorage, type StorageKind, type StorageSettings } from './storage.js';

export type DbType = 'sqlite3' | 'postgres' | 'mysql';

export interface Config {
  /** The INI file that was read (or will receive generated secrets), if any. */
  configPath: string | null;
  /** Sections and keys set in the file or the environment that Anvil does not read (`anvil web` logs them). */
  warnings: string[];
  server: {
    httpAddr: string;
    httpPort: number;
    rootUrl: string;
    appDataPath: string;
    /** Seconds a stopping server waits for requests and pushes under way ([server] GRACEFUL_HAMMER_TIME). */
    gracefulHammerTime: number;
    /** Where processes on this machine (`anvil serv`, hooks) reach the server ([server] LOCAL_ROOT_URL). */
    localRootUrl: string;
  };
  ssh: {
    /** Whether `anvil web` runs the built-in SSH server ([server] START_SSH_SERVER). */
    start: boolean;
    listenHost: string;
    /** 0 picks a free port (tests). */
    listenPort: number;
    /** What clone URLs show ([server] SSH_PORT, SSH_DOMAIN). */
    port: number;
    domain: string;
    /** The user name of clone URLs ([server] BUILTIN_SSH_SERVER_USER). */
    user: string;
    /** [ssh.minimum_key_sizes]: bits per key family, -1 refuses the family. */
    minimumKeySizes: { ed25519: number; ecdsa: number; rsa: number; dsa: number };
  };
  database: {
    type: DbType;
    path: string;
    host: string;
    name: string;
    user: string;
    passwd: string;
    sslMode: string;
    /** MySQL's character set ([database] CHARSET), with its binary collation. */
    charset: string;
  };
  security: {
    secretKey: string;
    reverseProxyAuthenticationUser: string;
    reverseProxyTrustedProxies: string[];
    /** Shared with `anvil serv` ([security] INTERNAL_TOKEN; else generated into APP_DATA_PATH/internal_token). */
    internalToken: string;
    /** argon2id's parameters for new password hashes ([security] PASSWORD_HASH_ALGO). */
    passwordHash: PasswordHashParams;
    /**
     * Password sign-in throttling (web form and Basic auth): failures counted over
     * LOGIN_THROTTLE_WINDOW, LOGIN_MAX_FAILURES per account, LOGIN_MAX_FAILURES_PER_ADDRESS per address.
     */
    signInThrottle: { window: number; maxPerAccount: number; maxPerAddress: number };
  };
  service: {
    enableReverseProxyAuthenticationApi: boolean;
    /** Whether the sign-up page is closed ([service] DISABLE_REGISTRATION). */
    disableRegistration: boolean;
    /** Whether a new repository is watched by its creator ([service] AUTO_WATCH_NEW_REPOS). */
    autoWatchNewRepos: boolean;
  };
  session: {
    /** Name of the web session cookie ([session] COOKIE_NAME, Forgejo's default). */
    cookieName: string;
    /** Seconds a web session lives without use ([session] SESSION_LIFE_TIME). */
    lifetime: number;
    /** Whether cookies carry `Secure` ([session] COOKIE_SECURE; default: ROOT_URL is https). */
    cookieSecure: boolean;
  };
  api: {
    defaultPagingNum: number;
    maxResponseItems: number;
  };
  repository: {
    root: string;
    /** Repositories an account may own; -1 is unlimited. A user's own max_repo_creation wins. */
    maxCreationLimit: number;
    /** Whether an account at its repository limit may still fork. */
    allowForkWithoutMaximumLimit: boolean;
    /** How Anvil signs the merges it makes ([repository.signing]). */
    signing: SigningConfig;
  };
  migrations: {
    /** Host globs (or IPs/CIDRs) migrations and mirrors may reach; empty means any external host. */
    allowedDomains: string[];
    blockedDomains: string[];
    /** Whether loopback, private and link-local addresses may be reached. */
    allowLocalNetworks: boolean;
  };
  mirror: {
    enabled: boolean;
    /** Seconds between pull mirror updates when a migration does not say. */
    defaultInterval: number;
    /** Shortest interval (seconds) a pull or push mirror may have (0, "never", is always allowed). */
    minInterval: number;
  };
  webhook: {
    /** Seconds one delivery may take ([webhook] DELIVER_TIMEOUT). */
    deliverTimeout: number;
    /** Servers deliveries may reach: external, private, loopback, *, host globs, IPs, CIDRs. */
    allowedHostList: string[];
    skipTlsVerify: boolean;
    /** Attempts per delivery before it is given up (Anvil; Forgejo tries once). */
    maxAttempts: number;
    /** Seconds before the first retry; each further retry waits twice as long (Anvil). */
    retryDelay: number;
    /** Deliveries under way at once (Anvil). */
    concurrency: number;
  };
  actions: {
    enabled: boolean;
    /** Days an artifact is kept when its upload gives no expiry ([actions] ARTIFACT_RETENTION_DAYS). */
    artifactRetentionDays: number;
    /** Seconds a runner's FetchTask waits for a job when none is waiting ([actions] FETCH_TASK_WAIT; 0: answer at once). */
    fetchTaskWait: number;
  };
  quota: {
    enabled: boolean;
    defaultGroups: string[];
  };
  attachment: {
    enabled: boolean;
    /** Largest attachment accepted, in bytes ([attachment] MAX_SIZE is in MiB). */
    maxSize: number;
    /** Most files one upload request may carry. */
    maxFiles: number;
    /** Extensions (.zip), MIME types (text/plain) or wildcards (image/*) of issue and comment attachments; empty or * / * allows all. */
    allowedTypes: string[];
    /** The same for release attachments ([repository.release] ALLOWED_TYPES, empty by default). */
    releaseAllowedTypes: string[];
  };
  packages: {
    enabled: boolean;
    /** Bytes of package files an owner may store (-1: unlimited). */
    limitTotalOwnerSize: number;
    /** Package versions an owner may have (-1: unlimited). */
    limitTotalOwnerCount: number;
    /** Largest file per format, in bytes (-1: unlimited). */
    limitSizeGeneric: number;
    limitSizeNpm: number;
    limitSizeMaven: number;
    limitSizePypi: number;
    limitSizeCargo: number;
    limitSizeConda: number;
    limitSizeContainer: number;
  };
  picture: {
    /** Largest avatar accepted, in bytes ([picture] AVATAR_MAX_FILE_SIZE). */
    avatarMaxFileSize: number;
    /** Widest and tallest avatar accepted, in pixels ([picture] AVATAR_MAX_WIDTH, AVATAR_MAX_HEIGHT). */
    avatarMaxWidth: number;
    avatarMaxHeight: number;
  };
  cron: {
    cleanupPackages: CronTask & {
      /** Seconds an unreferenced package blob or an unfinished upload is kept ([cron.cleanup_packages] OLDER_THAN). */
      olderThan: number;
    };
  };
  /** Where each kind of blob is stored ([storage], [lfs], [attachment], ...; see config/storage.ts). */
  storage: Record<StorageKind, StorageSettings>;
  log: {
    level: string;
  };
  metrics: {
    /** Prometheus metrics at /metrics ([metrics] ENABLED). */
    enabled: boolean;
    /** When set, /metrics asks for `Authorization: Bearer <TOKEN>` ([metrics] TOKEN). */
    token: string;
  };
  /** Several `anvil web` processes on one database (src/cluster). */
  cluster: {
    /**
     * The channel between processes: a redis:// URL from [queue] CONN_STR when [queue] TYPE is
     * redis, else from [cache] HOST when [cache] ADAPTER is redis; '' for none (PostgreSQL's
     * LISTEN/NOTIFY, or nothing on SQLite).
     */
    redisUrl: string;
    /** Seconds background work claimed by a process stays its own after it stops renewing ([cluster] LEASE_TIME). */
    leaseSeconds: number;
    /** This process's name in leases and ref intents ([cluster] NODE_NAME; default the host name: distinct per process, the same after a restart). */
    nodeName: string;
  };
}

/** A background task's schedule, in Forgejo's [cron.*] keys. */
export interface CronTask {
  enabled: boolean;
  runAtStart: boolean;
  schedule: Schedule;
}

/** `@every 1h` (an interval), or `@hourly`, `@daily`/`@midnight`, `@weekly` (at the start of the UTC unit). */
export type Schedule = { every: number } | { at: 'hour' | 'day' | 'week' };

/** Milliseconds from `now` to the next run of `schedule`. */
export function nextRunIn(schedule: Schedule, now = Date.now()): number {
  if ('every' in schedule) return schedule.every * 1000;
  const unit = { hour: 3_600_000, day: 86_400_000, week: 7 * 86_400_000 }[schedule.at];
  // Weeks start on Monday (the epoch was a Thursday).
  const offset = schedule.at === 'week' ? 4 * 86_400_000 : 0;
  return unit - ((now - offset) % unit);
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

type Raw = Record<string, Record<string, string>>;

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

const ENV_PREFIX = 'ANVIL__';

/** Forgejo's default [attachment] ALLOWED_TYPES. */
const DEFAULT_ATTACHMENT_TYPES =
  '.avif,.cpuprofile,.csv,.dmp,.docx,.fodg,.fodp,.fods,.fodt,.gif,.gz,.jpeg,.jpg,.json,.jsonc,.log,.md,.mov,' +
  '.mp4,.odf,.odg,.odp,.ods,.odt,.patch,.pdf,.png,.pptx,.svg,.tgz,.txt,.webm,.webp,.xls,.xlsx,.zip';

/**
 * Reads ANVIL__SECTION__KEY variables into raw sections. `_0X2E_` in a section stands for a dot.
 * Variables not of that form are added to `malformed` when given.
 */
function envSections(env: NodeJS.ProcessEnv, malformed?: string[]): Raw {
  const raw: Raw = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || !name.toUpperCase().startsWith(ENV_PREFIX)) continue;
    const rest = name.slice(ENV_PREFIX.length);
    const sep = rest.lastIndexOf('__');
    if (sep <= 0) {
      malformed?.push(name);
      continue;
    }
    const section = rest
      .slice(0, sep)
      .replace(/_0X2E_/gi, '.')
      .toLowerCase();
    const key = rest.slice(sep + 2).toUpperCase();
    (raw[section] ??= {})[key] = value;
  }
  return raw;
}

/** The sections and keys of an INI file, section names lower-cased, keys upper-cased. */
export function readIni(file: string): Raw {
  const parsed = ini.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
  const raw: Raw = {};
  // The ini package nests dotted section names ([repository.upload] → repository: { upload: ... });
  // flatten them back into Forgejo's section names.
  const addSection = (name: string, body: Record<string, unknown>) => {
    const target = (raw[name.toLowerCase()] ??= {});
    for (const [k, v] of Object.entries(body)) {
      if (v !== null && typeof v === 'object') addSection(`${name}.${k}`, v as Record<string, unknown>);
      else target[k.toUpperCase()] = String(v);
    }
  };
  for (const [section, body] of Object.entries(parsed)) {
    if (body && typeof body === 'object') addSection(section, body as Record<string, unknown>);
    // keys before the first section header belong to the default section
    else (raw[''] ??= {})[section.toUpperCase()] = String(body);
  }
  return raw;
}

class Reader {
  /** Every section and key read, for telling which settings are not used. */
  readonly known = new Map<string, Set<string>>();

  constructor(private readonly raw: Raw) {}

  /** Whether the file or the environment has the section. */
  has(section: string): boolean {
    return this.raw[section] !== undefined;
  }

  /** The names of the sections present. */
  sections(): string[] {
    return Object.keys(this.raw);
  }

  fail(message: string): never {
    throw new ConfigError(message);
  }

  private get(section: string, key: string): string | undefined {
    let keys = this.known.get(section);
    if (!keys) this.known.set(section, (keys = new Set()));
    keys.add(key);
    const v = this.raw[section]?.[key];
    return v === undefined ? undefined : v.trim();
  }

  string(section: string, key: string, def: string): string {
    const v = this.get(section, key);
    return v === undefined || v === '' ? def : v;
  }

  int(section: string, key: string, def: number, min: number, max: number): number {
    const v = this.get(section, key);
    if (v === undefined || v === '') return def;
    if (!/^-?\d+$/.test(v) || Number(v) < min || Number(v) > max) {
      throw new ConfigError(`[${section}] ${key}: "${v}" is not an integer between ${min} and ${max}`);
    }
    return Number(v);
  }

  bool(section: string, key: string, def: boolean): boolean {
    const v = this.get(section, key);
    if (v === undefined || v === '') return def;
    const lower = v.toLowerCase();
    if (['true', '1', 'yes', 'on'].includes(lower)) return true;
    if (['false', '0', 'no', 'off'].includes(lower)) return false;
    throw new ConfigError(`[${section}] ${key}: "${v}" is not a boolean (true or false)`);
  }

  oneOf<T extends string>(section: string, key: string, def: T, allowed: Record<string, T>): T {
    const v = this.get(section, key);
    if (v === undefined || v === '') return def;
    const hit = allowed[v.toLowerCase()];
    if (!hit) {
      throw new ConfigError(`[${section}] ${key}: "${v}" must be one of ${Object.keys(allowed).join(', ')}`);
    }
    return hit;
  }

  /** A Go duration ("8h", "10m0s") as whole seconds. */
  duration(section: string, key: string, def: number): number {
    const v = this.get(section, key);
    if (v === undefined || v === '') return def;
    const seconds = parseGoDuration(v);
    if (seconds === null)
      throw new ConfigError(`[${section}] ${key}: "${v}" is not a duration such as 10m or 8h`);
    return seconds;
  }

  /** A [cron.*] SCHEDULE: `@every <duration>`, `@hourly`, `@daily`, `@midnight` or `@weekly`. */
  schedule(section: string, key: string, def: Schedule): Schedule {
    const v = this.get(section, key)?.trim();
    if (v === undefined || v === '') return def;
    const named: Record<string, Schedule> = {
      '@hourly': { at: 'hour' },
      '@daily': { at: 'day' },
      '@midnight': { at: 'day' },
      '@weekly': { at: 'week' },
    };
    if (named[v]) return named[v];
    const every = /^@every\s+(\S+)$/.exec(v);
    const seconds = every ? parseGoDuration(every[1]!) : null;
    if (seconds === null || seconds < 60) {
      throw new ConfigError(
        `[${section}] ${key}: "${v}" is not a schedule Anvil runs: @every <duration> (1m or more), @hourly, @daily, @midnight or @weekly`,
      );
    }
    return { every: seconds };
  }

  /** A byte size ("512", "10 MiB", "1GB") or -1 (unlimited). */
  size(section: string, key: string, def: number): number {
    const v = this.get(section, key);
    if (v === undefined || v === '') return def;
    if (v === '-1') return -1;
    const m = /^(\d+(?:\.\d+)?)\s*([kmgt]i?b?|b)?$/i.exec(v);
    if (!m) throw new ConfigError(`[${section}] ${key}: "${v}" is not a size such as 500 MiB or -1`);
    const unit = (m[2] ?? 'b').toLowerCase();
    const power = 'bkmgt'.indexOf(unit[0]!);
    const base = unit.includes('i') ? 1024 : unit === 'b' ? 1 : 1000;
    return Math.floor(Number(m[1]) * base ** power);
  }

  list(section: string, key: string): string[] {
    const v = this.get(section, key);
    if (!v) return [];
    return v
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
  }
}

function merge(base: Raw, over: Raw): Raw {
  const out: Raw = {};
  for (const src of [base, over]) {
    for (const [section, keys] of Object.entries(src)) Object.assign((out[section] ??= {}), keys);
  }
  return out;
}

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

/** [repository.signing]: the key Anvil signs merges with, and when. */
export interface SigningConfig {
  /** A GPG key id (openpgp) or an SSH private key file (ssh); '' when Anvil does not sign. */
  signingKey: string;
  name: string;
  email: string;
  format: 'openpgp' | 'ssh';
  /** Forgejo's MERGES rules; Anvil evaluates never, always and pubkey (see README). */
  merges: string[];
  /** GNUPGHOME for gpg (openpgp format); '' for the process's own. */
  gnupgHome: string;
}

const MERGE_RULES = [
  'never',
  'always',
  'pubkey',
  'twofa',
  'basesigned',
  'headsigned',
  'commitssigned',
  'approved',
];

function readSigning(r: Reader, cwd: string): SigningConfig {
  const format = r.oneOf('repository.signing', 'FORMAT', 'openpgp', { openpgp: 'openpgp', ssh: 'ssh' });
  let key = r.string('repository.signing', 'SIGNING_KEY', 'default');
  // Forgejo's `default` means git's own configuration, which Anvil does not read: no signing.
  if (['default', 'none'].includes(key.toLowerCase())) key = '';
  else if (format === 'ssh') key = path.resolve(cwd, key);
  const merges = r.list('repository.signing', 'MERGES').map((m) => m.toLowerCase());
  for (const m of merges) {
    if (!MERGE_RULES.includes(m)) {
      throw new ConfigError(`[repository.signing] MERGES: "${m}" must be among ${MERGE_RULES.join(', ')}`);
    }
  }
  const home = r.string('repository.signing', 'GNUPGHOME', '');
  return {
    signingKey: key,
    name: r.string('repository.signing', 'SIGNING_NAME', ''),
    email: r.string('repository.signing', 'SIGNING_EMAIL', ''),
    format,
    merges: merges.length ? merges : ['always'],
    gnupgHome: home ? path.resolve(cwd, home) : '',
  };
}

/** Keys of the storage sections, all known wherever they are set (a local store ignores MINIO_*). */
const STORAGE_KEYS = [
  'STORAGE_TYPE',
  'PATH',
  'SERVE_DIRECT',
  'MINIO_ENDPOINT',
  'MINIO_ACCESS_KEY_ID',
  'MINIO_SECRET_ACCESS_KEY',
  'MINIO_BUCKET',
  'MINIO_BUCKET_LOOKUP',
  'MINIO_LOCATION',
  'MINIO_BASE_PATH',
  'MINIO_USE_SSL',
];

function readStorage(r: Reader, appDataPath: string): Record<StorageKind, StorageSettings> {
  const out = {} as Record<StorageKind, StorageSettings>;
  for (const kind of STORAGE_KINDS) out[kind] = resolveStorage(r, kind, appDataPath);
  const sections = ['storage', 'lfs', 'attachment', 'packages', 'actions.artifacts', 'avatar'];
  for (const s of [...sections, ...r.sections().filter((n) => n.startsWith('storage.'))]) {
    for (const k of STORAGE_KEYS) r.string(s, k, '');
  }
  return out;
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
    },
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
      limitSizeContainer: r.size('packages', 'LIMIT_SIZE_CONTAINER', -1),
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

/** [queue] / [cache] (Forgejo's keys: only redis matters to Anvil) and [cluster]. */
/** argon2id's parameters (the argon2 package's names); memory in KiB. */
export interface PasswordHashParams {
  timeCost: number;
  memoryCost: number;
  parallelism: number;
  hashLength: number;
}

/** Anvil's default: OWASP's recommendation for argon2id (19 MiB, two passes). */
export const DEFAULT_PASSWORD_HASH: PasswordHashParams = {
  timeCost: 2,
  memoryCost: 19456,
  parallelism: 1,
  hashLength: 32,
};

/**
 * [security] PASSWORD_HASH_ALGO in Forgejo's notation: `argon2` (Anvil's default parameters) or
 * `argon2$<passes>$<memory KiB>$<threads>$<key length>`. Forgejo's other algorithms (pbkdf2,
 * pbkdf2_v1, pbkdf2_hi, scrypt, bcrypt) are not Anvil's: a warning, and argon2 with the defaults.
 * Hashes carry their parameters, so changing them leaves existing passwords valid.
 */
function readPasswordHash(r: Reader, warn: (w: string) => void): PasswordHashParams {
  const v = r.string('security', 'PASSWORD_HASH_ALGO', '').trim();
  const [algo, ...params] = v.split('$');
  if (v === '' || v === 'argon2') return DEFAULT_PASSWORD_HASH;
  if (algo === 'argon2') {
    const n = params.map((p) => (/^\d+$/.test(p) ? Number(p) : NaN));
    const [timeCost, memoryCost, parallelism, hashLength] = n;
    const ok =
      n.length === 4 &&
      timeCost! >= 1 &&
      timeCost! <= 100 &&
      parallelism! >= 1 &&
      parallelism! <= 64 &&
      memoryCost! >= 8 * parallelism! &&
      memoryCost! <= 4 * 1024 * 1024 &&
      hashLength! >= 16 &&
      hashLength! <= 128;
    if (!ok) {
      r.fail(
        `[security] PASSWORD_HASH_ALGO: "${v}" is not argon2$<passes 1-100>$<memory in KiB, at least 8 per thread>$<threads 1-64>$<key length 16-128>`,
      );
    }
    return {
      timeCost: timeCost!,
      memoryCost: memoryCost!,
      parallelism: parallelism!,
      hashLength: hashLength!,
    };
  }
  if (['pbkdf2', 'pbkdf2_v1', 'pbkdf2_v2', 'pbkdf2_hi', 'scrypt', 'bcrypt'].includes(algo!)) {
    warn(
      `[security] PASSWORD_HASH_ALGO = ${v}: Anvil hashes passwords with argon2id only; new passwords use its default parameters`,
    );
    return DEFAULT_PASSWORD_HASH;
  }
  return r.fail(`[security] PASSWORD_HASH_ALGO: "${v}" is not a password hashing algorithm (argon2)`);
}

function readCluster(r: Reader): Config['cluster'] {
  const queueType = r.string('queue', 'TYPE', 'level').toLowerCase();
  const queueConn = r.string('queue', 'CONN_STR', '');
  const cacheAdapter = r.string('cache', 'ADAPTER', 'memory').toLowerCase();
  const cacheHost = r.string('cache', 'HOST', '');
  let redisUrl = '';
  if (queueType === 'redis') {
    redisUrl = queueConn || 'redis://127.0.0.1:6379/0';
    checkRedisUrl('[queue] CONN_STR', redisUrl);
  } else if (cacheAdapter === 'redis') {
    redisUrl = cacheHost || 'redis://127.0.0.1:6379/0';
    checkRedisUrl('[cache] HOST', redisUrl);
  }
  const leaseSeconds = r.duration('cluster', 'LEASE_TIME', 60);
  if (leaseSeconds < 1) throw new ConfigError(`[cluster] LEASE_TIME: must be at least 1s`);
  return {
    redisUrl,
    leaseSeconds,
    nodeName: r.string('cluster', 'NODE_NAME', os.hostname()),
  };
}

function checkRedisUrl(name: string, value: string): void {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new ConfigError(`${name}: "${value}" is not a redis:// URL`);
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:')
    throw new ConfigError(`${name}: "${value}" is not a redis:// URL`);
}

const internalTokenFile = (config: Config) => path.join(config.server.appDataPath, 'internal_token');

/** APP_DATA_PATH/internal_token, '' when the server has not made it yet. */
function readInternalToken(config: Config): string {
  try {
    return fs.readFileSync(internalTokenFile(config), 'utf8').trim();
  } catch {
    return '';
  }
}

/**
 * The shared secret of the server and `anvil serv` when [security] INTERNAL_TOKEN is not set: kept
 * in APP_DATA_PATH/internal_token (mode 600), made by `anvil web` on first start.
 */
export function ensureInternalToken(config: Config): void {
  if (config.security.internalToken) return;
  const file = internalTokenFile(config);
  const token = crypto.randomBytes(32).toString('base64url');
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, token, { mode: 0o600, flag: 'wx' });
    config.security.internalToken = token;
  } catch (err) {
    // Another server made it at the same moment: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      config.security.internalToken = readInternalToken(config);
      return;
    }
    throw new ConfigError(
      `[security] INTERNAL_TOKEN: absent and cannot be saved to ${file}: ${(err as Error).message}`,
    );
  }
}

/** The environment variable of a section (and key). */
function envName(section: string, key?: string): string {
  const s = ENV_PREFIX + section.toUpperCase().replace(/\./g, '_0X2E_');
  return key === undefined ? s : `${s}__${key}`;
}

/** Levenshtein distance, for suggesting the setting a misspelled one meant. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}

/** The candidate closest to `word`, if it is close enough to be a likely misspelling. */
function closest(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(word.toUpperCase(), c.toUpperCase());
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return bestDistance <= Math.max(1, Math.floor(word.length / 3)) ? best : undefined;
}

/** How a source of settings names its sections and keys in warnings, and where it is. */
interface Naming {
  section(section: string): string;
  key(section: string, key: string): string;
  where: string;
}

/**
 * Warnings for the sections and keys of `raw` that Anvil does not read (`known`): an unknown section
 * once, an unknown key of a known section each, with the closest known name when one is near.
 */
function unusedSettings(raw: Raw, known: Map<string, Set<string>>, naming: Naming): string[] {
  const out: string[] = [];
  for (const [section, keys] of Object.entries(raw)) {
    const knownKeys = known.get(section);
    if (!knownKeys && section !== '') {
      const near = closest(section, known.keys());
      const hint = near === undefined ? '' : ` (did you mean ${naming.section(near)}?)`;
      out.push(`${naming.section(section)}${naming.where} is not a section used by Anvil${hint}`);
      continue;
    }
    for (const key of Object.keys(keys)) {
      if (knownKeys?.has(key)) continue;
      const near = knownKeys && closest(key, knownKeys);
      const hint = near === undefined ? '' : ` (did you mean ${naming.key(section, near)}?)`;
      out.push(`${naming.key(section, key)}${naming.where} is not used by Anvil${hint}`);
    }
  }
  return out;
}

/**
 * The INI text with `line` as the [security] SECRET_KEY: it replaces an empty SECRET_KEY line of
 * that section (Forgejo's sample app.ini has one), else goes right under the section header, else
 * into a new section at the end. Everything else in the file, comments included, is kept.
 */
function withSecretKey(text: string, line: string): string {
  const lines = text.split('\n');
  let inSecurity = false;
  let header = -1;
  for (const [i, raw] of lines.entries()) {
    const l = raw.trim();
    const section = /^\[(.*)\]$/.exec(l);
    if (section) {
      inSecurity = section[1]!.trim().toLowerCase() === 'security';
      if (inSecurity && header < 0) header = i;
    } else if (inSecurity && /^SECRET_KEY\s*=\s*(?:""|'')?$/i.test(l)) {
      lines[i] = line + (raw.endsWith('\r') ? '\r' : '');
      return lines.join('\n');
    }
  }
  if (header >= 0) {
    lines.splice(header + 1, 0, line + (lines[header]!.endsWith('\r') ? '\r' : ''));
    return lines.join('\n');
  }
  const sep = text === '' ? '' : text.endsWith('\n') ? '\n' : '\n\n';
  return `${text}${sep}[security]\n${line}\n`;
}

/**
 * Generates [security] SECRET_KEY and writes it into the configuration file in use (creating
 * APP_DATA_PATH/app.ini when there is none), as Forgejo does on first start.
 */
function persistSecretKey(config: Config): string {
  const key = crypto.randomBytes(32).toString('base64url');
  const file = config.configPath ?? path.join(config.server.appDataPath, 'app.ini');
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    fs.writeFileSync(file, withSecretKey(text, `SECRET_KEY = ${key}`), { mode: 0o600 });
  } catch (err) {
    throw new ConfigError(
      `[security] SECRET_KEY: absent and cannot be saved to ${file}: ${(err as Error).message}`,
    );
  }
  config.configPath = file;
  return key;
}
