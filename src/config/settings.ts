// The settings Anvil reads, as one typed `Config` (config.ts fills it from the INI file and the
// environment), and the small types and defaults its sections share.
import type { StorageKind, StorageSettings } from './storage.js';

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
    /** Whether a new account must confirm its e-mail address before it signs in ([service] REGISTER_EMAIL_CONFIRM). */
    registerEmailConfirm: boolean;
    /** Minutes a mailed confirmation code is valid ([service] ACTIVE_CODE_LIVE_MINUTES). */
    activeCodeLiveMinutes: number;
    /** Minutes a mailed password-reset code is valid ([service] RESET_PASSWD_CODE_LIVE_MINUTES). */
    resetPasswdCodeLiveMinutes: number;
  };
  /** Outgoing mail ([mailer]); read by sections.ts `readMailer`. */
  mailer: MailerConfig;
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
    /** The actions cache: bytes per repository ([actions] CACHE_MAX_SIZE, MiB) and days an unused entry stays. */
    cacheMaxSize: number;
    cacheRetentionDays: number;
    /** Seconds a runner's FetchTask waits for a job when none is waiting ([actions] FETCH_TASK_WAIT; 0: answer at once). */
    fetchTaskWait: number;
    /** Where `uses: owner/repo@ref` actions come from ([actions] DEFAULT_ACTIONS_URL, resolved: no trailing slash). */
    defaultActionsUrl: string;
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
    limitSizeGo: number;
    limitSizeComposer: number;
    limitSizeDebian: number;
    limitSizeRubygems: number;
    limitSizeRpm: number;
    limitSizeAlt: number;
    limitSizeArch: number;
    limitSizeCran: number;
    limitSizeHelm: number;
    limitSizeVagrant: number;
    limitSizePub: number;
    limitSizeChef: number;
    limitSizeConan: number;
    limitSizeSwift: number;
    limitSizeAlpine: number;
    limitSizeNuget: number;
    limitSizeContainer: number;
  };
  ui: {
    /** Largest file a file view shows, in bytes ([ui] MAX_DISPLAY_FILE_SIZE); larger ones link to the raw file. */
    maxDisplayFileSize: number;
  };
  other: {
    /** [other] ENABLE_FEED: RSS and Atom feeds of users, organizations, repositories, releases and branches. */
    enableFeed: boolean;
  };
  indexer: {
    /** [indexer] REPO_INDEXER_ENABLED: the site-wide code search (/explore/code). */
    repoIndexerEnabled: boolean;
  };
  git: {
    /** Lines of one file a web diff shows before "show the whole diff" ([git] MAX_GIT_DIFF_LINES). */
    maxDiffLines: number;
    /** Characters of one diff line shown ([git] MAX_GIT_DIFF_LINE_CHARACTERS). */
    maxDiffLineCharacters: number;
    /** Files a web diff shows ([git] MAX_GIT_DIFF_FILES). */
    maxDiffFiles: number;
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
  /** The OAuth2 provider ([oauth2]; see oauth2/provider.ts). */
  oauth2: {
    /** Whether /login/oauth/* and OAuth2 access tokens work at all ([oauth2] ENABLED). */
    enabled: boolean;
    /** Seconds an access token (and an id_token) is valid ([oauth2] ACCESS_TOKEN_EXPIRATION_TIME). */
    accessTokenExpirationTime: number;
    /** Hours a refresh token is valid ([oauth2] REFRESH_TOKEN_EXPIRATION_TIME). */
    refreshTokenExpirationTime: number;
    /** Whether a refresh token works once ([oauth2] INVALIDATE_REFRESH_TOKENS). */
    invalidateRefreshTokens: boolean;
    /** Base64 of the 32-byte HS256 key of the tokens; '' derives it from SECRET_KEY ([oauth2] JWT_SECRET). */
    jwtSecret: string;
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

/** [repository.signing]: the key Anvil signs merges with, and when. */
export interface SigningConfig {
  /** A GPG key id (openpgp) or an SSH private key file (ssh); '' when Anvil does not sign. */
  signingKey: string;
  name: string;
  email: string;
  format: 'openpgp' | 'ssh';
  /** Forgejo's MERGES rules; Anvil evaluates never, always and pubkey (see docs/configuration.md). */
  merges: string[];
  /** GNUPGHOME for gpg (openpgp format); '' for the process's own. */
  gnupgHome: string;
}

/** [mailer]: how mail leaves (Forgejo's keys). PASSWD is never logged. */
export interface MailerConfig {
  enabled: boolean;
  protocol: 'smtp' | 'smtps' | 'smtp+starttls' | 'sendmail';
  smtpAddr: string;
  smtpPort: number;
  user: string;
  passwd: string;
  /** The From address, `Name <addr>` or `addr`. */
  from: string;
  /** Put before every subject ([mailer] SUBJECT_PREFIX). */
  subjectPrefix: string;
  sendmailPath: string;
  /** Accept a server certificate that does not verify (smtps and smtp+starttls). */
  forceTrustServerCert: boolean;
  /** Attempts per message before it is given up (Anvil's). */
  maxAttempts: number;
  /** Seconds before the first retry; each further one waits twice as long (Anvil's). */
  retryDelay: number;
}

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
