// Reading an image's format and size from its header: each WebP flavour, JPEG with segments before
// its frame header, and what is not a picture.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { imageInfo } from '../../src/avatars/image.js';

function webp(chunk: string, body: number[]): Buffer {
  const b = Buffer.alloc(40);
  b.write('RIFF', 0, 'latin1');
  b.writeUInt32LE(32, 4);
  b.write('WEBP', 8, 'latin1');
  b.write(chunk, 12, 'latin1');
  Buffer.from(body).copy(b, 20);
  return b;
}

describe('imageInfo', () => {
  it('reads lossy, lossless and extended WebP', () => {
    // VP8: frame tag, start code, 14-bit width 300 and height 200.
    const lossy = webp('VP8 ', [0, 0, 0, 0x9d, 0x01, 0x2a, 300 & 0xff, 300 >> 8, 200 & 0xff, 200 >> 8]);
    assert.deepEqual(imageInfo(lossy), { format: 'webp', mime: 'image/webp', width: 300, height: 200 });
    // VP8L: signature, then width - 1 = 99 and height - 1 = 49 in 14 bits each.
    const bits = 99 | (49 << 14);
    const lossless = webp('VP8L', [0x2f, bits & 0xff, (bits >> 8) & 0xff, (bits >> 16) & 0xff, bits >>> 24]);
    assert.deepEqual(imageInfo(lossless), { format: 'webp', mime: 'image/webp', width: 100, height: 50 });
    const extended = webp('VP8X', [0, 0, 0, 0, 0x0f, 0x27, 0, 0x1f, 0, 0]);
    assert.deepEqual(imageInfo(extended), { format: 'webp', mime: 'image/webp', width: 10000, height: 32 });
  });

  it('walks JPEG segments up to a progressive frame header', () => {
    const jpeg = Buffer.from([
      0xff, 0xd8, 0xff, 0xe1, 0x00, 0x04, 0xaa, 0xbb, 0xff, 0xff, 0xc2, 0x00, 0x11, 0x08, 0x01, 0x00, 0x02,
      0x00, 0x03, 0x01, 0x22, 0x00, 0xff, 0xd9,
    ]);
    assert.deepEqual(imageInfo(jpeg), { format: 'jpeg', mime: 'image/jpeg', width: 512, height: 256 });
    assert.equal(imageInfo(Buffer.from([0xff, 0xd8, 0xff, 0xd9])), undefined);
  });

  it('refuses what is not a picture, or truncated, or of no size', () => {
    for (const b of [
      Buffer.from('hello'),
      Buffer.alloc(0),
      Buffer.from('GIF89a'),
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'),
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]),
      Buffer.from('GIF89a\0\0\x10\0', 'latin1'),
    ]) {
      assert.equal(imageInfo(b), undefined, JSON.stringify(b.toString('latin1')));
    }
  });
});
