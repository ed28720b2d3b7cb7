import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout's package.json: the nearest above this module (dist/src, or a bundle's chunk). */
function packageJson(): { version: string } {
  for (let dir = path.dirname(fileURLToPath(import.meta.url)); ;) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string };
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${import.meta.url}`);
    dir = up;
  }
}

const pkg = packageJson();

/** The Forgejo release whose API Anvil implements, and the Gitea API level that release reports. */
const FORGEJO = '11.0.0';
const GITEA = '1.22.0';

/**
 * Anvil's own version, and the version reported by GET /api/v1/version and /api/forgejo/v1/version.
 * Clients written for Forgejo and Gitea decide which features to use from that string and tell
 * Forgejo from Gitea by its `+gitea-<version>` build metadata (Renovate, the Gitea and Forgejo
 * SDKs), so it is Forgejo's own form with Anvil's version appended to the build metadata: still
 * valid semver, still `+gitea-1.22.0` for those that read the Gitea level with a pattern.
 */
export const VERSION = {
  anvil: pkg.version,
  api: `${FORGEJO}+gitea-${GITEA}-anvil-${pkg.version}`,
};
