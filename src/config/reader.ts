// Reading settings: the INI file and the ANVIL__SECTION__KEY variables into raw sections, the
// `Reader` that parses and checks each key (recording every key it is asked for), and the warnings
// for the sections and keys that were set but never read.
import fs from 'node:fs';
import ini from 'ini';
import { parseGoDuration } from '../mirrors/duration.js';
import type { Schedule } from './settings.js';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** Sections (lower-case names) and their keys (upper-case) as read, before any parsing. */
export type Raw = Record<string, Record<string, string>>;

const ENV_PREFIX = 'ANVIL__';

/**
 * Reads ANVIL__SECTION__KEY variables into raw sections. `_0X2E_` in a section stands for a dot.
 * Variables not of that form are added to `malformed` when given.
 */
export function envSections(env: NodeJS.ProcessEnv, malformed?: string[]): Raw {
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

export class Reader {
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

/** `over`'s keys on top of `base`'s (the environment over the file). */
export function merge(base: Raw, over: Raw): Raw {
  const out: Raw = {};
  for (const src of [base, over]) {
    for (const [section, keys] of Object.entries(src)) Object.assign((out[section] ??= {}), keys);
  }
  return out;
}

/** The environment variable of a section (and key). */
export function envName(section: string, key?: string): string {
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
export interface Naming {
  section(section: string): string;
  key(section: string, key: string): string;
  where: string;
}

/**
 * Warnings for the sections and keys of `raw` that Anvil does not read (`known`): an unknown section
 * once, an unknown key of a known section each, with the closest known name when one is near.
 */
export function unusedSettings(raw: Raw, known: Map<string, Set<string>>, naming: Naming): string[] {
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
