// Reading a SourceHut build manifest from a repository at a commit, for the build jobs of
// sourcehut_builds hooks (./render-builds.ts): its text, or what went wrong in Forgejo's words (a
// delivery then shows the problem instead of submitting a build).
import { isHexOid, readBlob } from '../git/data.js';
import { entryAt } from '../git/trees.js';
import type { ManifestRead } from './render-builds.js';

/** Manifests larger than this are not read. */
const MAX_MANIFEST = 1 << 20;

export async function readManifest(dir: string, commit: string, path: string): Promise<ManifestRead> {
  if (!isHexOid(commit)) return { error: `could not get commit "${commit}"` };
  let entry: Awaited<ReturnType<typeof entryAt>>;
  try {
    entry = await entryAt(dir, commit, path);
  } catch {
    return { error: `could not get commit "${commit}"` };
  }
  if (!entry || entry.type !== 'blob') return { error: `could not open manifest "${path}"` };
  if (entry.size > MAX_MANIFEST) return { error: `could not read manifest "${path}"` };
  try {
    return { text: (await readBlob(dir, entry.oid)).toString('utf8') };
  } catch {
    return { error: `could not read manifest "${path}"` };
  }
}
