#!/usr/bin/env bash
# search-eval: how often folio-search puts the note a reader wants in its top 1/3/10, per mode
# (text, vector, hybrid), on reader questions over real documentation vaults (issue 27).
# Builds folio, folio-ingest and folio-search Release into BUILD_DIR (unless FOLIO_BIN_DIR
# names binaries to use), fetches the vaults (loadtest/search-eval/fetch-vaults.sh), runs
# loadtest/search-eval/search_eval.py with the arguments given here.
#
#   loadtest/search-eval.sh [search_eval.py flags: --mode hybrid --vault tasks --verbose --csv ...]
#   BUILD_DIR=build-eval (default)       where to build
#   FOLIO_BIN_DIR=/path/to/build/bin     use these binaries, build nothing (compare two builds)
#   SEARCH_EVAL_VAULTS=DIR               vaults already extracted (DIR/tasks, DIR/dataview)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd); cd "$ROOT"
command -v python3 >/dev/null || { echo "missing python3"; exit 1; }
command -v nats-server >/dev/null || [[ -x /usr/sbin/nats-server ]] || { echo "missing nats-server"; exit 1; }

if [[ -z "${FOLIO_BIN_DIR:-}" ]]; then
  BUILD=${BUILD_DIR:-build-eval}
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD" --target folio folio-ingest folio-search -j "$(nproc)" >/dev/null
  export FOLIO_BIN_DIR="$ROOT/$BUILD/bin"
fi
SEARCH_EVAL_VAULTS=$(loadtest/search-eval/fetch-vaults.sh)
export SEARCH_EVAL_VAULTS
exec python3 loadtest/search-eval/search_eval.py "$@"
