// Reading a Conda package's info/index.json and info/about.json from the stored file, and
// checking the whole package sound on the way, without holding the archive in memory:
// - `.tar.bz2`: the file streams through the system `bzip2 -dc` into a tar reader, to its end.
// - `.conda`: a zip (conda-package-handling writes it uncompressed) holding metadata.json,
//   `info-*.tar.zst` and `pkg-*.tar.zst`. The zip's central directory is read from the end of the
//   file; the info member streams through `zstd -dc` into the tar reader, and so does the payload
//   member (its files are not kept: only its soundness is checked).
import { badRequest } from '../../errors.js';
import type { StoredFile } from '../service.js';
import { readTar } from '../tar.js';
import { openZipMember, readZipDirectory, type ZipEntry } from '../zip.js';

export interface InfoFiles {
  index: Buffer;
  about: Buffer | undefined;
}

export type CondaKind = 'tar.bz2' | 'conda';

export function kindOf(filename: string): CondaKind | undefined {
  if (filename.endsWith('.tar.bz2')) return 'tar.bz2';
  if (filename.endsWith('.conda')) return 'conda';
  return undefined;
}

const INFO = new Set(['info/index.json', 'info/about.json']);

/** info/index.json and info/about.json of the stored package file (400 when it is not one). */
export async function readInfo(kind: CondaKind, file: StoredFile): Promise<InfoFiles> {
  if (kind === 'tar.bz2') {
    const tar = await readTar(await file.open(), file.size, 'bzip2', 'the .tar.bz2 package', (n) =>
      INFO.has(n),
    );
    return infoOf(tar.kept);
  }
  const entries = await readZipDirectory(file, 'the .conda package');
  const member = (pattern: RegExp, what: string): ZipEntry => {
    const found = entries.find((e) => pattern.test(e.name));
    if (!found) throw badRequest(`the .conda package has no ${what} member`);
    return found;
  };
  const info = member(/^info-.+\.tar\.zst$/, 'info-*.tar.zst');
  const pkg = member(/^pkg-.+\.tar\.zst$/, 'pkg-*.tar.zst');
  const infoTar = await readTar(
    await openZipMember(file, info, 'the .conda package'),
    info.compressedSize,
    'zstd',
    `the .conda member ${info.name}`,
    (n) => INFO.has(n),
  );
  await readTar(
    await openZipMember(file, pkg, 'the .conda package'),
    pkg.compressedSize,
    'zstd',
    `the .conda member ${pkg.name}`,
  );
  return infoOf(infoTar.kept);
}

function infoOf(kept: Map<string, Buffer>): InfoFiles {
  const index = kept.get('info/index.json');
  if (!index) throw badRequest('the package has no info/index.json');
  return { index, about: kept.get('info/about.json') };
}
