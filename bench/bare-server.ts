// The baseline for bench/users.ts: a bare Fastify handler doing the same indexed SQLite lookup
// as GET /api/v1/users/{username}, with nothing else (no auth, no schemas, no Kysely).
import Fastify from 'fastify';
import { SQLite } from '../src/db/sqlite-driver.js';

const [dbPath, port] = process.argv.slice(2);
const db = new SQLite(dbPath!, { readonly: true });
db.pragma('busy_timeout = 5000');
const byName = db.prepare('SELECT * FROM "user" WHERE lower_name = ?');
const app = Fastify();
app.get<{ Params: { username: string } }>('/api/v1/users/:username', async (request, reply) => {
  const row = byName.get(request.params.username.toLowerCase()) as { id: number; name: string } | undefined;
  if (!row) return reply.code(404).send({ message: 'not found' });
  return { id: row.id, login: row.name };
});
await app.listen({ host: '127.0.0.1', port: Number(port) });
process.send?.('ready');
