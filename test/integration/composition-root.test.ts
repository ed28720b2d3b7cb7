// The composition root (src/app/context.ts) builds every service with the collaborators it names:
// nothing of the application is left unset, and no service was given an unset collaborator.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, type TestServer } from '../helpers/server.js';

/** The collaborators a service keeps (`constructor(private readonly deps: …)`), when it keeps them. */
function keptDeps(service: unknown): Record<string, unknown> | undefined {
  if (typeof service !== 'object' || service === null) return undefined;
  const deps = (service as { deps?: unknown }).deps;
  return typeof deps === 'object' && deps !== null ? (deps as Record<string, unknown>) : undefined;
}

describe('the composition root', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer();
  });
  after(() => s.close());

  it('leaves no part of the application unset', () => {
    const entries = Object.entries(s.ctx);
    assert.ok(entries.length > 80, `only ${entries.length} parts`);
    const unset = entries.filter(([, v]) => v === undefined || v === null).map(([k]) => k);
    assert.deepEqual(unset, []);
  });

  it('gives no service an unset collaborator, and shares one instance of each service', () => {
    const instances = new Set(Object.values(s.ctx));
    const unset: string[] = [];
    let checked = 0;
    for (const [name, service] of Object.entries(s.ctx)) {
      const deps = keptDeps(service);
      if (!deps) continue;
      checked++;
      for (const [dep, value] of Object.entries(deps)) {
        if (value === undefined) unset.push(`${name}.${dep}`);
        // A collaborator that is a service of the application is the root's one instance.
        const ctor = (value as { constructor?: { name?: string } } | null)?.constructor?.name ?? '';
        if (/Service$/.test(ctor) && ctor !== 'Object')
          assert.ok(instances.has(value), `${name}.${dep} is a ${ctor} of its own, not the application's`);
      }
    }
    assert.ok(checked > 40, `only ${checked} services keep their collaborators`);
    assert.deepEqual(unset, []);
  });

  it('closes what it opened', async () => {
    const t = await startServer();
    await t.close();
    await assert.rejects(t.ctx.db.selectFrom('user').select('id').execute());
  });
});
