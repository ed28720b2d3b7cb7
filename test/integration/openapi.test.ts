// The OpenAPI document (/swagger.v1.json): every operation has an operationId, none twice, and the
// operations Forgejo also has carry Forgejo's (src/http/forgejo-operations.json, made from Forgejo's
// description); only /api/v1 is described (git, registries and web pages are not API operations).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';
import forgejo from '../../src/http/forgejo-operations.json' with { type: 'json' };

type Doc = { paths: Record<string, Record<string, { operationId?: string }>> };
const FORGEJO = forgejo as unknown as Record<string, [string, string]>;

describe('OpenAPI operations', () => {
  let s: TestServer;
  let doc: Doc;
  before(async () => {
    s = await startServer();
    doc = (await s.api<Doc>('GET', '/swagger.v1.json')).body;
  });
  after(() => s.close());

  it("gives every operation an operationId, unique, and Forgejo's where Forgejo has the operation", () => {
    const seen = new Map<string, string>();
    let matched = 0;
    const wrong: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const where = `${method.toUpperCase()} ${path}`;
        assert.ok(op.operationId, `${where} has no operationId`);
        assert.ok(!seen.has(op.operationId), `${op.operationId}: ${where} and ${seen.get(op.operationId)}`);
        seen.set(op.operationId, where);
        const theirs = FORGEJO[`${method.toUpperCase()} ${path.replace(/\{[^}]*\}/g, '{}')}`];
        if (theirs) {
          matched++;
          if (theirs[0] !== op.operationId) wrong.push(`${where}: ${op.operationId}, Forgejo: ${theirs[0]}`);
        }
      }
    }
    assert.deepEqual(wrong, []);
    assert.ok(matched > 300, `${matched} operations match Forgejo's`);
  });

  it('describes only the API', () => {
    const outside = Object.keys(doc.paths).filter(
      (p) => p.startsWith('/api/') || p.startsWith('/user/login') || /^\/\{owner\}\/\{repo\}/.test(p),
    );
    assert.deepEqual(outside, []);
  });
});
