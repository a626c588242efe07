#!/usr/bin/env bash
# Runs one browser test file (node's test runner, puppeteer-core, the
# system's Chromium). Exits 77, which CTest reports as skipped, only when
# Chromium or node is missing; without tests/browser/node_modules (which
# scripts/install-deps.sh installs) it fails.
set -euo pipefail
cd "$(dirname "$0")"
chromium=${FOLIO_CHROMIUM:-/usr/bin/chromium}
skip() { echo "browser test skipped: $1"; exit 77; }
[[ -x $chromium ]] || skip "no $chromium (Debian package chromium)"
command -v node >/dev/null || skip "no node (Debian package nodejs)"
if [[ ! -d node_modules/puppeteer-core ]]; then
  # Not a skip: scripts/install-deps.sh installs them with Chromium and node.
  echo "browser test failed: no tests/browser/node_modules: run scripts/install-deps.sh (or 'npm ci' here)" >&2
  exit 1
fi
exec node --test --test-reporter=spec "$@"
