#!/usr/bin/env bash
# Installs folio's build, test and run dependencies from Debian 12 packages.
# Idempotent: installs only what is missing; safe to run on every `make`.
set -euo pipefail
PKGS=(
  build-essential cmake pkg-config ca-certificates ccache
  libuv1-dev libnats-dev nats-server libsqlite3-dev libmd4c-dev zlib1g-dev
  libsimdjson-dev prometheus-cpp-dev doctest-dev libhttp-parser-dev
  libcurl4-openssl-dev libyaml-cpp-dev libssl-dev curl libhnswlib-dev libsource-highlight-dev libisal-dev libstemmer-dev
  libsodium-dev  # private sites (services/ingest site_secrets.cc): Argon2id password hashes, session keys
  prometheus  # promtool: check config/rules/metrics, test rules (deploy/prometheus, tests)
  docker-compose  # deploy checks: `docker-compose config` validates docker-compose.yml (no engine needed)
  chromium fonts-dejavu-core  # e2e test (tests/e2e): headless Chromium screenshots
  nodejs  # browser tests (tests/browser): node's test runner driving Chromium with puppeteer-core
  clang libclang-rt-14-dev llvm  # fuzzing (tests/fuzz, make fuzz): clang 14, libFuzzer, llvm-symbolizer
  libsodium-dev  # private sites: Argon2id password hashes, HMAC-SHA256 session cookies (libs/auth)
  python3  # build: libs/markdown/gen_entities.py writes the HTML5 entity table (html.entities)
  python3-yaml  # deploy checks (tests/deploy): parse the rendered manifests
  universal-ctags  # structure check (tests/structure_check.py): function lengths
  wrk  # restart test (tests/faults/edge_restart_test.cc): edge handovers under wrk load
)
# Benchmarks only (make bench): the nginx anchor and fio (wrk is above).
if [[ "${FOLIO_BENCH_DEPS:-0}" == 1 ]]; then PKGS+=(nginx-light fio); fi
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# Deploy checks: any kubectl renders deploy/k8s (`kubectl kustomize`); Debian's
# kubernetes-client only where none is installed (another kubectl package,
# e.g. Google Cloud SDK's, owns /usr/bin/kubectl and conflicts with it).
command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
# npm for tests/browser's `npm ci`: Debian's package only where none is
# installed (another nodejs package, e.g. NodeSource's, ships its own npm
# and conflicts with Debian's).
command -v npm >/dev/null 2>&1 || missing+=(npm)
# systemd-analyze verifies deploy/systemd's units.
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
# The bundled mermaid (web/mermaid): any npm; Debian's only where none is
# installed (NodeSource's nodejs ships its own and conflicts with it).
command -v npm >/dev/null 2>&1 || missing+=(npm)
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The mermaid build pages with a diagram load from the site itself
# (web/mermaid: package.json pins the version, package-lock.json the
# integrity of every package, which `npm ci` checks). Installed again only
# when the lock file changed. Without npm or the registry, diagrams load
# from the pinned CDN URL instead; FOLIO_MERMAID_REQUIRED=1 (CI) makes that
# an error.
mermaid_dir="$(dirname "$0")/../web/mermaid"
mermaid_js="$mermaid_dir/node_modules/mermaid/dist/mermaid.min.js"
mermaid_stamp="$mermaid_dir/node_modules/.folio-lock-sha256"
lock_sum=$(sha256sum "$mermaid_dir/package-lock.json" | cut -d' ' -f1)
if [[ ! -f "$mermaid_js" || "$(cat "$mermaid_stamp" 2>/dev/null)" != "$lock_sum" ]]; then
  echo "install-deps: npm ci in web/mermaid (the bundled mermaid)"
  if command -v npm >/dev/null 2>&1 &&
     (cd "$mermaid_dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null) &&
     [[ -f "$mermaid_js" ]]; then
    echo "$lock_sum" >"$mermaid_stamp"
  elif [[ "${FOLIO_MERMAID_REQUIRED:-0}" == 1 ]]; then
    echo "install-deps: npm ci in web/mermaid failed; the bundled mermaid is required (FOLIO_MERMAID_REQUIRED=1)" >&2
    exit 1
  else
    echo "install-deps: warning: npm ci in web/mermaid failed; pages load mermaid from its CDN URL" >&2
  fi
fi

# The browser tests' driver (tests/browser: puppeteer-core, pinned by its
# package-lock.json; it drives the system's Chromium, installed above, and
# downloads no browser). Again only when the lock file changed. Without it
# `make test` reports the browser tests as skipped.
browser_dir="$(dirname "$0")/../tests/browser"
browser_stamp="$browser_dir/node_modules/.folio-lock-sha256"
lock_sum=$(sha256sum "$browser_dir/package-lock.json" | cut -d' ' -f1)
if [[ ! -d "$browser_dir/node_modules/puppeteer-core" || "$(cat "$browser_stamp" 2>/dev/null)" != "$lock_sum" ]]; then
  echo "install-deps: npm ci in tests/browser (the browser tests' driver)"
  if command -v npm >/dev/null 2>&1 &&
     (cd "$browser_dir" && timeout 300 npm ci --no-audit --no-fund --loglevel=error >/dev/null); then
    echo "$lock_sum" >"$browser_stamp"
  else
    echo "install-deps: warning: npm ci in tests/browser failed; the browser tests are skipped" >&2
  fi
fi

# The Obsidian plugin's build and test tools (clients/obsidian: obsidian's
# type definitions, esbuild, typescript; package-lock.json pins them). Again
# only when the lock file changed. Without them its CTest test is skipped.
plugin_dir="$(dirname "$0")/../clients/obsidian"
plugin_stamp="$plugin_dir/node_modules/.folio-lock-sha256"
lock_sum=$(sha256sum "$plugin_dir/package-lock.json" | cut -d' ' -f1)
if [[ ! -x "$plugin_dir/node_modules/.bin/esbuild" || "$(cat "$plugin_stamp" 2>/dev/null)" != "$lock_sum" ]]; then
  echo "install-deps: npm ci in clients/obsidian (the Obsidian plugin's build tools)"
  if command -v npm >/dev/null 2>&1 &&
     (cd "$plugin_dir" && timeout 300 npm ci --no-audit --no-fund --loglevel=error >/dev/null); then
    echo "$lock_sum" >"$plugin_stamp"
  else
    echo "install-deps: warning: npm ci in clients/obsidian failed; the plugin's test is skipped" >&2
  fi
fi
