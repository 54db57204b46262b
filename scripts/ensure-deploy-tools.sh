#!/usr/bin/env bash
# The deployment tests (npm run test:deploy) run the image with podman (and runc, which works where
# crun does not), build its base stand-in with mmdebstrap, balance two instances with haproxy under
# wrk's load, run the alerting rules in Prometheus, and put nginx's HTTP cache in front. Installs what is missing from Debian's
# packages; needs root, as on this project's machines. Without root and without podman the tests
# say that they skip, and why.
set -euo pipefail
missing=()
for tool in podman:podman runc:runc mmdebstrap:mmdebstrap haproxy:haproxy wrk:wrk prometheus:prometheus promtool:prometheus nginx:nginx; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool##*:}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "npm run test:deploy needs Debian's ${missing[*]}: run 'sudo apt-get install -y ${missing[*]}' once" >&2
  exit 0
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(printf '%s\n' "${missing[@]}" | sort -u) >/dev/null
