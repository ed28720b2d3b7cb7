// The package registries at /api/packages/{owner}/{format}/... (each format in a scope of its
// own) and the container registry at /v2/, registered by buildServer (server.ts).
import type { FastifyInstance } from 'fastify';
import type { AppContext } from './context.js';
import { genericRoutes } from '../packages/generic/routes.js';
import { npmRoutes } from '../packages/npm/routes.js';
import { mavenRoutes } from '../packages/maven/routes.js';
import { pypiRoutes } from '../packages/pypi/routes.js';
import { cargoRoutes } from '../packages/cargo/routes.js';
import { condaRoutes } from '../packages/conda/routes.js';
import { goRoutes } from '../packages/go/routes.js';
import { composerRoutes } from '../packages/composer/routes.js';
import { containerRoutes } from '../packages/container/routes.js';

export async function registryRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  // Package registries at /api/packages/{owner}/{format}/..., each format in a scope of its own.
  const registry = { packages: ctx.packages, auth: ctx.auth, users: ctx.users };
  await app.register(async (scope) => genericRoutes(scope, registry));
  await app.register(async (scope) =>
    npmRoutes(scope, {
      ...registry,
      npm: ctx.npmPackages,
      limitSizeNpm: ctx.config.packages.limitSizeNpm,
    }),
  );
  await app.register(async (scope) => mavenRoutes(scope, { ...registry, maven: ctx.mavenPackages }));
  await app.register(async (scope) => pypiRoutes(scope, { ...registry, pypi: ctx.pypiPackages }));
  await app.register(async (scope) => cargoRoutes(scope, { ...registry, cargo: ctx.cargoPackages }));
  await app.register(async (scope) => condaRoutes(scope, { ...registry, conda: ctx.condaPackages }));
  await app.register(async (scope) => goRoutes(scope, { ...registry, go: ctx.goPackages }));
  await app.register(async (scope) => composerRoutes(scope, { ...registry, composer: ctx.composerPackages }));
  await app.register(async (scope) =>
    containerRoutes(scope, {
      ...registry,
      images: ctx.containerImages,
      blobs: ctx.containerBlobs,
      tokens: ctx.registryTokens,
      rootUrl: ctx.config.server.rootUrl,
    }),
  );
}
