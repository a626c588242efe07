#!/usr/bin/env bash
# Runs one browser test file (node's test runner, puppeteer-core, the
# system's Chromium). Exits 77, which CTest reports as skipped, when
# Chromium, node or tests/browser/node_modules (`npm ci` here) is missing.
set -euo pipefail
cd "$(dirname "$0")"
chromium=${FOLIO_CHROMIUM:-/usr/bin/chromium}
skip() { echo "browser test skipped: $1"; exit 77; }
[[ -x $chromium ]] || skip "no $chromium (Debian package chromium)"
command -v node >/dev/null || skip "no node (Debian package nodejs)"
[[ -d node_modules/puppeteer-core ]] || skip "no node_modules: run 'npm ci' in tests/browser"
exec node --test --test-reporter=spec "$@"
