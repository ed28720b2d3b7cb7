// The Cargo format (sparse protocol): `cargo publish`'s binary body (u32 little-endian length,
// JSON metadata, u32 little-endian length, the .crate: read to its end, a gzip'd tar with
// `{name}-{version}/Cargo.toml`), index files built from the database
// (one JSON line per version with its dependencies, features, checksum and yanked flag, a
// version property `cargo.yanked`), yank and unyank, search and owners. A version that exists is
// refused with 409.
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { badRequest, conflict } from '../../errors.js';
import type { UserRow } from '../../users/tables.js';
import { Visibility } from '../../users/tables.js';
import * as store from '../store.js';
import type { PackageService, StoredFile } from '../service.js';
import { PropertyRef, type PackageRow, type VersionRow } from '../tables.js';
import { compareSemver, isSemver } from '../semver.js';
import { readTar } from '../tar.js';

export { compareSemver, isSemver };

export const YANKED = 'cargo.yanked';
/** Cargo's (and Forgejo's) crate name rule. */
const NAME = /^[a-zA-Z][a-zA-Z0-9_-]{0,63}$/;
/** Names of dependencies, which may come from other registries with looser rules. */
const DEP_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** The JSON part of a publish body is read into memory: more than this is refused. */
export const MAX_METADATA = 8 << 20;
/** Index files kept rendered (see indexBody). */
const INDEX_CACHE_MAX = 500;
const gzip = promisify(zlib.gzip);

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;

export const isCrateName = (name: string) => NAME.test(name);

export function checkName(name: string): void {
  if (!isCrateName(name)) throw badRequest(`invalid crate name [name: ${name}]`);
}

export function checkVersion(version: string): void {
  if (!isSemver(version)) {
    throw badRequest(`invalid crate version, not a semantic version [version: ${version}]`);
  }
}

const withoutBuild = (v: string) => v.replace(/\+.*$/, '').toLowerCase();

/** The path of a crate's index file under the index root (Cargo's layout, lowercase). */
export function indexPath(name: string): string {
  const n = name.toLowerCase();
  if (n.length === 1) return `1/${n}`;
  if (n.length === 2) return `2/${n}`;
  if (n.length === 3) return `3/${n[0]}/${n}`;
  return `${n.slice(0, 2)}/${n.slice(2, 4)}/${n}`;
}

/**
 * A .crate as `cargo package` makes it: a gzip'd tar, sound to its end, whose files are under
 * `{name}-{version}/` with its Cargo.toml; else 400.
 */
export async function checkCrate(file: StoredFile, name: string, version: string): Promise<void> {
  const manifest = `${name}-${version}/Cargo.toml`;
  const tar = await readTar(await file.open(), file.size, 'gzip', 'the .crate', (n) => n === manifest);
  if (!tar.kept.has(manifest)) throw badRequest(`the .crate has no ${manifest}`);
}

/** The parts of a publish body: the parsed metadata and the crate's bytes, as a stream. */
export interface PublishBody {
  metadata: Json;
  crateLength: number;
  crate: Readable;
}

/**
 * Reads the head of a publish body from `source`: a u32 LE length, that much JSON, a u32 LE
 * length; the crate's bytes are left in the stream handed back (which fails with 400 when the
 * body ends before them). Truncated lengths and JSON that does not parse are 400.
 */
