// The npm format: publishing (one version with its tarball, base64 in `_attachments`, checked
// against the client's integrity and read to its end: a gzip'd tar holding a package.json), the
// packument, dist-tags (a version property `npm.tag` per tag), deprecation, unpublishing and
// search. Versions are refused when they exist (409).
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Identity } from '../../auth/identity.js';
import { isoTime } from '../../http/format.js';
import type { Tx } from '../../db/database.js';
import { badRequest, notFound } from '../../errors.js';
import type { UserRow } from '../../users/tables.js';
import * as store from '../store.js';
import type { PackageService, StoredFile } from '../service.js';
import { PropertyRef, type PackageRow, type VersionRow } from '../tables.js';
import { readTar } from '../tar.js';

const TAG = 'npm.tag';
/** Forgejo's (and the npm registry's) package name rule. */
const NAME = /^(@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/;
/** Semantic versions (semver.org's regular expression). */
const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

export function checkName(name: string): void {
  if (!NAME.test(name) || name.length > 214) throw badRequest(`invalid package name [name: ${name}]`);
}

export function isSemver(v: string): boolean {
  return v.length <= 256 && SEMVER.test(v);
}

/**
 * A tarball as npm packs it: a gzip'd tar, sound to its end, with the package's package.json
 * (`package/package.json`: one directory, whatever its name, holds the package); else 400.
 */
async function checkTarball(stored: StoredFile): Promise<void> {
  const isManifest = (name: string) => /^[^/]+\/package\.json$/.test(name);
  const tar = await readTar(await stored.open(), stored.size, 'gzip', 'the tarball', isManifest);
  const manifest = [...tar.kept.values()][0];
  if (!manifest) throw badRequest('the tarball has no package.json (package/package.json)');
  try {
    JSON.parse(manifest.toString('utf8'));
  } catch {
    throw badRequest("the tarball's package.json is not JSON");
  }
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;

/** Rendered packuments kept (see packumentJson). */
const PACKUMENT_MAX = 200;
/** The fields of a version in the abbreviated ("corgi") packument `npm install` asks for. */
const ABBREVIATED = [
  'name',
  'version',
  'deprecated',
  'dependencies',
  'optionalDependencies',
  'devDependencies',
  'bundleDependencies',
  'peerDependencies',
  'peerDependenciesMeta',
  'acceptDependencies',
  'bin',
  'directories',
  'dist',
  'engines',
  '_hasShrinkwrap',
  'hasInstallScript',
  'cpu',
  'os',
  'funding',
] as const;
const gzip = promisify(zlib.gzip);

/** A packument's two forms: the full document, and the abbreviated one of `npm install`. */
export type PackumentForm = 'full' | 'abbreviated';

interface Rendered {
  revision: number;
  /** The full document's text: the abbreviated form and compressed bodies are made from it. */
  full: string;
  bodies: Map<string, Promise<Buffer>>;
}

export interface NpmServiceDeps {
  packages: PackageService;
  rootUrl: string;
}

export class NpmService {
  private readonly rendered = new Map<string, Rendered>();
  private readonly packages: PackageService;

  constructor(private readonly deps: NpmServiceDeps) {
    this.packages = deps.packages;
  }

  /**
   * A packument's body in the form asked for, gzip-compressed or not, with the ETag it is sent
   * under. A package with many versions costs milliseconds to render, and `npm install` asks for
   * it often: the bodies are kept while the package's revision (raised in the transaction of every
   * change to its versions, files or tags, whichever process makes it) and its owner's name stay
   * the same; each form and encoding is made once, on first demand.
   */
  async packumentBody(
    owner: UserRow,
    pkg: PackageRow,
    form: PackumentForm,
    gzipped: boolean,
  ): Promise<{ body: Buffer; etag: string }> {
    const key = `${pkg.id}:${owner.name}`;
    const revision = Number(pkg.revision);
    let hit = this.rendered.get(key);
    if (!hit || hit.revision !== revision) {
      hit = { revision, full: await this.packument(owner, pkg), bodies: new Map() };
      if (this.rendered.size >= PACKUMENT_MAX) this.rendered.clear();
      this.rendered.set(key, hit);
    }
    const variant = `${form}${gzipped ? '.gz' : ''}`;
    let body = hit.bodies.get(variant);
    if (!body) {
      const text = form === 'full' ? hit.full : abbreviate(hit.full);
      // Kept encoded: sending it then allocates nothing per request.
      body = gzipped ? gzip(text, { level: 6 }) : Promise.resolve(Buffer.from(text));
      hit.bodies.set(variant, body);
      body.catch(() => hit.bodies.delete(variant));
    }
    // The ETag names the content, not its encoding: a cached body of either encoding revalidates.
    return { body: await body, etag: `"${pkg.id}-${revision}-${form === 'full' ? 'f' : 'a'}"` };
  }

  tarballUrl(owner: UserRow, name: string, version: string, file: string): string {
    const root = this.deps.rootUrl;
    return `${root}api/packages/${encodeURIComponent(owner.name)}/npm/${name.replace('/', '%2f')}/-/${encodeURIComponent(version)}/${encodeURIComponent(file)}`;
  }

  /**
   * A publish PUT: a new version with its tarball (409 when the version exists), or, without
   * attachments, a deprecation (or un-deprecation) of existing versions.
   */
  async publish(owner: UserRow, creator: UserRow, urlName: string, body: unknown): Promise<void> {
    checkName(urlName);
    const doc = obj(body);
    if (!doc) throw badRequest('the body must be a JSON object');
    if (doc['name'] !== undefined && doc['name'] !== urlName) {
      throw badRequest(`the package name in the body (${String(doc['name'])}) is not ${urlName}`);
    }
    const versions = obj(doc['versions']);
    if (!versions || Object.keys(versions).length === 0) throw badRequest('no version to publish');
    const attachments = obj(doc['_attachments']);
    if (!attachments || Object.keys(attachments).length === 0) {
      // `npm deprecate` PUTs the versions with their `deprecated` field and no tarball; anything
      // else without one has nothing to publish.
      if (Object.values(versions).some((v) => typeof obj(v)?.['deprecated'] === 'string')) {
        return this.deprecate(owner, urlName, versions);
      }
      throw badRequest('the publish has no tarball (_attachments is missing or empty)');
    }
    if (Object.keys(versions).length !== 1 || Object.keys(attachments).length !== 1) {
      throw badRequest('exactly one version and one attachment are published at a time');
    }
    const [version, meta] = Object.entries(versions)[0]!;
    const metadata = obj(meta) ?? {};
    if (!isSemver(version)) throw badRequest(`invalid version [version: ${version}]`);
    if (metadata['version'] !== undefined && metadata['version'] !== version) {
      throw badRequest('the version in the body does not match its key');
    }
    const [fileName, attachment] = Object.entries(attachments)[0]!;
    const data = obj(attachment)?.['data'];
    if (typeof data !== 'string') throw badRequest('the attachment has no data');
    if (!/^[-_+.\w]+$/.test(fileName.replace(/^@[^/]+\//, ''))) throw badRequest('invalid file name');
    const tarball = Buffer.from(data, 'base64');
    const dist = obj(metadata['dist']) ?? {};
    const integrity = typeof dist['integrity'] === 'string' ? dist['integrity'] : undefined;
    const sha512 = crypto.createHash('sha512').update(tarball).digest('base64');
    if (integrity !== undefined) {
      const claimed = integrity
        .split(/\s+/)
        .filter((i) => i.startsWith('sha512-'))
        .map((i) => i.slice(7));
      if (claimed.length === 0 || !claimed.includes(sha512)) {
        throw badRequest('the integrity of the tarball does not match dist.integrity');
      }
    }
    const shasum = typeof dist['shasum'] === 'string' ? dist['shasum'] : undefined;
    if (shasum !== undefined && shasum !== crypto.createHash('sha1').update(tarball).digest('hex')) {
      throw badRequest('the SHA-1 of the tarball does not match dist.shasum');
    }
    const kept: Json = {};
    for (const [k, v] of Object.entries(metadata)) {
      if (k !== 'dist' && k !== '_id' && k !== 'readme' && !k.startsWith('_')) kept[k] = v;
    }
    kept['name'] = urlName;
    kept['version'] = version;
    const tags = Object.entries(obj(doc['dist-tags']) ?? {}).filter(
      (e): e is [string, string] => typeof e[1] === 'string' && e[1] === version,
    );
    if (tags.length === 0) tags.push(['latest', version]);
    const baseName = urlName.replace(/^@[^/]+\//, '');
    await this.packages.addFile(
      {
        owner,
        creator,
        type: 'npm',
        name: urlName,
        version,
        fileName: `${baseName}-${version}.tgz`,
        isLead: true,
        data: Readable.from([tarball]),
        newVersionOnly: true,
        metadata: JSON.stringify(kept),
        verify: (_digests, stored) => checkTarball(stored),
        inTransaction: async (tx, pkg, v) => {
          for (const [tag] of tags) await this.setTagIn(tx, pkg, v, tag);
        },
      },
      tarball.length,
    );
  }

  private async deprecate(owner: UserRow, name: string, versions: Json): Promise<void> {
    const pkg = await this.packages.getPackage(owner, 'npm', name);
    if (!pkg) throw notFound(`package does not exist [name: ${name}]`);
    const rows = await this.packages.versionsOf(pkg);
    const byVersion = new Map(rows.map((r) => [r.version, r]));
    await this.packages.update(pkg, async (tx) => {
      for (const [version, meta] of Object.entries(versions)) {
        const row = byVersion.get(version);
        const m = obj(meta);
        if (!row || !m) continue;
        const current = JSON.parse(row.metadata_json) as Json;
        const next = { ...current };
        if (typeof m['deprecated'] === 'string' && m['deprecated'] !== '')
          next['deprecated'] = m['deprecated'];
        else delete next['deprecated'];
        if (JSON.stringify(next) !== row.metadata_json) {
          await store.updateVersionMetadata(tx, row.id, JSON.stringify(next));
        }
      }
    });
  }

  private async setTagIn(tx: Tx, pkg: PackageRow, v: VersionRow, tag: string) {
    const ids = (await store.versionsOf(tx, pkg.id)).map((r) => r.id);
    await store.deleteProperties(tx, PropertyRef.version, ids, TAG, tag);
    await store.addProperty(tx, PropertyRef.version, v.id, TAG, tag);
  }

  /** The package's dist-tags: tag → version. */
  async distTags(pkg: PackageRow, versions?: VersionRow[]): Promise<Record<string, string>> {
    const rows = versions ?? (await this.packages.versionsOf(pkg));
    const byId = new Map(rows.map((r) => [r.id, r.version]));
    const props = await this.packages.properties(
      PropertyRef.version,
      rows.map((r) => r.id),
      TAG,
    );
    const out: Record<string, string> = {};
    for (const p of props) {
      const v = byId.get(p.ref_id);
      if (v !== undefined) out[p.value] = v;
    }
    return out;
  }

  async addTag(pkg: PackageRow, version: string, tag: string): Promise<void> {
    if (!tag || isSemver(tag) || !/^[\w.-]+$/.test(tag)) throw badRequest(`invalid tag [tag: ${tag}]`);
    const rows = await this.packages.versionsOf(pkg);
    const v = rows.find((r) => r.version === version);
    if (!v) throw notFound(`package version does not exist [version: ${version}]`);
    await this.packages.update(pkg, (tx) => this.setTagIn(tx, pkg, v, tag));
  }

  /**
   * The dist-tags of a packument npm PUTs back (when it unpublishes a version): every tag naming
   * a version that exists is set to it; versions and other fields of the document change nothing.
   */
  async retag(pkg: PackageRow, body: unknown): Promise<void> {
    const wanted = obj(obj(body)?.['dist-tags']);
    if (!wanted) return;
    const rows = await this.packages.versionsOf(pkg);
    const current = await this.distTags(pkg, rows);
    const moves: Array<[VersionRow, string]> = [];
    for (const [tag, version] of Object.entries(wanted)) {
      const v = rows.find((r) => r.version === version);
      if (v && current[tag] !== version && !isSemver(tag) && /^[\w.-]+$/.test(tag)) moves.push([v, tag]);
    }
    if (moves.length === 0) return;
    await this.packages.update(pkg, async (tx) => {
      for (const [v, tag] of moves) await this.setTagIn(tx, pkg, v, tag);
    });
  }

  async deleteTag(pkg: PackageRow, tag: string): Promise<void> {
    const rows = await this.packages.versionsOf(pkg);
    await this.packages.update(pkg, (tx) =>
      store.deleteProperties(
        tx,
        PropertyRef.version,
        rows.map((r) => r.id),
        TAG,
        tag,
      ),
    );
  }

  /** The packument: every version with its dist, in three queries whatever their number. */
  async packument(owner: UserRow, pkg: PackageRow): Promise<string> {
    const versions = await this.packages.versionsOf(pkg);
    const [files, tags] = await Promise.all([
      this.packages.filesOf(versions.map((v) => v.id)),
      this.distTags(pkg, versions),
    ]);
    const lead = new Map<number, (typeof files)[number]>();
    for (const f of files) if (f.is_lead === 1 || !lead.has(f.version_id)) lead.set(f.version_id, f);
    // Each version's stored metadata (a JSON object that names itself) is spliced in as text
    // after the fields Anvil adds: parsing and re-serializing a thousand of them would cost more
    // than everything else together.
    const q = JSON.stringify;
    const entries: string[] = [];
    const times: string[] = [];
    let description = '';
    for (const v of versions) {
      const f = lead.get(v.id);
      const dist = f
        ? `{"integrity":${q(`sha512-${Buffer.from(f.hash_sha512, 'hex').toString('base64')}`)},"shasum":${q(f.hash_sha1)},"tarball":${q(this.tarballUrl(owner, pkg.name, v.version, f.name))}}`
        : '{}';
      const rest = v.metadata_json.trim().slice(1);
      const head = `{"_id":${q(`${pkg.name}@${v.version}`)},"dist":${dist}`;
      entries.push(`${q(v.version)}:${rest.trim() === '}' ? `${head}}` : `${head},${rest}`}`);
      times.push(`${q(v.version)}:${q(isoTime(v.created_unix))}`);
      if (tags['latest'] === v.version) {
        const d = (JSON.parse(v.metadata_json) as Json)['description'];
        description = typeof d === 'string' ? d : '';
      }
    }
    if (versions.length) {
      times.push(`"created":${q(isoTime(versions[0]!.created_unix))}`);
      times.push(`"modified":${q(isoTime(versions[versions.length - 1]!.created_unix))}`);
    }
    return (
      `{"_id":${q(pkg.name)},"name":${q(pkg.name)},"description":${q(description)},` +
      `"dist-tags":${q(tags)},"versions":{${entries.join(',')}},"time":{${times.join(',')}}}`
    );
  }

  /** `npm search`: the owner's npm packages whose name holds `text`. */
  async search(owner: UserRow, text: string, from: number, size: number) {
    const [pkgs, total] = await this.packages.search(owner, 'npm', text, size, from);
    // Versions and tags of the whole page in two queries.
    const all = await this.packages.versionsOfPackages(pkgs);
    const tagRows = await this.packages.properties(
      PropertyRef.version,
      all.map((v) => v.id),
      TAG,
    );
    const latestIds = new Set(tagRows.filter((t) => t.value === 'latest').map((t) => t.ref_id));
    const objects = [];
    for (const pkg of pkgs) {
      const versions = all.filter((v) => v.package_id === pkg.id);
      const v = versions.find((r) => latestIds.has(r.id)) ?? versions[versions.length - 1];
      if (!v) continue;
      const meta = JSON.parse(v.metadata_json) as Json;
      const scope = pkg.name.startsWith('@') ? pkg.name.slice(1, pkg.name.indexOf('/')) : 'unscoped';
      objects.push({
        package: {
          name: pkg.name,
          scope,
          version: v.version,
          date: isoTime(v.created_unix),
          description: typeof meta['description'] === 'string' ? meta['description'] : '',
          keywords: Array.isArray(meta['keywords']) ? meta['keywords'] : [],
          links: {
            registry: `${this.deps.rootUrl}api/packages/${owner.name}/npm/${pkg.name.replace('/', '%2f')}`,
          },
          publisher: { username: owner.name, email: '' },
          // npm's client reads this list of every result (`npm search` fails without it);
          // Forgejo sends it empty too.
          maintainers: [],
        },
        score: { final: 1, detail: { quality: 1, popularity: 1, maintenance: 1 } },
        searchScore: 1,
      });
    }
    return { objects, total, time: new Date().toUTCString() };
  }

  requirePackage(owner: UserRow, name: string, identity: Identity | null) {
    return this.packages.requirePackage(owner, 'npm', name, identity);
  }
}

/**
 * The abbreviated packument of a full one (npm's "corgi" document): name, modified time, dist-tags
 * and, per version, only what installing it needs.
 */
export function abbreviate(fullText: string): string {
  const full = JSON.parse(fullText) as Json;
  const versions: Json = {};
  for (const [v, meta] of Object.entries(obj(full['versions']) ?? {})) {
    const m = obj(meta) ?? {};
    const out: Json = {};
    for (const field of ABBREVIATED) if (m[field] !== undefined) out[field] = m[field];
    versions[v] = out;
  }
  const time = obj(full['time']) ?? {};
  return JSON.stringify({
    name: full['name'],
    modified: time['modified'] ?? new Date(0).toISOString(),
    'dist-tags': full['dist-tags'] ?? {},
    versions,
  });
}
