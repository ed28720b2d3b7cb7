// Writes src/http/forgejo-operations.json from Forgejo's API description: for each operation, its
// method and path (parameters as `{}`) → Forgejo's operationId and tag. Anvil's OpenAPI document
// gives each of its operations Forgejo's operationId from this map (src/http/openapi.ts), and
// `npm run api-coverage` compares the two documents.
// Run: node scripts/forgejo-operations.js [path/to/forgejo-api-v1.swagger.json]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const DEFAULT_REFERENCE = path.resolve(
  root,
  '..',
  'shared',
  'reference',
  'forgejo-api-v1.swagger.json',
);

/** `GET /repos/{owner}/{repo}` → `GET /repos/{}/{}`: the key both documents are matched by. */
export const operationKey = (method, p) => `${method.toUpperCase()} ${p.replace(/\{[^}]*\}/g, '{}')}`;

/** Every operation of a Swagger 2 / OpenAPI document: key, id, tag, method and path. */
export function operationsOf(doc, prefix = '') {
  const out = [];
  for (const [p, item] of Object.entries(doc.paths ?? {})) {
    if (prefix && !p.startsWith(prefix)) continue;
    const rel = prefix ? p.slice(prefix.length) || '/' : p;
    for (const method of ['get', 'put', 'post', 'delete', 'patch', 'head', 'options']) {
      const op = item[method];
      if (!op) continue;
      out.push({
        key: operationKey(method, rel),
        id: op.operationId ?? '',
        tag: (op.tags ?? ['untagged'])[0],
        method: method.toUpperCase(),
        path: rel,
      });
    }
  }
  return out;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const source = process.argv[2] ?? DEFAULT_REFERENCE;
  const doc = JSON.parse(fs.readFileSync(source, 'utf8'));
  const ops = operationsOf(doc).sort((a, b) => (a.key < b.key ? -1 : 1));
  const target = path.join(root, 'src', 'http', 'forgejo-operations.json');
  // One operation per line, as prettier formats it.
  const lines = ops.map(
    (o, i) =>
      `  ${JSON.stringify(o.key)}: [${JSON.stringify(o.id)}, ${JSON.stringify(o.tag)}]${i < ops.length - 1 ? ',' : ''}`,
  );
  fs.writeFileSync(target, `{\n${lines.join('\n')}\n}\n`);
  console.log(`${ops.length} operations written to ${path.relative(root, target)}`);
}
