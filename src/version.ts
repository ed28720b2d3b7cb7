import { createRequire } from 'node:module';

const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };

/**
 * Anvil's own version, and the version reported by GET /api/v1/version. Clients written for
 * Forgejo and Gitea decide which features to use from that string, so it names the Forgejo API
 * level Anvil implements, with Anvil's version as build metadata.
 */
export const VERSION = {
  anvil: pkg.version,
  api: `11.0.0+anvil-${pkg.version}`,
};
