// The Conan format (Conan v1 and v2 protocols, as Forgejo serves them): a package per recipe name,
// a version per recipe version; every recipe revision's and package revision's files are files of
// that version, told apart by their composite key (reference.ts) and carrying Forgejo's file
// properties (user, channel, revisions, package reference, the package's conaninfo.txt). The
// same file uploaded again replaces the earlier one. conanfile.py gives the version's metadata.
// Deleting removes the matching files in one transaction; the version goes with its last file.
import type { Readable } from 'node:stream';
import type { Identity } from '../../auth/identity.js';
import type { Db } from '../../db/database.js';
import { badRequest, notFound } from '../../errors.js';
import type { UserRow } from '../../users/tables.js';
import type { PackageService, StoredFile } from '../service.js';
import * as pkgStore from '../store.js';
import { PropertyRef, type FileWithBlob, type PackageRow, type VersionRow } from '../tables.js';
import { parseConanfile, parseConaninfo, type Conaninfo } from './conanfile.js';
import {
  packageKey,
  parseKey,
  Prop,
  recipeKey,
  recipeString,
  revisionOrDefault,
  type FileKey,
  type PackageRef,
  type RecipeRef,
} from './reference.js';
import * as store from './store.js';

export interface ConanServiceDeps {
  db: Db;
  packages: PackageService;
}

/** A revision as the v2 API lists it. */
export interface RevisionInfo {
  revision: string;
  time: string;
}

type KeyedFile = store.ConanFileRow & { key: FileKey };

/** Which files a deletion takes: those of a user and channel, narrowed by what is given. */
export interface FileFilter {
  recipeRevision?: string;
  /** Only package files (of this reference when given). */
  packages?: boolean;
  packageReference?: string;
  packageRevision?: string;
}

