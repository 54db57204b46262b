#!/usr/bin/env bash
# The docs-page test drives Debian's Chromium (never a browser download: nothing outside npm's and
# Debian's registries is reachable). Installs it when missing; needs root, as on this project's machines.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" != 0 ]; then
  echo "test/browser needs Debian's chromium: run 'sudo apt-get install -y chromium' once" >&2
  exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
