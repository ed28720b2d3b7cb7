// Reading an uploaded tar archive (uncompressed, or gzip-, bzip2-, xz- or zstd-compressed) to its end before anything
// of the upload is kept: the compression's own checks (gzip's CRC and length, bzip2's block CRCs,
// zstd's frame checksums) and tar's headers then prove the whole file sound, and the few members
// a format needs are kept in memory. Anything else is a 400 naming the problem.
//
// gzip is zlib's; bzip2, xz and zstd are the system tools (`bzip2 -dc`, `xz -dc`, `zstd -dc`),
// which the Conda and Debian formats need. Members' contents stream past without being held, and the unpacked size
// is bounded (a small upload may not unpack to terabytes).
import { spawn } from 'node:child_process';
import { PassThrough, Transform, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import tar from 'tar-stream';
import { badRequest } from '../errors.js';

export type Codec = 'none' | 'gzip' | 'bzip2' | 'xz' | 'zstd';

/** The most of a kept member read into memory. */
export const MAX_KEPT = 4 << 20;
/** Unpacked bytes allowed beyond `UNPACK_RATIO` times the compressed size. */
const UNPACK_SLACK = 64 << 20;
const UNPACK_RATIO = 64;

export interface TarContents {
  /** File members read. */
  files: number;
  /** The contents of the members `keep` named, by name (without a leading `./`). */
  kept: Map<string, Buffer>;
}

const codecName: Record<Codec, string> = {
  none: 'tar',
  gzip: 'gzip',
  bzip2: 'bzip2',
  xz: 'xz',
  zstd: 'zstd',
};

/**
 * Reads the tar archive in `source` (`size` compressed bytes, compressed with `codec`) to its end,
 * keeping the file members `keep` names. `what` names the file in errors ("the tarball").
 */
export function readTar(
  source: Readable,
  size: number,
  codec: Codec,
  what: string,
  keep: (name: string) => boolean = () => false,
): Promise<TarContents> {
  return new Promise<TarContents>((resolve, reject) => {
    const kept = new Map<string, Buffer>();
    const maxUnpacked = size * UNPACK_RATIO + UNPACK_SLACK;
    let files = 0;
    let unpacked = 0;
    let settled = false;
    let tarDone = false;
    let codecDone = codec === 'gzip' || codec === 'none';
    const extract = tar.extract();
    const counter = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        unpacked += chunk.length;
        if (unpacked > maxUnpacked) {
          return cb(badRequest(`${what} unpacks to more than ${maxUnpacked} bytes`));
        }
        cb(null, chunk);
      },
    });
    let decoder: Transform | PassThrough;
    let child: ReturnType<typeof spawn> | undefined;

    const finish = (err?: unknown) => {
      if (settled) return;
      settled = true;
      source.destroy();
      decoder.destroy();
      counter.destroy();
      extract.destroy();
      if (child && child.exitCode === null) child.kill();
      if (err) reject(err instanceof Error ? err : new Error(String(err)));
      else resolve({ files, kept });
    };
    const bad = (problem: string) => finish(badRequest(`${what} ${problem}`));

    if (codec === 'none') {
      decoder = new PassThrough();
      source.on('error', (err) => finish(err));
      source.pipe(decoder);
    } else if (codec === 'gzip') {
      decoder = zlib.createGunzip();
      decoder.on('error', (err) => bad(`is not a valid gzip file: ${err.message}`));
      source.on('error', (err) => finish(err));
      source.pipe(decoder);
    } else {
      // The tool's exit status judges the data; its output is the tar.
      const tool = spawn(codec, ['-dcq'], { stdio: ['pipe', 'pipe', 'ignore'] });
      child = tool;
      decoder = new PassThrough();
      tool.on('error', (err) => finish(err));
      tool.stdin.on('error', () => undefined); // it gave up on bad data: its status says so
      tool.stdout.on('error', () => undefined);
      tool.on('close', (code) => {
        if (settled) return;
        if (code !== 0) return bad(`is not valid ${codecName[codec]} data`);
        codecDone = true;
        if (tarDone) finish();
      });
      source.on('error', (err) => finish(err));
      source.pipe(tool.stdin);
      tool.stdout.pipe(decoder);
    }
    counter.on('error', (err) => finish(err));
    extract.on('error', (err: Error) => bad(`is not a valid tar archive: ${err.message}`));
    extract.on('entry', (header, stream, next) => {
      // A member cut short errs too: the archive's own error (above) says so.
      stream.on('error', () => undefined);
      const name = header.name.replace(/^(\.\/)+/, '');
      const wanted = header.type === 'file' && keep(name);
      if (header.type === 'file') files++;
      if (!wanted) {
        stream.on('end', () => next());
        stream.resume();
        return;
      }
      const chunks: Buffer[] = [];
      let length = 0;
      stream.on('data', (data: unknown) => {
        const c = data as Buffer;
        length += c.length;
        if (length > MAX_KEPT) bad(`holds ${name}, larger than ${MAX_KEPT} bytes`);
        else chunks.push(c);
      });
      stream.on('end', () => {
        kept.set(name, Buffer.concat(chunks));
        next();
      });
    });
    extract.on('finish', () => {
      tarDone = true;
      if (codecDone) finish();
    });
    decoder.pipe(counter).pipe(extract);
  });
}
