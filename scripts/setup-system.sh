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
# The PyPI registry tests upload with the real twine (pip is already there).
command -v twine >/dev/null || need+=(twine)
# The web interface is tested in a real browser (playwright-core drives Debian's Chromium).
command -v chromium >/dev/null || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  else
    echo "setup-system: please install: ${need[*]}" >&2
    exit 1
  fi
fi
