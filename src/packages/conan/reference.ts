// Conan references as Forgejo reads them from a request's path: a recipe
// `name/version@user/channel#revision` (`_` for no user and channel, both or neither) and a
// package `reference#revision` of a recipe. A file's composite key names the recipe (or package)
// revision it belongs to: `user|channel|rrev` for recipe files, `user|channel|rrev|pref|prev` for
// package files; a missing revision is `0` (what Conan v1 clients, which know none, get).
import { badRequest } from '../../errors.js';

/** The revision of files uploaded without one. */
export const DEFAULT_REVISION = '0';

/** Names, versions' users and channels (Conan's own limits: 2 to 51 characters). */
const NAME = /^[a-zA-Z0-9_][a-zA-Z0-9_+.-]{1,50}$/;
const REVISION = /^[a-zA-Z0-9]{1,51}$/;

export interface RecipeRef {
  name: string;
  version: string;
  /** '' when the recipe has no user and channel. */
  user: string;
  channel: string;
  /** '' when the request names none. */
  revision: string;
}

export interface PackageRef {
  recipe: RecipeRef;
  reference: string;
  revision: string;
}

const invalid = () => badRequest('could not validate one or more reference fields');

/** A recipe reference from path parts (400 when a part is not valid). */
export function recipeRef(
  name: string,
  version: string,
  user: string,
  channel: string,
  revision = '',
): RecipeRef {
  if (user === '_') user = '';
  if (channel === '_') channel = '';
  if ((user === '') !== (channel === '')) throw invalid();
  if (!NAME.test(name)) throw invalid();
  const v = version.trim();
  if (v === '' || v.length > 255) throw invalid();
  if (user !== '' && !NAME.test(user)) throw invalid();
  if (channel !== '' && !NAME.test(channel)) throw invalid();
  if (revision !== '' && !REVISION.test(revision)) throw invalid();
  return { name, version: v, user, channel, revision };
}

/** A package reference of a recipe (400 when not valid). */
export function packageRef(recipe: RecipeRef, reference: string, revision = ''): PackageRef {
  if (!REVISION.test(reference)) throw invalid();
  if (revision !== '' && !REVISION.test(revision)) throw invalid();
  return { recipe, reference, revision };
}

export const revisionOrDefault = (revision: string) => revision || DEFAULT_REVISION;

/** `name/version@user/channel` (without `@` when there is no user). */
export function recipeString(r: { name: string; version: string; user: string; channel: string }): string {
  const base = `${r.name}/${r.version}`;
  return r.user && r.channel ? `${base}@${r.user}/${r.channel}` : base;
}

/** The path of a recipe revision in download and upload URLs. */
export function recipeLink(r: RecipeRef): string {
  const enc = encodeURIComponent;
  return [r.name, r.version, r.user || '_', r.channel || '_', revisionOrDefault(r.revision)]
    .map(enc)
    .join('/');
}

export const packageLink = (p: PackageRef) => `${p.reference}/${revisionOrDefault(p.revision)}`;

export const recipeKey = (r: RecipeRef) => `${r.user}|${r.channel}|${revisionOrDefault(r.revision)}`;

export const packageKey = (p: PackageRef) =>
  `${recipeKey(p.recipe)}|${p.reference}|${revisionOrDefault(p.revision)}`;

/** What a file's composite key says (undefined for a key that is no Conan key). */
export interface FileKey {
  user: string;
  channel: string;
  recipeRevision: string;
  /** Package files only. */
  packageReference?: string;
  packageRevision?: string;
}

export function parseKey(key: string): FileKey | undefined {
  const parts = key.split('|');
  if (parts.length !== 3 && parts.length !== 5) return undefined;
  const [user = '', channel = '', recipeRevision = '', packageReference, packageRevision] = parts;
  return parts.length === 3
    ? { user, channel, recipeRevision }
    : {
        user,
        channel,
        recipeRevision,
        packageReference: packageReference!,
        packageRevision: packageRevision!,
      };
}

/** The files a recipe revision and a package revision may hold. */
export const RECIPE_FILES = new Set([
  'conanfile.py',
  'conanmanifest.txt',
  'conan_sources.tgz',
  'conan_export.tgz',
]);
export const PACKAGE_FILES = new Set(['conaninfo.txt', 'conanmanifest.txt', 'conan_package.tgz']);

/** The file properties Forgejo keeps on every Conan file. */
export const Prop = {
  recipeUser: 'conan.recipe.user',
  recipeChannel: 'conan.recipe.channel',
  recipeRevision: 'conan.recipe.revision',
  packageReference: 'conan.package.reference',
  packageRevision: 'conan.package.revision',
  packageInfo: 'conan.package.info',
} as const;