/** Conan's time stamps: RFC 3339 without fractions. */
const rfc3339 = (unix: number) => new Date(unix * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Distinct values, newest upload first (the time of a value is its newest file's). */
function newestFirst(files: KeyedFile[], valueOf: (f: KeyedFile) => string | undefined): RevisionInfo[] {
  const seen = new Map<string, { time: number; id: number }>();
  for (const f of files) {
    const v = valueOf(f);
    if (v === undefined) continue;
    const at = seen.get(v) ?? { time: 0, id: 0 };
    seen.set(v, { time: Math.max(at.time, f.created_unix), id: Math.max(at.id, f.id) });
  }
  return [...seen.entries()]
    .sort(([, a], [, b]) => b.time - a.time || b.id - a.id)
    .map(([revision, at]) => ({ revision, time: rfc3339(at.time) }));
}

/** A glob of Conan's search (`*` any text) as a test. */
function globTest(pattern: string, caseless: boolean): (value: string) => boolean {
  if (!pattern.includes('*')) return caseless ? (v) => v.toLowerCase() === pattern : (v) => v === pattern;
  const re = new RegExp(
    `^${pattern
      .split('*')
      .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
    caseless ? 'is' : 's',
  );
  return (v) => re.test(v);
}

async function readHead(stored: StoredFile, limit: number): Promise<string> {
  if (stored.size === 0) return '';
  const chunks: Buffer[] = [];
  for await (const c of await stored.open({ start: 0, end: Math.min(stored.size, limit) - 1 })) {
    chunks.push(c as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export class ConanService {
  constructor(private readonly deps: ConanServiceDeps) {}

  /** The files of a recipe's name and version (none when the package is absent or unreadable). */
  private async files(owner: UserRow, identity: Identity | null, ref: RecipeRef): Promise<KeyedFile[]> {
    const pkg = await this.deps.packages.getPackage(owner, 'conan', ref.name);
    if (!pkg) return [];
    await this.deps.packages.assertCanReadPackage(pkg, identity);
    const rows = await store.conanFiles(this.deps.db, owner.id, {
      lowerName: ref.name.toLowerCase(),
      lowerVersion: ref.version.toLowerCase(),
    });
    return rows.flatMap((r) => {
      const key = parseKey(r.composite_key);
      return key && key.user === ref.user && key.channel === ref.channel ? [{ ...r, key }] : [];
    });
  }

  /** Stores a recipe file (no `pref`) or a package file; an existing one is replaced. */
  async upload(
    owner: UserRow,
    creator: UserRow,
    ref: RecipeRef,
    pref: PackageRef | null,
    fileName: string,
    data: Readable,
    announced?: number,
  ): Promise<void> {
    const isConanfile = fileName === 'conanfile.py';
    const isConaninfo = fileName === 'conaninfo.txt';
    let metadata: string | undefined;
    const props: Array<[string, string]> = [
      [Prop.recipeUser, ref.user],
      [Prop.recipeChannel, ref.channel],
      [Prop.recipeRevision, revisionOrDefault(ref.revision)],
    ];
    if (pref) {
      props.push(
        [Prop.packageReference, pref.reference],
        [Prop.packageRevision, revisionOrDefault(pref.revision)],
      );
    }
    const compositeKey = pref ? packageKey(pref) : recipeKey(ref);
    // What a file's key may hold on every database (a key column of 255 characters on MySQL).
    if (compositeKey.length > 255) throw badRequest('the reference is too long');
    await this.deps.packages.addFile(
      {
        owner,
        creator,
        type: 'conan',
        isLead: isConanfile,
        data,
        newVersionOnly: false,
        overwrite: true,
        compositeKey,
        describe: async (stored) => {
          if (isConanfile) metadata = JSON.stringify(parseConanfile(await readHead(stored, 1 << 20)));
          if (isConaninfo) {
            props.push([Prop.packageInfo, JSON.stringify(parseConaninfo(await readHead(stored, 1 << 20)))]);
          }
          return {
            name: ref.name,
            version: ref.version,
            fileName,
            ...(metadata !== undefined ? { metadata } : {}),
          };
        },
        inTransaction: async (tx, _pkg, version, created, fileId) => {
          for (const [name, value] of props)
            await pkgStore.addProperty(tx, PropertyRef.file, fileId, name, value);
          if (!created && metadata !== undefined)
            await pkgStore.updateVersionMetadata(tx, version.id, metadata);
        },
      },
      announced,
    );
  }

  /** The files of a recipe revision (no `pref`) or package revision (404 when there are none). */
  async revisionFiles(
    owner: UserRow,
    identity: Identity | null,
    ref: RecipeRef,
    pref: PackageRef | null,
  ): Promise<KeyedFile[]> {
    const key = pref ? packageKey(pref) : recipeKey(ref);
    const files = (await this.files(owner, identity, ref)).filter((f) => f.composite_key === key);
    if (files.length === 0) throw notFound('package file does not exist');
    return files;
  }

  /** One file of a recipe or package revision, for download (404 when absent). */
  async file(
    owner: UserRow,
    identity: Identity | null,
    ref: RecipeRef,
    pref: PackageRef | null,
    fileName: string,
  ): Promise<FileWithBlob> {
    const { version } = await this.deps.packages.requireVersion(
      owner,
      'conan',
      ref.name,
      ref.version,
      identity,
    );
    return this.deps.packages.requireFile(version.id, fileName, pref ? packageKey(pref) : recipeKey(ref));
  }

  /** The recipe's revisions, newest first. */
  async recipeRevisions(owner: UserRow, identity: Identity | null, ref: RecipeRef): Promise<RevisionInfo[]> {
    return newestFirst(await this.files(owner, identity, ref), (f) => f.key.recipeRevision);
  }

  /** The package references of a recipe revision, newest first. */
  async packageReferences(
    owner: UserRow,
    identity: Identity | null,
    ref: RecipeRef,
  ): Promise<RevisionInfo[]> {
    const rev = revisionOrDefault(ref.revision);
    return newestFirst(await this.files(owner, identity, ref), (f) =>
      f.key.recipeRevision === rev ? f.key.packageReference : undefined,
    );
  }

  /** A package's revisions (of a recipe revision), newest first. */
  async packageRevisions(
    owner: UserRow,
    identity: Identity | null,
    pref: PackageRef,
  ): Promise<RevisionInfo[]> {
    const rev = revisionOrDefault(pref.recipe.revision);
    return newestFirst(await this.files(owner, identity, pref.recipe), (f) =>
      f.key.recipeRevision === rev && f.key.packageReference === pref.reference
        ? f.key.packageRevision
        : undefined,
    );
  }

  /**
   * The recipes matching a search (`name/version@user/channel`, each part a glob, missing or `*`
   * parts matching anything), as Forgejo lists them.
   */
  async searchRecipes(owner: UserRow, query: string): Promise<string[]> {
    const [name = '', version = '', user = '', channel = ''] = query
      ? query.replaceAll('@', '/').split('/')
      : [];
    const tests: Array<(f: KeyedFile) => boolean> = [];
    const part = (p: string) => (p !== '' && p !== '*' ? p : '');
    if (name) {
      const t = globTest(name.toLowerCase(), true);
      tests.push((f) => t(f.package_name.toLowerCase()));
    }
    if (part(version)) {
      const t = globTest(version.toLowerCase(), true);
      tests.push((f) => t(f.version.toLowerCase()));
    }
    if (part(user)) {
      const t = globTest(user, false);
      tests.push((f) => t(f.key.user));
    }
    if (part(channel)) {
      const t = globTest(channel, false);
      tests.push((f) => t(f.key.channel));
    }
    const out = new Set<string>();
    for (const r of await store.conanFiles(this.deps.db, owner.id)) {
      const key = parseKey(r.composite_key);
      if (r.is_lead !== 1 || !key) continue;
      const f = { ...r, key };
      if (tests.every((t) => t(f))) {
        out.add(
          recipeString({ name: r.package_name, version: r.version, user: key.user, channel: key.channel }),
        );
      }
    }
    return [...out];
  }

  /**
   * The packages of a recipe with their conaninfo.txt, each at its newest revision: of every
   * recipe revision (`allRevisions`, v1), else of the revision named or the newest one (v2).
   */
  async searchPackages(
    owner: UserRow,
    identity: Identity | null,
    ref: RecipeRef,
    allRevisions: boolean,
  ): Promise<Record<string, Conaninfo>> {
    const files = await this.files(owner, identity, ref);
    const revisions = newestFirst(files, (f) => f.key.recipeRevision).map((r) => r.revision);
    if (revisions.length === 0) throw notFound('recipe reference does not exist');
    const wanted = allRevisions ? revisions : [ref.revision || revisions[0]!];
    const result: Record<string, Conaninfo> = {};
    for (const rrev of wanted) {
      const ofRevision = files.filter((f) => f.key.recipeRevision === rrev);
      for (const { revision: reference } of newestFirst(ofRevision, (f) => f.key.packageReference)) {
        if (reference in result) continue;
        const ofPackage = ofRevision.filter((f) => f.key.packageReference === reference);
        const prev = newestFirst(ofPackage, (f) => f.key.packageRevision)[0]!.revision;
        const info = ofPackage.find((f) => f.key.packageRevision === prev && f.name === 'conaninfo.txt');
        const raw = info && (await store.packageInfos(this.deps.db, [info.id])).get(info.id);
        if (!raw) throw notFound('package reference does not exist');
        result[reference] = JSON.parse(raw) as Conaninfo;
      }
    }
    return result;
  }

  /**
   * Deletes the files of a recipe's user and channel that `filter` names, in one transaction
   * (404 when there are none); the version goes with its last file.
   */
  async deleteFiles(
    owner: UserRow,
    doer: UserRow,
    identity: Identity | null,
    ref: RecipeRef,
    filter: FileFilter,
  ): Promise<void> {
    const { pkg, version } = await this.deps.packages.requireVersion(
      owner,
      'conan',
      ref.name,
      ref.version,
      identity,
    );
    const matching = (await this.files(owner, identity, ref)).filter(
      (f) =>
        (filter.recipeRevision === undefined || f.key.recipeRevision === filter.recipeRevision) &&
        (!filter.packages || f.key.packageReference !== undefined) &&
        (filter.packageReference === undefined || f.key.packageReference === filter.packageReference) &&
        (filter.packageRevision === undefined || f.key.packageRevision === filter.packageRevision),
    );
    if (matching.length === 0) throw notFound('package reference does not exist');
    await this.remove(matching, doer, pkg, version);
  }

  /**
   * Conan v1's package deletion: the packages `references` (every package of the recipe when
   * empty) of every recipe revision; 404 for a reference with no files.
   */
  async deletePackagesV1(
    owner: UserRow,
    doer: UserRow,
    identity: Identity | null,
    ref: RecipeRef,
    references: string[],
  ): Promise<void> {
    const files = await this.files(owner, identity, ref);
    if (files.length === 0) return;
    if (references.length === 0) {
      const all = files.filter((f) => f.key.packageReference !== undefined);
      if (all.length) await this.deleteFiles(owner, doer, identity, ref, { packages: true });
      return;
    }
    for (const reference of references) {
      await this.deleteFiles(owner, doer, identity, ref, { packageReference: reference });
    }
  }

  private async remove(matching: KeyedFile[], doer: UserRow, pkg: PackageRow, version: VersionRow) {
    const ids = new Set(matching.map((f) => f.id));
    const files = (await this.deps.packages.filesOf([version.id])).filter((f) => ids.has(f.id));
    await this.deps.packages.deleteFiles(pkg, version, files, doer);
  }
}