export async function readPublishBody(source: Readable): Promise<PublishBody> {
  const it = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let chunks: Buffer[] = [];
  let buffered = 0;
  let ended = false;
  const take = async (n: number, what: string): Promise<Buffer> => {
    while (buffered < n && !ended) {
      const r = await it.next();
      if (r.done) ended = true;
      else {
        const c = Buffer.isBuffer(r.value) ? r.value : Buffer.from(r.value as Uint8Array);
        chunks.push(c);
        buffered += c.length;
      }
    }
    if (buffered < n) throw badRequest(`the publish body ends inside ${what}`);
    const all = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    const out = all.subarray(0, n);
    const rest = all.subarray(n);
    chunks = rest.length ? [rest] : [];
    buffered = rest.length;
    return out;
  };
  const jsonLength = (await take(4, 'the length of the metadata')).readUInt32LE(0);
  if (jsonLength > MAX_METADATA) {
    throw badRequest(`the metadata of the publish body is larger than ${MAX_METADATA} bytes`);
  }
  const text = (await take(jsonLength, 'the metadata')).toString('utf8');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw badRequest(`the metadata of the publish body is no JSON: ${(err as Error).message}`);
  }
  const metadata = obj(parsed);
  if (!metadata) throw badRequest('the metadata of the publish body must be a JSON object');
  const crateLength = (await take(4, 'the length of the crate')).readUInt32LE(0);
  const head = chunks;
  const crate = Readable.from(
    (async function* () {
      let left = crateLength;
      for (const c of head) {
        if (left === 0) break;
        const part = c.length > left ? c.subarray(0, left) : c;
        left -= part.length;
        yield part;
      }
      while (left > 0) {
        const r = await it.next();
        if (r.done) throw badRequest(`the publish body ends ${left} bytes before the end of the crate`);
        const c = Buffer.isBuffer(r.value) ? r.value : Buffer.from(r.value as Uint8Array);
        const part = c.length > left ? c.subarray(0, left) : c;
        left -= part.length;
        yield part;
      }
    })(),
    { objectMode: false },
  );
  return { metadata, crateLength, crate };
}

/** A dependency as an index line carries it. */
interface IndexDep {
  name: string;
  req: string;
  features: string[];
  optional: boolean;
  default_features: boolean;
  target: string | null;
  kind: string;
  registry: string | null;
  package: string | null;
}

const strOrNull = (v: unknown, field: string): string | null => {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw badRequest(`${field} must be a string`);
  return v;
};

const strings = (v: unknown, field: string): string[] => {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) {
    throw badRequest(`${field} must be a list of strings`);
  }
  return v as string[];
};

/**
 * The name, version and stored metadata of a publish's JSON (400 for a bad name, version or
 * shape). The stored metadata holds what the index lines need (dependencies already in the index
 * form: a renamed dependency is named as in Cargo.toml, its crate in `package`) and what search
 * and the web show; the readme is not kept.
 */
export function publishMetadata(meta: Json): { name: string; version: string; stored: Json } {
  const name = meta['name'];
  const version = meta['vers'];
  if (typeof name !== 'string') throw badRequest('the metadata has no crate name (name)');
  checkName(name);
  if (typeof version !== 'string') throw badRequest('the metadata has no version (vers)');
  checkVersion(version);
  if (meta['deps'] !== undefined && !Array.isArray(meta['deps'])) {
    throw badRequest('deps must be a list');
  }
  const deps: IndexDep[] = [];
  for (const [i, raw] of ((meta['deps'] as unknown[] | undefined) ?? []).entries()) {
    const d = obj(raw);
    if (!d) throw badRequest(`deps[${i}] must be an object`);
    const depName = d['name'];
    if (typeof depName !== 'string' || !DEP_NAME.test(depName)) {
      throw badRequest(`deps[${i}].name is no crate name`);
    }
    const req = d['version_req'];
    if (typeof req !== 'string' || req.length > 256) throw badRequest(`deps[${i}].version_req is missing`);
    const kind = d['kind'] ?? 'normal';
    if (kind !== 'normal' && kind !== 'dev' && kind !== 'build') {
      throw badRequest(`deps[${i}].kind must be normal, dev or build`);
    }
    const explicit = strOrNull(d['explicit_name_in_toml'], `deps[${i}].explicit_name_in_toml`);
    if (explicit !== null && !DEP_NAME.test(explicit)) {
      throw badRequest(`deps[${i}].explicit_name_in_toml is no crate name`);
    }
    deps.push({
      name: explicit ?? depName,
      req,
      features: strings(d['features'], `deps[${i}].features`),
      optional: d['optional'] === true,
      default_features: d['default_features'] !== false,
      target: strOrNull(d['target'], `deps[${i}].target`),
      kind,
      registry: strOrNull(d['registry'], `deps[${i}].registry`),
      package: explicit !== null ? depName : null,
    });
  }
  const features: Record<string, string[]> = {};
  const rawFeatures = meta['features'] ?? {};
  if (!obj(rawFeatures)) throw badRequest('features must be an object');
  for (const [k, v] of Object.entries(obj(rawFeatures)!)) features[k] = strings(v, `features.${k}`);

  const stored: Json = { name, vers: version, deps, features };
  const links = strOrNull(meta['links'], 'links');
  if (links !== null) stored['links'] = links;
  const rustVersion = strOrNull(meta['rust_version'], 'rust_version');
  if (rustVersion !== null) stored['rust_version'] = rustVersion;
  for (const field of ['description', 'documentation', 'homepage', 'repository', 'license'] as const) {
    const v = meta[field];
    if (typeof v === 'string' && v !== '') stored[field] = v;
  }
  for (const field of ['authors', 'keywords', 'categories'] as const) {
    const v = strings(meta[field], field);
    if (v.length) stored[field] = v;
  }
  return { name, version, stored };
}

