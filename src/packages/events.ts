// What package events carry, and the web address of a version (webhook payloads, quota lists).
// Small on purpose: the event bus and webhooks import it.

/** A version as package events carry it (the row may be gone by the time a listener runs). */
export interface PackageEventInfo {
  versionId: number;
  ownerId: number;
  repoId: number | null;
  creatorId: number | null;
  type: string;
  name: string;
  version: string;
  createdUnix: number;
}

export function packageHtmlUrl(
  root: string,
  owner: string,
  type: string,
  name: string,
  version: string,
): string {
  return `${root}${encodeURIComponent(owner)}/-/packages/${type}/${encodeURIComponent(name)}/${encodeURIComponent(version)}`;
}
