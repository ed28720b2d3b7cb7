// The requests of the integration hooks, as Forgejo makes them: packagist's package update (the
// same body for every event) and a SourceHut build job submitted for pushes and created refs, its
// manifest read from the repository at the pushed commit and adjusted (the commit's source,
// BUILD_SUBMITTER, GIT_REF), as services/webhook/{packagist.go,sourcehut/builds.go} do. Pure: the
// manifest is read by the caller (./builds.ts).
import type * as Yaml from 'yaml';
import { lazyModule } from '../lazy.js';
import { obj, shortRef, str, type Json } from './render-info.js';

/** yaml, loaded on first use (not at start-up). */
const yaml = lazyModule<typeof Yaml>('yaml');

export function packagist(meta: Record<string, unknown>): Json {
  return { repository: { url: str(meta['package_url']) } };
}

/** What the caller read of the manifest: its text, or the problem (shown in the delivery history). */
export type ManifestRead = { text: string } | { error: string };

/** The commit and full ref a build is submitted for, or undefined when the event starts none. */
export function buildTarget(
  event: string,
  p: Json,
): { commit: string; ref: string; note: string } | undefined {
  if (event === 'push') {
    const head = obj(p['head_commit']);
    const commit = str(head['id']);
    if (!commit) return undefined;
    return { commit, ref: str(p['ref']), note: str(head['message']) };
  }
  if (event === 'create') {
    const type = str(p['ref_type']);
    const name = shortRef(str(p['ref']));
    const ref = str(p['ref']).startsWith('refs/')
      ? str(p['ref'])
      : `refs/${type === 'tag' ? 'tags' : 'heads'}/${name}`;
    return { commit: str(p['sha']), ref, note: `${type} ${name} created` };
  }
  return undefined;
}

const BUILD_QUERY = `mutation (
	$manifest: String!
	$tags: [String!]
	$note: String!
	$secrets: Boolean!
	$execute: Boolean!
	$visibility: Visibility!
) {
	submit(
		manifest: $manifest
		tags: $tags
		note: $note
		secrets: $secrets
		execute: $execute
		visibility: $visibility
	) {
		id
	}
}`;

/** Go's git.RefName(ref).RefType(). */
function refType(ref: string): string {
  if (ref.startsWith('refs/heads/')) return 'branch';
  if (ref.startsWith('refs/tags/')) return 'tag';
  if (ref.startsWith('refs/pull/')) return 'pull';
  if (ref.startsWith('refs/for/')) return 'for';
  return '';
}

/**
 * The manifest as submitted: the repository's clone address pinned to the commit among its
 * sources (the SSH one for private repositories), and the submitter's environment.
 */
export function adjustManifest(
  text: string,
  repo: Json,
  commit: string,
  ref: string,
  rootUrl: string,
): string {
  const doc: unknown = yaml().parse(text);
  const m = doc && typeof doc === 'object' && !Array.isArray(doc) ? (doc as Record<string, unknown>) : {};
  const sources = Array.isArray(m['sources']) ? (m['sources'] as unknown[]).map((s) => str(s)) : [];
  const envIn = m['environment'] && typeof m['environment'] === 'object' ? (m['environment'] as Json) : {};
  const env: Record<string, unknown> = { ...envIn };
  env['BUILD_SUBMITTER'] = 'forgejo';
  env['BUILD_SUBMITTER_URL'] = rootUrl;
  env['GIT_REF'] = ref;
  const clone = str(repo['clone_url']);
  const ssh = str(repo['ssh_url']);
  const at = sources.findIndex((s) => s === clone || s === ssh);
  if (at >= 0) sources[at] = `${sources[at]}#${commit}`;
  else sources.push(`${repo['private'] === true ? ssh : clone}#${commit}`);
  const out: Record<string, unknown> = { sources, environment: sortKeys(env) };
  for (const k of Object.keys(m).sort()) {
    if (k !== 'sources' && k !== 'environment') out[k] = m[k];
  }
  return yaml().stringify(out, { indent: 4 });
}

const sortKeys = (o: Record<string, unknown>) =>
  Object.fromEntries(
    Object.keys(o)
      .sort()
      .map((k) => [k, o[k]]),
  );

/** Forgejo's graphql body of a build submission (or of the problem, when the manifest is unusable). */
export function sourcehutBuild(
  event: string,
  p: Json,
  meta: Record<string, unknown>,
  manifest: ManifestRead | undefined,
  rootUrl: string,
): Json | null {
  const target = buildTarget(event, p);
  if (!target || !manifest) return null;
  const repo = obj(p['repository']);
  const fullName = str(repo['full_name']);
  const path = str(meta['manifest_path']);
  let text: string | undefined;
  let problem = 'error' in manifest ? manifest.error : undefined;
  if ('text' in manifest) {
    try {
      text = adjustManifest(manifest.text, repo, target.commit, target.ref, rootUrl);
    } catch {
      problem = `could not decode manifest "${path}"`;
    }
  }
  if (text === undefined) {
    return {
      error: `${fullName}:${target.ref} ${problem ?? ''}`,
      variables: { manifest: '', tags: null, note: '', secrets: false, execute: false, visibility: '' },
    };
  }
  return {
    query: BUILD_QUERY,
    variables: {
      manifest: text,
      tags: [fullName, `${refType(target.ref)}/${shortRef(target.ref)}`, path],
      note: target.note,
      secrets: meta['secrets'] === true,
      execute: true,
      visibility: str(meta['visibility']) || 'PRIVATE',
    },
  };
}
