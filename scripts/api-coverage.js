// `npm run api-coverage`: how much of Forgejo's /api/v1 Anvil serves. Builds Anvil, makes its
// OpenAPI document in-process (a server on a temporary data directory, never listening), and
// compares its operations with Forgejo's description by method and path (parameter names aside).
// Prints, per Forgejo tag, the operations served out of Forgejo's and the missing ones; operations
// left to other issues (package registries' API, SSH and GPG keys, ActivityPub) are
// counted apart.
// Options: --json (machine-readable), --missing-only (only what is missing),
// --forgejo <file> (Forgejo's swagger.json; default ../shared/reference/forgejo-api-v1.swagger.json).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildAll } from './build.js';
import { DEFAULT_REFERENCE, operationsOf } from './forgejo-operations.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Forgejo operations another issue covers, by path. */
const ELSEWHERE = [
  [/^\/packages\//, 'package registries (issue 12/13)'],
  [
    /^\/(user|users\/\{[^}]+\}|admin\/users\/\{[^}]+\})\/keys\b|\/repos\/\{[^}]+\}\/\{[^}]+\}\/keys\b/,
    'SSH keys (issue 11)',
  ],
  [/^\/activitypub\//, 'ActivityPub'],
];

const elsewhere = (p) => ELSEWHERE.find(([re]) => re.test(p))?.[1];

async function anvilDocument() {
  const built = await buildAll({ bundle: false });
  if (built !== 0) process.exit(built);
  const dist = (p) => pathToFileURL(path.join(root, 'dist', p)).href;
  const { loadConfig } = await import(dist('src/config/config.js'));
  const { createContext } = await import(dist('src/app/context.js'));
  const { buildServer } = await import(dist('src/app/server.js'));
  const { pino } = await import('pino');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-coverage-'));
  try {
    const env = {
      ...process.env,
      ANVIL__SERVER__APP_DATA_PATH: dir,
      ANVIL__DATABASE__DB_TYPE: 'sqlite3',
      ANVIL__SECURITY__SECRET_KEY: 'api-coverage',
    };
    const ctx = await createContext(loadConfig({ env, cwd: dir }), pino({ level: 'silent' }));
    const app = await buildServer(ctx);
    await app.ready();
    const doc = app.swagger();
    await app.close();
    await ctx.close();
    return doc;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  return i < 0 ? undefined : args[i + 1];
};
const reference = option('--forgejo') ?? DEFAULT_REFERENCE;
if (!fs.existsSync(reference)) {
  console.error(
    `api-coverage: Forgejo's API description is not at ${reference} (give it with --forgejo <file>)`,
  );
  process.exit(1);
}
const forgejo = operationsOf(JSON.parse(fs.readFileSync(reference, 'utf8')));
// Anvil's paths are relative to its server URL (…/api/v1), as Forgejo's are.
const anvil = operationsOf(await anvilDocument());
const served = new Map(anvil.map((o) => [o.key, o]));

const tags = new Map();
for (const op of forgejo) {
  const t = tags.get(op.tag) ?? { tag: op.tag, total: 0, served: 0, missing: [], elsewhere: [] };
  tags.set(op.tag, t);
  t.total++;
  if (served.has(op.key)) t.served++;
  else if (elsewhere(op.path)) t.elsewhere.push({ ...op, issue: elsewhere(op.path) });
  else t.missing.push(op);
}
const rows = [...tags.values()].sort((a, b) => a.tag.localeCompare(b.tag));
const sum = (f) => rows.reduce((n, r) => n + f(r), 0);
const total = {
  forgejo: forgejo.length,
  served: sum((r) => r.served),
  missing: sum((r) => r.missing.length),
  elsewhere: sum((r) => r.elsewhere.length),
  anvilOnly: anvil.filter((o) => !forgejo.some((f) => f.key === o.key)).length,
};
const withoutId = anvil.filter((o) => !o.id);
const forgejoIds = new Map(forgejo.map((o) => [o.key, o.id]));
const wrongId = anvil.filter((o) => forgejoIds.has(o.key) && forgejoIds.get(o.key) !== o.id);

if (args.includes('--json')) {
  console.log(
    JSON.stringify({ total, tags: rows, withoutOperationId: withoutId, otherOperationId: wrongId }, null, 2),
  );
} else {
  const pct = (a, b) => (b ? `${((100 * a) / b).toFixed(0)}%` : '-');
  for (const r of rows) {
    if (args.includes('--missing-only') && r.missing.length === 0) continue;
    const left = r.elsewhere.length ? `, ${r.elsewhere.length} left to other issues` : '';
    console.log(`${r.tag}: ${r.served}/${r.total} served (${pct(r.served, r.total)})${left}`);
    for (const m of r.missing) console.log(`  missing  ${m.id.padEnd(36)} ${m.method.padEnd(6)} ${m.path}`);
    if (!args.includes('--missing-only')) {
      for (const m of r.elsewhere)
        console.log(`  later    ${m.id.padEnd(36)} ${m.method.padEnd(6)} ${m.path}  [${m.issue}]`);
    }
  }
  console.log(
    `\ntotal: ${total.served}/${total.forgejo} of Forgejo's operations served (${pct(total.served, total.forgejo)}); ` +
      `${total.missing} missing, ${total.elsewhere} left to other issues; ${total.anvilOnly} operations of Anvil's own`,
  );
  if (withoutId.length) console.log(`operations without an operationId: ${withoutId.length}`);
  for (const o of wrongId)
    console.log(
      `operationId differs from Forgejo's: ${o.method} ${o.path} ${o.id} (Forgejo: ${forgejoIds.get(o.key)})`,
    );
}
