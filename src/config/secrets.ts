// The secrets Anvil makes itself when the configuration has none: [security] INTERNAL_TOKEN (kept
// in APP_DATA_PATH/internal_token) and SECRET_KEY (written into the configuration file).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from './reader.js';
import type { Config } from './settings.js';

const internalTokenFile = (config: Config) => path.join(config.server.appDataPath, 'internal_token');

/** APP_DATA_PATH/internal_token, '' when the server has not made it yet. */
export function readInternalToken(config: Config): string {
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
export function persistSecretKey(config: Config): string {
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