interface RenderedIndex {
  revision: number;
  body: Buffer | null;
  /** The body gzip-compressed, made on first demand. */
  gzipped?: Promise<Buffer>;
}

export interface CargoServiceDeps {
  packages: PackageService;
  rootUrl: string;
}

export class CargoService {
  private readonly rendered = new Map<number, RenderedIndex>();
  private readonly packages: PackageService;

  constructor(private readonly deps: CargoServiceDeps) {
    this.packages = deps.packages;
  }

  /** The registry's config.json. */
  config(owner: UserRow): Json {
    const base = `${this.deps.rootUrl}api/packages/${encodeURIComponent(owner.name)}/cargo`;
    return {
      dl: `${base}/api/v1/crates`,
      api: base,
      // Cargo sends its token with index and download requests only when this is set.
      'auth-required': owner.visibility !== Visibility.public,
    };
  }

  /** `cargo publish`: a new version (409 when it exists), not yanked. */
  async publish(owner: UserRow, creator: UserRow, body: PublishBody): Promise<void> {
    const { name, version, stored } = publishMetadata(body.metadata);
    // Versions differing only in build metadata are one version to cargo (crates.io refuses them too).
    const existing = await this.packages.getPackage(owner, 'cargo', name);
    if (existing) {
      const core = withoutBuild(version);
      const same = (await this.packages.versionsOf(existing)).find((v) => withoutBuild(v.version) === core);
      if (same) throw conflict(`package version already exists [version: ${same.version}]`);
    }
    await this.packages.addFile(
      {
        owner,
        creator,
        type: 'cargo',
        name,
        version,
        fileName: `${name}-${version}.crate`.toLowerCase(),
        isLead: true,
        data: body.crate,
        newVersionOnly: true,
        metadata: JSON.stringify(stored),
        verify: (_digests, file) => checkCrate(file, name, version),
        inTransaction: async (tx, _pkg, v) => {
          await store.addProperty(tx, PropertyRef.version, v.id, YANKED, 'false');
        },
      },
      body.crateLength,
    );
  }

  /** The ETag of a crate's index file: it changes with every change to the package. */
  indexEtag(pkg: PackageRow): string {
    return `"cargo-${pkg.id}-${Number(pkg.revision)}"`;
  }

  /**
   * A crate's index file: one JSON line per version, in publish order, in three queries whatever
   * the number of versions; kept rendered (and, once asked for, gzip-compressed: cargo accepts
   * gzip) while the package's revision stays the same. Null when the package has no version.
   */
  async indexBody(pkg: PackageRow, gzipped = false): Promise<Buffer | null> {
    const r = await this.render(pkg);
    if (!r.body || !gzipped) return r.body;
    if (!r.gzipped) {
      r.gzipped = gzip(r.body, { level: 6 });
      r.gzipped.catch(() => (r.gzipped = undefined));
    }
    return r.gzipped;
  }

