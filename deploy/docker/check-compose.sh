#!/usr/bin/env bash
# ctest compose_config (label deploy): docker-compose.yml is valid for
# docker-compose (Debian's v1.29 validates it without a Docker engine):
# schema, anchors, variable interpolation with no .env and with
# .env.example. Exits 77 (skipped)
# when docker-compose is not installed.
set -euo pipefail
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
if ! command -v docker-compose >/dev/null; then
  echo "compose_config: SKIPPED: docker-compose is not installed (Debian: apt-get install docker-compose)"
  exit 77
fi
cd "$ROOT"
# podman-compose (1.0) leaves ${VAR:-} and ${VAR-} (empty defaults) in the
# value as they are; such a value would reach a container verbatim.
if grep -nE '\$\{[A-Za-z_][A-Za-z0-9_]*:?-\}' docker-compose.yml; then
  echo "compose_config: FAIL: empty variable defaults (above) are not expanded by podman-compose; use a non-empty default"
  exit 1
fi
empty=$(mktemp)
trap 'rm -f "$empty"' EXIT
docker-compose --env-file "$empty" -f docker-compose.yml config -q
docker-compose --env-file .env.example -f docker-compose.yml config -q
echo "compose_config: docker-compose.yml is valid (defaults, and with .env.example)"
