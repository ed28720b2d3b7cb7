// The package formats' services, built on the registry core (PackageService): one per format
// that has state or logic of its own beyond the core (the container registry is built beside the
// core in context.ts, since its uploads are not the core's). Wired here so the composition root
// stays one page per concern.
import type { Db } from '../db/database.js';
import type { EventBus } from '../events/bus.js';
import type { PackageService } from '../packages/service.js';
import type { RepoService } from '../repos/service.js';
import type { UserService } from '../users/service.js';
import type { Config } from '../config/settings.js';
import { NpmService } from '../packages/npm/service.js';
import { MavenService } from '../packages/maven/service.js';
import { PypiService } from '../packages/pypi/service.js';
import { CargoService } from '../packages/cargo/service.js';
import { CondaService } from '../packages/conda/service.js';
import { GoService } from '../packages/go/service.js';
import { ComposerService } from '../packages/composer/service.js';
import { DebianService } from '../packages/debian/service.js';
import { RpmService } from '../packages/rpm/service.js';
import { AltService } from '../packages/alt/service.js';
import { ArchService } from '../packages/arch/service.js';
import { RubygemsService } from '../packages/rubygems/service.js';
import { CranService } from '../packages/cran/service.js';
import { HelmService } from '../packages/helm/service.js';
import { ConanService } from '../packages/conan/service.js';
import { VagrantService } from '../packages/vagrant/service.js';
import { PubService } from '../packages/pub/service.js';
import { ChefService } from '../packages/chef/service.js';
import { SwiftService } from '../packages/swift/service.js';
import { AlpineService } from '../packages/alpine/service.js';
import { NugetService } from '../packages/nuget/service.js';

export interface PackageFormatsDeps {
  db: Db;
  packages: PackageService;
  events: EventBus;
  users: UserService;
  repos: RepoService;
  /** [server] ROOT_URL, ending in /. */
  rootUrl: string;
  /** [api] paging (Chef's lists). */
  paging: Config['api'];
}

export function createPackageFormats(deps: PackageFormatsDeps) {
  const { db, packages, events, users, repos, rootUrl } = deps;
  const npmPackages = new NpmService({ packages, rootUrl: rootUrl });
  const mavenPackages = new MavenService({ db, packages });
  const pypiPackages = new PypiService({ db, packages, rootUrl: rootUrl });
  const cargoPackages = new CargoService({ packages, rootUrl: rootUrl });
  const condaPackages = new CondaService({ db, packages, repos });
  const goPackages = new GoService({ packages });
  const composerPackages = new ComposerService({ packages, rootUrl: rootUrl });
  const debianPackages = new DebianService({ db, packages, events, users, origin: 'Anvil' });
  const archPackages = new ArchService({ db, packages, keys: debianPackages });
  const rubygemsPackages = new RubygemsService({ db, packages });
  const rpmPackages = new RpmService({ db, packages, events, users });
  const altPackages = new AltService({ db, packages, events, users, label: 'Anvil' });
  const cranPackages = new CranService({ db, packages });
  const helmPackages = new HelmService({ db, packages, rootUrl: rootUrl });
  const vagrantPackages = new VagrantService({ packages, rootUrl: rootUrl });
  const pubPackages = new PubService({ packages, rootUrl: rootUrl });
  const nugetPackages = new NugetService({ db, packages });
  const chefPackages = new ChefService({
    db,
    packages,
    users,
    rootUrl: rootUrl,
    paging: deps.paging,
  });
  const conanPackages = new ConanService({ db, packages });
  const swiftPackages = new SwiftService({ db, packages, rootUrl: rootUrl });
  const alpinePackages = new AlpineService({ db, packages });
  return {
    npmPackages,
    mavenPackages,
    pypiPackages,
    cargoPackages,
    condaPackages,
    goPackages,
    composerPackages,
    debianPackages,
    archPackages,
    rubygemsPackages,
    rpmPackages,
    altPackages,
    cranPackages,
    helmPackages,
    vagrantPackages,
    pubPackages,
    chefPackages,
    nugetPackages,
    conanPackages,
    swiftPackages,
    alpinePackages,
  };
}