  private async render(pkg: PackageRow): Promise<RenderedIndex> {
    const revision = Number(pkg.revision);
    const hit = this.rendered.get(pkg.id);
    if (hit && hit.revision === revision) return hit;
    const versions = await this.packages.versionsOf(pkg);
    const ids = versions.map((v) => v.id);
    const [files, yanked] = await Promise.all([this.packages.filesOf(ids), this.yankedOf(ids)]);
    const lead = new Map<number, (typeof files)[number]>();
    for (const f of files) if (f.is_lead === 1 || !lead.has(f.version_id)) lead.set(f.version_id, f);
    const lines: string[] = [];
    for (const v of versions) {
      const f = lead.get(v.id);
      if (!f) continue;
      const m = JSON.parse(v.metadata_json) as Json;
      const line: Json = {
        name: pkg.name,
        vers: v.version,
        deps: Array.isArray(m['deps']) ? m['deps'] : [],
        cksum: f.hash_sha256,
        features: obj(m['features']) ?? {},
        yanked: yanked.has(v.id),
      };
      if (typeof m['links'] === 'string') line['links'] = m['links'];
      if (typeof m['rust_version'] === 'string') line['rust_version'] = m['rust_version'];
      lines.push(`${JSON.stringify(line)}\n`);
    }
    const out: RenderedIndex = { revision, body: lines.length ? Buffer.from(lines.join('')) : null };
    if (this.rendered.size >= INDEX_CACHE_MAX) this.rendered.clear();
    this.rendered.set(pkg.id, out);
    return out;
  }

  /** The ids among `ids` of yanked versions. */
  private async yankedOf(ids: number[]): Promise<Set<number>> {
    const props = await this.packages.properties(PropertyRef.version, ids, YANKED);
    return new Set(props.filter((p) => p.value === 'true').map((p) => p.ref_id));
  }

  async setYanked(pkg: PackageRow, version: VersionRow, yanked: boolean): Promise<void> {
    await this.packages.update(pkg, async (tx) => {
      await store.deleteProperties(tx, PropertyRef.version, [version.id], YANKED);
      await store.addProperty(tx, PropertyRef.version, version.id, YANKED, String(yanked));
    });
  }

  /**
   * `cargo search`: the owner's crates whose name holds `text`, by name, each with its highest
   * version that is not yanked (the highest of all when every one is).
   */
  async search(owner: UserRow, text: string, perPage: number, page: number) {
    // No crate name holds a control character (and PostgreSQL refuses NUL in text).
    if ([...text].some((c) => c.charCodeAt(0) < 0x20)) return { crates: [], meta: { total: 0 } };
    const [pkgs, total] = await this.packages.search(owner, 'cargo', text, perPage, (page - 1) * perPage);
    const all = await this.packages.versionsOfPackages(pkgs);
    const yanked = await this.yankedOf(all.map((v) => v.id));
    const crates = [];
    for (const pkg of pkgs) {
      const versions = all.filter((v) => v.package_id === pkg.id);
      const pool = versions.some((v) => !yanked.has(v.id))
        ? versions.filter((v) => !yanked.has(v.id))
        : versions;
      const best = pool.reduce<VersionRow | undefined>(
        (a, v) => (!a || compareSemver(v.version, a.version) > 0 ? v : a),
        undefined,
      );
      if (!best) continue;
      const meta = JSON.parse(best.metadata_json) as Json;
      crates.push({
        name: pkg.name,
        max_version: best.version,
        description: typeof meta['description'] === 'string' ? meta['description'] : '',
      });
    }
    return { crates, meta: { total } };
  }

  /** `cargo owner --list`: the package's owner (as Forgejo answers it). */
  owners(owner: UserRow) {
    return { users: [{ id: owner.id, login: owner.name, name: owner.full_name || owner.name }] };
  }
}
