// The settings read as a group rather than a key at a time: [repository.signing], the storage
// sections, [security] PASSWORD_HASH_ALGO, [queue] / [cache] / [cluster], and [oauth2].
import os from 'node:os';
import path from 'node:path';
import { ConfigError, type Reader } from './reader.js';
import {
  DEFAULT_PASSWORD_HASH,
  type Config,
  type PasswordHashParams,
  type SigningConfig,
} from './settings.js';
import { STORAGE_KINDS, resolveStorage, type StorageKind, type StorageSettings } from './storage.js';

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

export function readSigning(r: Reader, cwd: string): SigningConfig {
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

export function readStorage(r: Reader, appDataPath: string): Record<StorageKind, StorageSettings> {
  const out = {} as Record<StorageKind, StorageSettings>;
  for (const kind of STORAGE_KINDS) out[kind] = resolveStorage(r, kind, appDataPath);
  const sections = ['storage', 'lfs', 'attachment', 'packages', 'actions.artifacts', 'avatar'];
  for (const s of [...sections, ...r.sections().filter((n) => n.startsWith('storage.'))]) {
    for (const k of STORAGE_KEYS) r.string(s, k, '');
  }
  return out;
}

/**
 * [security] PASSWORD_HASH_ALGO in Forgejo's notation: `argon2` (Anvil's default parameters) or
 * `argon2$<passes>$<memory KiB>$<threads>$<key length>`. Forgejo's other algorithms (pbkdf2,
 * pbkdf2_v1, pbkdf2_hi, scrypt, bcrypt) are not Anvil's: a warning, and argon2 with the defaults.
 * Hashes carry their parameters, so changing them leaves existing passwords valid.
 */
export function readPasswordHash(r: Reader, warn: (w: string) => void): PasswordHashParams {
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

/** [queue] / [cache] (Forgejo's keys: only redis matters to Anvil) and [cluster]. */
export function readCluster(r: Reader): Config['cluster'] {
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

const MAILER_PORTS: Record<Config['mailer']['protocol'], number> = {
  smtp: 25,
  smtps: 465,
  'smtp+starttls': 587,
  sendmail: 0,
};

/** [mailer] (Forgejo's keys); `starttls` is taken for `smtp+starttls`. `host`: the default From's domain. */
export function readMailer(r: Reader, host = 'localhost'): Config['mailer'] {
  const protocol = r.oneOf<Config['mailer']['protocol']>('mailer', 'PROTOCOL', 'smtp', {
    smtp: 'smtp',
    smtps: 'smtps',
    'smtp+starttls': 'smtp+starttls',
    starttls: 'smtp+starttls',
    sendmail: 'sendmail',
  });
  const enabled = r.bool('mailer', 'ENABLED', false);
  const smtpAddr = r.string('mailer', 'SMTP_ADDR', '');
  if (enabled && protocol !== 'sendmail' && !smtpAddr) {
    throw new ConfigError('[mailer] SMTP_ADDR: required when [mailer] ENABLED is true');
  }
  return {
    enabled,
    protocol,
    smtpAddr,
    smtpPort: r.int('mailer', 'SMTP_PORT', MAILER_PORTS[protocol], 0, 65535),
    user: r.string('mailer', 'USER', ''),
    passwd: r.string('mailer', 'PASSWD', ''),
    from: r.string('mailer', 'FROM', `Anvil <noreply@${host}>`),
    subjectPrefix: r.string('mailer', 'SUBJECT_PREFIX', ''),
    sendmailPath: r.string('mailer', 'SENDMAIL_PATH', 'sendmail'),
    forceTrustServerCert: r.bool('mailer', 'FORCE_TRUST_SERVER_CERT', false),
    maxAttempts: r.int('mailer', 'MAX_ATTEMPTS', 8, 1, 100),
    retryDelay: r.duration('mailer', 'RETRY_DELAY', 30),
  };
}

/** [oauth2]: the OAuth2 provider, with Forgejo's keys and defaults. */
export function readOAuth2(r: Reader): Config['oauth2'] {
  const jwtSecret = r.string('oauth2', 'JWT_SECRET', '').trim();
  // Forgejo's form: base64 (standard or URL alphabet, padded or not) of 32 random bytes.
  if (
    jwtSecret &&
    (!/^[A-Za-z0-9+/_-]+=*$/.test(jwtSecret) || Buffer.from(jwtSecret, 'base64').length !== 32)
  ) {
    throw new ConfigError('[oauth2] JWT_SECRET: must be the base64 of 32 bytes (`openssl rand -base64 32`)');
  }
  return {
    enabled: r.bool('oauth2', 'ENABLED', true),
    accessTokenExpirationTime: r.int('oauth2', 'ACCESS_TOKEN_EXPIRATION_TIME', 3600, 1, 2 ** 31 - 1),
    refreshTokenExpirationTime: r.int('oauth2', 'REFRESH_TOKEN_EXPIRATION_TIME', 730, 1, 1_000_000),
    invalidateRefreshTokens: r.bool('oauth2', 'INVALIDATE_REFRESH_TOKENS', true),
    jwtSecret,
  };
}
