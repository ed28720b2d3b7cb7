import { createRequire } from 'node:module';

const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };

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
