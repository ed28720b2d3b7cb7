// The CRAN format: source packages (`.tar.gz`) and binary packages (`.zip`, per platform and R
// version) of one version side by side, each file told apart by its composite key (empty for the
// source, `{platform}|{rversion}` for a binary, as in Forgejo) and Forgejo's file properties
// (`cran.type`, `cran.platform`, `cran.rvserion`, spelled as there). The PACKAGES index lists the
// newest version of each package that has a file of the kind asked for.
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Db } from '../../db/database.js';
import { badRequest } from '../../errors.js';
import type { UserRow } from '../../users/tables.js';
import type { PackageService } from '../service.js';
import * as pkgStore from '../store.js';
import { PropertyRef } from '../tables.js';
import { compareCranVersions, readCranPackage, type CranMetadata, type CranPackage } from './description.js';
import * as store from './store.js';

const gzip = promisify(zlib.gzip);

/** Where a file belongs: the source tree, or a binary tree of a platform and R version. */
export type CranTree = { type: 'source' } | { type: 'binary'; platform: string; rversion: string };

const keyOf = (tree: CranTree) => (tree.type === 'source' ? '' : `${tree.platform}|${tree.rversion}`);
/** Platforms and R versions are path segments of R's repository layout. */
const SEGMENT = /^[A-Za-z0-9._-]{1,100}$/;

export interface CranServiceDeps {
  db: Db;
  packages: PackageService;
}

export class CranService {
  constructor(private readonly deps: CranServiceDeps) {}

  /** A binary upload's tree (400 unless platform and rversion are both given and plain). */
  static binaryTree(platform: string, rversion: string): CranTree {
    if (!platform || !rversion) throw badRequest('platform and rversion are required');
    if (
      !SEGMENT.test(platform) ||
      !SEGMENT.test(rversion) ||
      /^\.+$/.test(platform) ||
      /^\.+$/.test(rversion)
    ) {
      throw badRequest('invalid platform or rversion');
    }
    return { type: 'binary', platform, rversion };
  }

  /** Stores a package file (409 when the version has that file already). */
  async upload(
    owner: UserRow,
    creator: UserRow,
    tree: CranTree,
    data: Readable,
    announced?: number,
  ): Promise<CranPackage> {
    let pkg: CranPackage | undefined;
    await this.deps.packages.addFile(
      {
        owner,
        creator,
        type: 'cran',
        isLead: true,
        data,
        newVersionOnly: false,
        compositeKey: keyOf(tree),
        describe: async (stored) => {
          pkg = await readCranPackage(stored);
          if ((tree.type === 'source') !== (pkg.extension === '.tar.gz')) {
            throw badRequest(
              tree.type === 'source'
                ? 'a source package must be a gzipped tarball'
                : 'a binary package must be a zip',
            );
          }
          return {
            name: pkg.name,
            version: pkg.version,
            fileName: `${pkg.name}_${pkg.version}${pkg.extension}`,
            metadata: JSON.stringify(pkg.metadata),
          };
        },
        inTransaction: async (tx, _p, _v, _created, fileId) => {
          await pkgStore.addProperty(tx, PropertyRef.file, fileId, 'cran.type', tree.type);
          if (tree.type === 'binary') {
            await pkgStore.addProperty(tx, PropertyRef.file, fileId, 'cran.platform', tree.platform);
            await pkgStore.addProperty(tx, PropertyRef.file, fileId, 'cran.rvserion', tree.rversion);
          }
        },
      },
      announced,
    );
    return pkg!;
  }

  /** The PACKAGES index of a tree (gzipped when asked); undefined when the tree has no package (404, as Forgejo). */
  async index(owner: UserRow, tree: CranTree, gz: boolean): Promise<string | Buffer | undefined> {
    const key = keyOf(tree);
    const newest = new Map<string, store.CranFileRow>();
    for (const row of await store.cranFiles(this.deps.db, owner.id)) {
      if (row.composite_key !== key) continue;
      const seen = newest.get(row.name);
      if (!seen || compareCranVersions(row.version, seen.version) > 0) newest.set(row.name, row);
    }
    if (!newest.size) return undefined;
    const stanzas = [...newest.values()].map((row) => {
      const m = JSON.parse(row.metadata_json) as CranMetadata;
      const lines = [`Package: ${row.name}`, `Version: ${row.version}`];
      if (m.license) lines.push(`License: ${m.license}`);
      if (m.depends?.length) lines.push(`Depends: ${m.depends.join(', ')}`);
      if (m.imports?.length) lines.push(`Imports: ${m.imports.join(', ')}`);
      if (m.linking_to?.length) lines.push(`LinkingTo: ${m.linking_to.join(', ')}`);
      if (m.suggests?.length) lines.push(`Suggests: ${m.suggests.join(', ')}`);
      lines.push(`NeedsCompilation: ${m.needs_compilation ? 'yes' : 'no'}`, `MD5sum: ${row.hash_md5}`);
      // Field values are single lines (continuations were joined when the DESCRIPTION was read).
      return lines.map((l) => l.replace(/[\r\n]+/g, ' ')).join('\n') + '\n';
    });
    const text = stanzas.join('\n');
    return gz ? gzip(text) : text;
  }

  /** The package and version of a file of a tree; undefined when there is none. */
  async findFile(
    owner: UserRow,
    tree: CranTree,
    fileName: string,
  ): Promise<{ name: string; version: string; key: string } | undefined> {
    const key = keyOf(tree);
    const row = (await store.cranFiles(this.deps.db, owner.id, fileName)).find(
      (r) => r.composite_key === key,
    );
    return row && { name: row.name, version: row.version, key };
  }
}
