// The Cargo format's pure parts (src/packages/cargo/service.ts): the publish body read from a
// stream whatever its chunking, its truncations, the publish metadata's checks and index form,
// index paths and the semantic version order.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import { AppError } from '../../src/errors.js';
import {
  compareSemver,
  indexPath,
  publishMetadata,
  readPublishBody,
} from '../../src/packages/cargo/service.js';

function body(json: string, crate: Buffer): Buffer {
  const a = Buffer.alloc(4);
  a.writeUInt32LE(Buffer.byteLength(json));
  const b = Buffer.alloc(4);
  b.writeUInt32LE(crate.length);
  return Buffer.concat([a, Buffer.from(json), b, crate]);
}

/** `buf` as a stream of chunks cut at `cuts`. */
function chunked(buf: Buffer, size: (i: number) => number): Readable {
  const parts: Buffer[] = [];
  for (let at = 0, i = 0; at < buf.length; i++) {
    const n = Math.max(1, size(i));
    parts.push(buf.subarray(at, at + n));
    at += n;
  }
  return Readable.from(parts, { objectMode: true });
}

async function drain(r: Readable): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const c of r) out.push(c as Buffer);
  return Buffer.concat(out);
}

const status400 = (err: unknown) => err instanceof AppError && err.kind === 'bad_request';

describe('cargo publish body', () => {
  const json = JSON.stringify({ name: 'x', vers: '1.0.0', description: 'é ünïcode' });
  const crate = crypto.randomBytes(3000);
  const full = body(json, crate);

  it('reads metadata and crate whatever the chunking', async () => {
    const chunkings: Array<(i: number) => number> = [
      () => full.length,
      () => 1,
      () => 3,
      (i) => (i % 2 ? 5 : 700),
      () => 4096,
    ];
    for (const size of chunkings) {
      const p = await readPublishBody(chunked(full, size));
      assert.deepEqual(p.metadata, JSON.parse(json));
      assert.equal(p.crateLength, crate.length);
      assert.ok((await drain(p.crate)).equals(crate));
    }
  });

  it('stops the crate at its length (trailing bytes are not part of it)', async () => {
    const p = await readPublishBody(chunked(Buffer.concat([full, Buffer.from('trailing')]), () => 7));
    assert.ok((await drain(p.crate)).equals(crate));
  });

  it('refuses truncations and bad JSON with 400', async () => {
    for (const cut of [0, 2, 4, 10, 4 + Buffer.byteLength(json) + 2]) {
      await assert.rejects(readPublishBody(chunked(full.subarray(0, cut), () => 3)), status400, `cut ${cut}`);
    }
    const short = await readPublishBody(chunked(full.subarray(0, full.length - 1), () => 100));
    await assert.rejects(drain(short.crate), status400);
    await assert.rejects(readPublishBody(chunked(body('{"a":', Buffer.alloc(1)), () => 2)), status400);
    await assert.rejects(readPublishBody(chunked(body('"str"', Buffer.alloc(1)), () => 2)), status400);
  });
});

describe('cargo publish metadata', () => {
  it('keeps the index fields, renamed dependencies in the index form', () => {
    const { name, version, stored } = publishMetadata({
      name: 'app',
      vers: '1.2.3-rc.1',
      deps: [
        {
          name: 'real_crate',
          version_req: '^1',
          features: ['f'],
          optional: true,
          default_features: false,
          target: 'cfg(unix)',
          kind: 'dev',
          registry: null,
          explicit_name_in_toml: 'alias',
        },
        { name: 'plain', version_req: '=0.1.0', features: [], optional: false, default_features: true },
      ],
      features: { default: ['dep:plain'] },
      links: 'z',
      rust_version: '1.70',
      readme: 'long text',
    });
    assert.equal(name, 'app');
    assert.equal(version, '1.2.3-rc.1');
    assert.deepEqual(stored['deps'], [
      {
        name: 'alias',
        req: '^1',
        features: ['f'],
        optional: true,
        default_features: false,
        target: 'cfg(unix)',
        kind: 'dev',
        registry: null,
        package: 'real_crate',
      },
      {
        name: 'plain',
        req: '=0.1.0',
        features: [],
        optional: false,
        default_features: true,
        target: null,
        kind: 'normal',
        registry: null,
        package: null,
      },
    ]);
    assert.deepEqual(stored['features'], { default: ['dep:plain'] });
    assert.equal(stored['links'], 'z');
    assert.equal(stored['rust_version'], '1.70');
    assert.equal(stored['readme'], undefined);
  });

  it('refuses bad names, versions and shapes with 400', () => {
    const bad: unknown[] = [
      { name: '1abc', vers: '1.0.0' },
      { name: 'a'.repeat(65), vers: '1.0.0' },
      { name: 'a.b', vers: '1.0.0' },
      { name: 'ok', vers: '1.0' },
      { name: 'ok', vers: 'v1.0.0' },
      { name: 'ok', vers: '01.0.0' },
      { name: 'ok', vers: '1.0.0', deps: {} },
      { name: 'ok', vers: '1.0.0', deps: [{ name: 'x/y', version_req: '1' }] },
      { name: 'ok', vers: '1.0.0', features: { a: [1] } },
      { name: 'ok', vers: '1.0.0', links: 3 },
    ];
    for (const m of bad) {
      assert.throws(() => publishMetadata(m as Record<string, unknown>), status400, JSON.stringify(m));
    }
  });
});

describe('cargo index paths and versions', () => {
  it('lays index files out as cargo asks for them', () => {
    assert.equal(indexPath('a'), '1/a');
    assert.equal(indexPath('ab'), '2/ab');
    assert.equal(indexPath('abc'), '3/a/abc');
    assert.equal(indexPath('Serde_Json'), 'se/rd/serde_json');
  });

  it('orders semantic versions', () => {
    const sorted = [
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0',
      '1.0.1',
      '1.10.0',
      '2.0.0',
    ];
    const shuffled = [...sorted].reverse();
    assert.deepEqual(shuffled.sort(compareSemver), sorted);
    assert.equal(compareSemver('1.0.0+a', '1.0.0+b'), 0);
  });
});
