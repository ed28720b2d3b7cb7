// The system tools the test suite drives (the real clients users use), checked before `npm test`
// builds anything. What is missing is installed by scripts/setup-system.sh when this runs as root
// with apt-get (CI, development machines); otherwise the run stops at once with one message naming
// the Debian packages to install. `node scripts/prerequisites.js` runs the check alone;
// ANVIL_INSTALL_PREREQUISITES=0 never installs (only reports).
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Each tool: how to tell it works, and the Debian package that provides it. */
export const TOOLS = [
  { name: 'git', check: ['git', ['--version']], pkg: 'git' },
  { name: 'git-lfs', check: ['git', ['lfs', 'version']], pkg: 'git-lfs' },
  { name: 'python3', check: ['python3', ['--version']], pkg: 'python3' },
  { name: 'pip', check: ['python3', ['-m', 'pip', '--version']], pkg: 'python3-pip' },
  { name: 'twine', check: ['twine', ['--version']], pkg: 'twine' },
  { name: 'mvn', check: ['mvn', ['--version']], pkg: 'maven' },
  { name: 'chromium', check: ['chromium', ['--version']], pkg: 'chromium' },
  { name: 'unzip', check: ['unzip', ['-v']], pkg: 'unzip' },
  // The Conda registry reads uploaded packages through them; its tests build packages with them.
  { name: 'bzip2', check: ['bzip2', ['--help']], pkg: 'bzip2' },
  { name: 'zstd', check: ['zstd', ['--version']], pkg: 'zstd' },
  // The container registry is tested with skopeo; git over SSH with the OpenSSH client and a real
  // sshd (OpenSSH mode); signed commits with gpg.
  { name: 'skopeo', check: ['skopeo', ['--version']], pkg: 'skopeo' },
  { name: 'ssh', check: ['ssh', ['-V']], pkg: 'openssh-client' },
  { name: 'sshd', check: ['/usr/sbin/sshd', ['-V']], pkg: 'openssh-server' },
  { name: 'gpg', check: ['gpg', ['--version']], pkg: 'gnupg' },
  // The Go module proxy is tested with the go command, a private owner's over HTTPS (a test
  // certificate made with openssl).
  { name: 'go', check: ['go', ['version']], pkg: 'golang-go' },
  { name: 'openssl', check: ['openssl', ['version']], pkg: 'openssl' },
  // The Composer repository is tested with composer (and php, which it brings).
  { name: 'composer', check: ['composer', ['--version']], pkg: 'composer' },
  // The Debian registry reads and writes xz (also at run time); its tests build packages with
  // dpkg-deb and fetch them with apt-get (checked through apt-cache, of the same package: running
  // apt-get is how this script installs).
  { name: 'xz', check: ['xz', ['--version']], pkg: 'xz-utils' },
  { name: 'dpkg-deb', check: ['dpkg-deb', ['--version']], pkg: 'dpkg' },
  { name: 'apt', check: ['apt-cache', ['--version']], pkg: 'apt' },
  // The RPM registry is tested with rpmbuild, rpmsign and dnf.
  { name: 'rpmbuild', check: ['rpmbuild', ['--version']], pkg: 'rpm' },
  { name: 'dnf', check: ['dnf', ['--version']], pkg: 'dnf' },
  // The ALT Linux registry's test reads the pkglist it serves with librpm's Python binding.
  { name: 'python3-rpm', check: ['/usr/bin/python3', ['-c', 'import rpm']], pkg: 'python3-rpm' },
  // The RubyGems registry is tested with the gem command.
  { name: 'gem', check: ['gem', ['--version']], pkg: 'ruby' },
  // The CRAN registry is tested with Rscript (install.packages).
  { name: 'Rscript', check: ['Rscript', ['--version']], pkg: 'r-base-core' },
  // The Vagrant box repository is tested with vagrant box add.
  { name: 'vagrant', check: ['vagrant', ['--version']], pkg: 'vagrant' },
  // The NuGet registry is tested with Debian's nuget (mono's nuget.exe: pack, push, install),
  // which loops forever without a terminal: run under `script`.
  { name: 'nuget', check: ['script', ['-qec', 'stty cols 200; nuget help', '/dev/null']], pkg: 'nuget' },
];

/** The tools that do not run here. */
export function missingTools(env = process.env) {
  return TOOLS.filter(({ check: [cmd, args] }) => {
    const r = spawnSync(cmd, args, { env, stdio: 'ignore', timeout: 60_000 });
    return r.error !== undefined || r.status !== 0;
  });
}

const canInstall = (env) =>
  env.ANVIL_INSTALL_PREREQUISITES !== '0' &&
  typeof process.getuid === 'function' &&
  process.getuid() === 0 &&
  spawnSync('apt-get', ['--version'], { env, stdio: 'ignore' }).status === 0;

/**
 * Returns when every tool runs (after installing what is missing, when it can); otherwise prints
 * one message naming the packages and exits.
 */
export function ensurePrerequisites(env = process.env) {
  let missing = missingTools(env);
  if (missing.length && canInstall(env)) {
    console.error(`npm test: installing ${missing.map((t) => t.pkg).join(', ')} (scripts/setup-system.sh)`);
    spawnSync('bash', [path.join(root, 'scripts', 'setup-system.sh')], { env, stdio: 'inherit' });
    missing = missingTools(env);
  }
  if (missing.length === 0) return;
  const pkgs = [...new Set(missing.map((t) => t.pkg))];
  console.error(
    `npm test needs ${missing.map((t) => t.name).join(', ')}, which ${missing.length === 1 ? 'is' : 'are'} not installed. ` +
      `Install the Debian package${pkgs.length === 1 ? '' : 's'} ${pkgs.join(' ')} ` +
      `(apt-get install ${pkgs.join(' ')}, or run scripts/setup-system.sh as root), then run npm test again.`,
  );
  process.exit(1);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  ensurePrerequisites();
  console.log('npm test: every system tool the tests use is installed');
}
