// Avatars at /avatars/{id} (every `avatar_url` the API hands out): a generated identicon, a 5x5
// mirrored pattern in a colour, both drawn from the SHA-256 of the account id, so each account
// keeps the same picture and no two neighbours look alike. Uploaded avatars are for later.
import crypto from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../errors.js';

export function identicon(seed: string): string {
  const h = crypto.createHash('sha256').update(`anvil-avatar:${seed}`).digest();
  const hue = Math.round((h.readUInt16BE(0) / 65535) * 360);
  const fg = `hsl(${hue} 55% 50%)`;
  const cells: string[] = [];
  for (let y = 0; y < 5; y++) {
    for (let x = 0; x < 3; x++) {
      if ((h[2 + y * 3 + x]! & 1) === 0) continue;
      cells.push(`<rect x="${x + 1}" y="${y + 1}" width="1" height="1"/>`);
      if (x < 2) cells.push(`<rect x="${5 - x}" y="${y + 1}" width="1" height="1"/>`);
    }
  }
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 7 7" width="140" height="140" shape-rendering="crispEdges">` +
    `<rect width="7" height="7" fill="#f0f0f0"/><g fill="${fg}">${cells.join('')}</g></svg>`
  );
}

export function avatarRoutes(app: FastifyInstance): void {
  app.get<{ Params: { id: string } }>('/avatars/:id', { schema: { hide: true } }, async (request, reply) => {
    const id = request.params.id;
    if (!/^\d{1,16}$/.test(id)) throw notFound('no such avatar');
    return reply
      .type('image/svg+xml')
      .header('Cache-Control', 'public, max-age=86400')
      .header('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'")
      .send(identicon(id));
  });
}
