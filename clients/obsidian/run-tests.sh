#!/usr/bin/env bash
# Runs the plugin's tests (npm test: type check, build, node --test) for
# CTest. Exits 77, which CTest reports as skipped, when node or
# clients/obsidian/node_modules (`npm ci` here; scripts/install-deps.sh does
# it) is missing. The tests against the real system skip themselves, with a
# message, when FOLIO_BIN_DIR lacks folio-ingest/folio-edge or PATH lacks
# nats-server.
set -euo pipefail
cd "$(dirname "$0")"
skip() { echo "obsidian plugin test skipped: $1"; exit 77; }
command -v node >/dev/null || skip "no node (Debian package nodejs)"
command -v npm >/dev/null || skip "no npm (Debian package npm)"
[[ -x node_modules/.bin/esbuild && -x node_modules/.bin/tsc ]] || skip "no node_modules: run 'npm ci' in clients/obsidian"
exec npm test
