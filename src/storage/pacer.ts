// Garbage-collection pacing for large streamed bodies. Every socket read and file read allocates
// a fresh Buffer; they die at once, but V8 frees their memory only when a collection runs, and
// memory outside its heap triggers one only after about 64 MB of growth. Streaming a 256 MiB
// blob therefore swelled the server's RSS by 50-60 MB of dead buffers. Counting the bytes the
// storage layer streams and asking for a young-generation collection (a scavenge: well under a
// millisecond when, as here, almost nothing survives) every PACE_BYTES keeps that bounded.
import { Transform, type TransformCallback } from 'node:stream';
import v8 from 'node:v8';
import vm from 'node:vm';

const PACE_BYTES = 8 << 20;

type Gc = (options: { type: 'minor' | 'major'; execution?: 'sync' | 'async' }) => void;
let gc: Gc | null | undefined;
let streamed = 0;

function collector(): Gc | null {
  if (gc === undefined) {
    try {
      v8.setFlagsFromString('--expose-gc');
      gc = vm.runInNewContext('gc') as Gc;
    } catch {
      gc = null;
    }
  }
  return gc;
}

/** Counts `bytes` streamed; every PACE_BYTES, a young-generation collection. */
export function paceStreamed(bytes: number): void {
  streamed += bytes;
  if (streamed < PACE_BYTES) return;
  streamed = 0;
  collector()?.({ type: 'minor' });
}

/** A pass-through stream that counts what passes for `paceStreamed`. */
export class PacedStream extends Transform {
  constructor(highWaterMark = 1 << 20) {
    super({ highWaterMark });
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    paceStreamed(chunk.length);
    done(null, chunk);
  }
}
