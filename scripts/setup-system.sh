#!/usr/bin/env bash
# System tools Anvil and its tests use, installed from Debian's packages when missing.
# Run as root (CI and the development machines are); elsewhere install them yourself.
set -euo pipefail
need=()
command -v git >/dev/null || need+=(git)
command -v pg_isready >/dev/null || need+=(postgresql-client)
command -v unzip >/dev/null || need+=(unzip)
# The LFS tests push and pull with the real client.
git lfs version >/dev/null 2>&1 || need+=(git-lfs)
# The PyPI registry tests upload with the real twine.
command -v twine >/dev/null || need+=(twine)
# The web interface is tested in a real browser (playwright-core drives Debian's Chromium).
command -v chromium >/dev/null || need+=(chromium)
# The PyPI tests install with pip; the Maven registry tests deploy and resolve with the real mvn.
command -v python3 >/dev/null || need+=(python3)
python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
command -v mvn >/dev/null || need+=(maven)
# The container registry tests copy images with skopeo. The Conda registry reads uploaded packages
# through bzip2 and zstd (also at run time), and its tests build packages with tar, bzip2 and zstd.
command -v skopeo >/dev/null || need+=(skopeo)
command -v bzip2 >/dev/null || need+=(bzip2)
command -v zstd >/dev/null || need+=(zstd)
# Git over SSH is tested with the real OpenSSH client, and OpenSSH mode through a real sshd.
command -v ssh >/dev/null || need+=(openssh-client)
command -v ssh-keygen >/dev/null || need+=(openssh-client)
[ -x /usr/sbin/sshd ] || need+=(openssh-server)
# Signed commits are tested with gpg.
command -v gpg >/dev/null || need+=(gnupg)
# The Go module proxy is tested with the real go command, a private owner's over HTTPS (a test
# certificate made with openssl).
command -v go >/dev/null || need+=(golang-go)
command -v openssl >/dev/null || need+=(openssl)
# The Composer repository is tested with the real composer (and php, which it brings).
command -v composer >/dev/null || need+=(composer)
# The Debian registry reads xz-compressed control members and writes Packages.xz with xz (also at
# run time); its tests build packages with dpkg-deb and fetch them with apt-get.
command -v xz >/dev/null || need+=(xz-utils)
command -v dpkg-deb >/dev/null || need+=(dpkg)
command -v apt-get >/dev/null || need+=(apt)
# The RPM registry tests build and sign packages with rpmbuild and rpmsign and install them with dnf.
command -v rpmbuild >/dev/null || need+=(rpm)
command -v dnf >/dev/null || need+=(dnf)
# The ALT Linux registry's test reads the pkglist it serves with librpm's Python binding.
/usr/bin/python3 -c 'import rpm' 2>/dev/null || need+=(python3-rpm)
# `anvil runner` runs jobs in a bubblewrap sandbox (and its tests check the sandbox).
command -v bwrap >/dev/null || need+=(bubblewrap)
# The Arch registry is tested with the real pacman (and pacman-key) from Debian's package.
command -v pacman >/dev/null || need+=(pacman-package-manager)
# The RubyGems registry is tested with the real gem command (Debian's ruby).
command -v gem >/dev/null || need+=(ruby)
# Without what Debian recommends with them (R's compilers and packages, vagrant's libvirt plugin:
# hundreds of MB the tests do not use):
lean=()
# The CRAN registry is tested with the real R (install.packages with Anvil as the repository).
command -v Rscript >/dev/null || lean+=(r-base-core)
# The Vagrant box repository is tested with the real vagrant (box add; no provider needed).
command -v vagrant >/dev/null || lean+=(vagrant)
# The NuGet registry is tested with Debian's nuget (mono's nuget.exe).
command -v nuget >/dev/null || lean+=(nuget)
if [ ${#need[@]} -gt 0 ] || [ ${#lean[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq
    if [ ${#need[@]} -gt 0 ]; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
    fi
    if [ ${#lean[@]} -gt 0 ]; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${lean[@]}" >/dev/null
    fi
  else
    echo "setup-system: please install: ${need[*]} ${lean[*]}" >&2
    exit 1
  fi
fi
