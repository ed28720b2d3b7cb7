// The RubyGems format: `gem push` (the .gem streamed into the store, its metadata.gz read back
// from the stored file), the full index the gem command reads (specs.4.8.gz,
// latest_specs.4.8.gz, prerelease_specs.4.8.gz: Marshal'd [name, Gem::Version, platform] lists;
// quick/Marshal.4.8/{name}-{version}[-{platform}].gemspec.rz: a Marshal'd, deflated
// Gem::Specification), the compact index (`versions`, `info/{name}`), and yank (the version is
// deleted, as in Forgejo). The version's metadata keeps what those need. A file that exists is
// refused with 409.
import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Db } from '../../db/database.js';
import type { UserRow } from '../../users/tables.js';
import type { PackageService } from '../service.js';
import { gemFileName, isPrerelease, readGem, type Gem, type GemMetadata, type Requirement } from './gem.js';
import {
  marshal,
  RubyHash,
  RubyObject,
  RubyUserDump,
  RubyUserMarshal,
  sym,
  type RubyValue,
} from './marshal.js';
import * as store from './store.js';

const gzip = promisify(zlib.gzip);
const deflate = promisify(zlib.deflate);

const gemVersion = (v: string) => new RubyUserMarshal('Gem::Version', [v]);
const gemRequirement = (r: Requirement) =>
  new RubyUserMarshal('Gem::Requirement', [r.map(([op, v]) => [op, gemVersion(v)])]);

