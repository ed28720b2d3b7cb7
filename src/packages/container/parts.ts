// Where the parts of a container upload session are kept in the packages store: flat keys under
// `tmp/` (no directory per upload, which a file system would keep, empty, once the upload ends).
// A part is referenced while its session's row exists (sessions outlive a restart: a client may
// go on with one), so the sweep leaves it alone.

export const partKey = (upload: string, n: number) => `tmp/container-${upload}-${String(n).padStart(8, '0')}`;

/** The upload session a key is a part of, if it is one. */
export function uploadOfPart(key: string): string | undefined {
  return /^tmp\/container-([0-9a-f-]{36})-\d{8}$/.exec(key)?.[1];
}
