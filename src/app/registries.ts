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
import { debianRoutes } from '../packages/debian/routes.js';
import { rpmRoutes } from '../packages/rpm/routes.js';
import { altRoutes } from '../packages/alt/routes.js';
import { archRoutes } from '../packages/arch/routes.js';
import { rubygemsRoutes } from '../packages/rubygems/routes.js';
import { cranRoutes } from '../packages/cran/routes.js';
import { helmRoutes } from '../packages/helm/routes.js';
import { vagrantRoutes } from '../packages/vagrant/routes.js';
import { pubRoutes } from '../packages/pub/routes.js';
import { chefRoutes } from '../packages/chef/routes.js';
import { nugetRoutes } from '../packages/nuget/routes.js';
import { conanRoutes } from '../packages/conan/routes.js';
import { swiftRoutes } from '../packages/swift/routes.js';
import { alpineRoutes } from '../packages/alpine/routes.js';
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
  await app.register(async (scope) => debianRoutes(scope, { ...registry, debian: ctx.debianPackages }));
  await app.register(async (scope) => archRoutes(scope, { ...registry, arch: ctx.archPackages }));
  await app.register(async (scope) => rubygemsRoutes(scope, { ...registry, rubygems: ctx.rubygemsPackages }));
  await app.register(async (scope) => cranRoutes(scope, { ...registry, cran: ctx.cranPackages }));
  await app.register(async (scope) => helmRoutes(scope, { ...registry, helm: ctx.helmPackages }));
  await app.register(async (scope) => vagrantRoutes(scope, { ...registry, vagrant: ctx.vagrantPackages }));
  await app.register(async (scope) => pubRoutes(scope, { ...registry, pub: ctx.pubPackages }));
  await app.register(async (scope) => chefRoutes(scope, { ...registry, chef: ctx.chefPackages }));
  await app.register(async (scope) =>
    nugetRoutes(scope, { ...registry, nuget: ctx.nugetPackages, rootUrl: ctx.config.server.rootUrl }),
  );
  await app.register(async (scope) =>
    conanRoutes(scope, {
      ...registry,
      conan: ctx.conanPackages,
      tokens: ctx.registryTokens,
      rootUrl: ctx.config.server.rootUrl,
    }),
  );
  await app.register(async (scope) => swiftRoutes(scope, { ...registry, swift: ctx.swiftPackages }));
  await app.register(async (scope) => alpineRoutes(scope, { ...registry, alpine: ctx.alpinePackages }));
  await app.register(async (scope) =>
    rpmRoutes(scope, { ...registry, rpm: ctx.rpmPackages, rootUrl: ctx.config.server.rootUrl }),
  );
  await app.register(async (scope) =>
    altRoutes(scope, {
      ...registry,
      alt: ctx.altPackages,
      rootUrl: ctx.config.server.rootUrl,
      label: 'Anvil',
    }),
  );
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
