// What an uploaded picture is, read from its first bytes: PNG, JPEG, GIF or WebP, and its width and
// height from the header (no decoding, no native code). Anything else is not an image.

export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';

export interface ImageInfo {
  format: ImageFormat;
  /** The Content-Type it is served with. */
  mime: string;
  width: number;
  height: number;
}

const MIME: Record<ImageFormat, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

const ascii = (b: Buffer, at: number, text: string) =>
  b.length >= at + text.length && b.toString('latin1', at, at + text.length) === text;

function png(b: Buffer): [number, number] | undefined {
  // The signature, then the IHDR chunk: length, "IHDR", width, height (big-endian).
  if (b.length < 24 || !b.subarray(0, 8).equals(PNG_SIGNATURE) || !ascii(b, 12, 'IHDR')) return undefined;
  return [b.readUInt32BE(16), b.readUInt32BE(20)];
}

function gif(b: Buffer): [number, number] | undefined {
  if (b.length < 10 || !(ascii(b, 0, 'GIF87a') || ascii(b, 0, 'GIF89a'))) return undefined;
  return [b.readUInt16LE(6), b.readUInt16LE(8)];
}

/** Start-of-frame markers (baseline, progressive, lossless, arithmetic): they carry the size. */
const SOF = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);

function jpeg(b: Buffer): [number, number] | undefined {
  if (b.length < 4 || b[0] !== 0xff || b[1] !== 0xd8 || b[2] !== 0xff) return undefined;
  // Walk the marker segments up to the first frame header.
  let at = 2;
  while (at + 1 < b.length) {
    if (b[at] !== 0xff) return undefined;
    let marker = b[at + 1]!;
    while (marker === 0xff && at + 2 < b.length) marker = b[++at + 1]!;
    at += 2;
    // Markers without a segment: TEM, RSTn, SOI.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) continue;
    if (marker === 0xd9 || marker === 0xda || at + 2 > b.length) return undefined;
    const length = b.readUInt16BE(at);
    if (length < 2) return undefined;
    if (SOF.has(marker)) {
      if (at + 7 > b.length) return undefined;
      return [b.readUInt16BE(at + 5), b.readUInt16BE(at + 3)];
    }
    at += length;
  }
  return undefined;
}

function webp(b: Buffer): [number, number] | undefined {
  if (b.length < 30 || !ascii(b, 0, 'RIFF') || !ascii(b, 8, 'WEBP')) return undefined;
  if (ascii(b, 12, 'VP8 ')) {
    // Lossy: a frame tag, the start code 9d 01 2a, then 14-bit width and height.
    if (b[23] !== 0x9d || b[24] !== 0x01 || b[25] !== 0x2a) return undefined;
    return [b.readUInt16LE(26) & 0x3fff, b.readUInt16LE(28) & 0x3fff];
  }
  if (ascii(b, 12, 'VP8L')) {
    // Lossless: the signature 0x2f, then width - 1 and height - 1 in 14 bits each.
    if (b[20] !== 0x2f) return undefined;
    const bits = b.readUInt32LE(21);
    return [(bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1];
  }
  if (ascii(b, 12, 'VP8X')) {
    // Extended: canvas width - 1 and height - 1, 24 bits each.
    return [b.readUIntLE(24, 3) + 1, b.readUIntLE(27, 3) + 1];
  }
  return undefined;
}

const READERS: Array<[ImageFormat, (b: Buffer) => [number, number] | undefined]> = [
  ['png', png],
  ['jpeg', jpeg],
  ['gif', gif],
  ['webp', webp],
];

/** The picture's format and size, or undefined when it is none of PNG, JPEG, GIF and WebP. */
export function imageInfo(data: Buffer): ImageInfo | undefined {
  for (const [format, read] of READERS) {
    const size = read(data);
    if (!size) continue;
    const [width, height] = size;
    if (width <= 0 || height <= 0) return undefined;
    return { format, mime: MIME[format], width, height };
  }
  return undefined;
}