/** Gem::Version's ordering, enough for picking the latest: numeric segments compared as numbers. */
export function compareGemVersions(a: string, b: string): number {
  const sa = a.split(/[.-]/);
  const sb = b.split(/[.-]/);
  for (let i = 0; i < Math.max(sa.length, sb.length); i++) {
    const x = sa[i] ?? '0';
    const y = sb[i] ?? '0';
    const nx = /^\d+$/.test(x);
    const ny = /^\d+$/.test(y);
    if (nx && ny) {
      if (Number(x) !== Number(y)) return Number(x) - Number(y);
    } else if (nx !== ny) return nx ? 1 : -1;
    else if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

function metadataOf(json: string): GemMetadata {
  return JSON.parse(json) as GemMetadata;
}

export interface RubygemsServiceDeps {
  db: Db;
  packages: Pick<PackageService, 'addFile'>;
}

export class RubygemsService {
  constructor(private readonly deps: RubygemsServiceDeps) {}

  /** `gem push`: stores the gem (409 when the file exists) and returns its specification. */
  async push(owner: UserRow, creator: UserRow, data: Readable, announced?: number): Promise<Gem> {
    let gem: Gem | undefined;
    await this.deps.packages.addFile(
      {
        owner,
        creator,
        type: 'rubygems',
        isLead: true,
        data,
        newVersionOnly: false,
        describe: async (stored) => {
          gem = await readGem(stored);
          return {
            name: gem.name,
            version: gem.version,
            fileName: gemFileName(gem.name, gem.version, gem.metadata.platform),
            metadata: JSON.stringify(gem.metadata),
          };
        },
      },
      announced,
    );
    return gem!;
  }

  /** specs.4.8.gz (`which`: all releases, the latest release of each name and platform, or pre-releases). */
  async specs(owner: UserRow, which: 'all' | 'latest' | 'prerelease'): Promise<Buffer> {
    const rows = await store.gemFiles(this.deps.db, owner.id);
    let tuples = rows.map((r) => ({
      name: r.name,
      version: r.version,
      platform: metadataOf(r.metadata_json).platform,
    }));
    if (which === 'prerelease') tuples = tuples.filter((t) => isPrerelease(t.version));
    else tuples = tuples.filter((t) => !isPrerelease(t.version));
    if (which === 'latest') {
      const latest = new Map<string, (typeof tuples)[number]>();
      for (const t of tuples) {
        const key = `${t.name}\0${t.platform}`;
        const seen = latest.get(key);
        if (!seen || compareGemVersions(t.version, seen.version) > 0) latest.set(key, t);
      }
      tuples = [...latest.values()];
    }
    const value: RubyValue = tuples.map((t) => [t.name, gemVersion(t.version), t.platform]);
    return gzip(marshal(value));
  }

  /** quick/Marshal.4.8/{file}.gemspec.rz: the deflated Marshal of the Gem::Specification; undefined when there is none. */
  async quickSpec(owner: UserRow, gemspec: string): Promise<Buffer | undefined> {
    const file = gemspec.replace(/\.gemspec$/, '.gem');
    const [row] = await store.gemFiles(this.deps.db, owner.id, { fileName: file });
    if (!row) return undefined;
    const m = metadataOf(row.metadata_json);
    const dependencies = m.dependencies.map((d) => {
      const req = gemRequirement(d.requirements);
      return new RubyObject('Gem::Dependency', [
        ['name', d.name],
        ['requirement', req],
        ['type', sym(d.type)],
        ['prerelease', d.requirements.some(([, v]) => isPrerelease(v))],
        ['version_requirements', req],
      ]);
    });
    const fields: RubyValue[] = [
      m.rubygems_version,
      m.specification_version,
      row.name,
      gemVersion(row.version),
      m.date,
      m.summary,
      gemRequirement(m.required_ruby_version),
      gemRequirement(m.required_rubygems_version),
      m.platform,
      dependencies,
      '',
      m.email.length === 1 ? m.email[0]! : m.email,
      m.authors,
      m.description,
      m.homepage,
      true,
      m.platform,
      m.licenses,
      new RubyHash([]),
    ];
    return deflate(marshal(new RubyUserDump('Gem::Specification', marshal(fields))));
  }

  /** The compact index's info file of a gem; undefined when the owner has no such gem. */
  async info(owner: UserRow, name: string): Promise<string | undefined> {
    const rows = await store.gemFiles(this.deps.db, owner.id, { lowerName: name.toLowerCase() });
    if (!rows.length) return undefined;
    const req = (r: Requirement) => r.map(([op, v]) => `${op} ${v}`).join('&');
    const lines = rows.map((r) => {
      const m = metadataOf(r.metadata_json);
      const deps = m.dependencies
        .filter((d) => d.type === 'runtime')
        .map((d) => `${d.name}:${req(d.requirements)}`)
        .join(',');
      const platform = m.platform === 'ruby' ? '' : `-${m.platform}`;
      const extra = [`checksum:${r.hash_sha256}`, `ruby:${req(m.required_ruby_version)}`];
      extra.push(`rubygems:${req(m.required_rubygems_version)}`);
      return `${r.version}${platform} ${deps}|${extra.join(',')}\n`;
    });
    return `---\n${lines.join('')}`;
  }

  /** The compact index's versions file. */
  async versions(owner: UserRow): Promise<string> {
    const rows = await store.gemFiles(this.deps.db, owner.id);
    const byName = new Map<string, string[]>();
    for (const r of rows) {
      const m = metadataOf(r.metadata_json);
      const v = m.platform === 'ruby' ? r.version : `${r.version}-${m.platform}`;
      byName.set(r.name, [...(byName.get(r.name) ?? []), v]);
    }
    let out = `created_at: ${new Date(0).toISOString().replace('.000Z', 'Z')}\n---\n`;
    for (const [name, versions] of byName) {
      const info = (await this.info(owner, name)) ?? '';
      out += `${name} ${versions.join(',')} ${crypto.createHash('md5').update(info).digest('hex')}\n`;
    }
    return out;
  }

  /** The gem named by a file name (`{name}-{version}[-{platform}].gem`); undefined when there is none. */
  async findFile(owner: UserRow, fileName: string): Promise<{ name: string; version: string } | undefined> {
    const [row] = await store.gemFiles(this.deps.db, owner.id, { fileName });
    return row && { name: row.name, version: row.version };
  }
}
