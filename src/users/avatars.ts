// Where an account's avatar is (every user and organization `avatar_url`): its uploaded image at
// /avatars/{hash} (see avatars/), else a generated identicon at /avatars/{id}, a 5x5 mirrored
// pattern in a colour, both drawn from the SHA-256 of the account id, so each account keeps the
// same picture and no two neighbours look alike.
import crypto from 'node:crypto';

/** The path (under ROOT_URL) of the account's avatar. */
export function avatarPath(u: { id: number; avatar: string }): string {
  return `avatars/${u.avatar || u.id}`;
}

/** The path (under ROOT_URL) of a repository's uploaded avatar; '' when it has none, as Forgejo. */
export function repoAvatarPath(repo: { avatar: string }): string {
  return repo.avatar ? `repo-avatars/${repo.avatar}` : '';
}

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
