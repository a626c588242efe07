#!/usr/bin/env bash
# Runs loadtest/watch-bench (services pinned to CPU 0; the driver and folio watch on CPU 1).
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export FOLIO_BIN_DIR="$ROOT/$BUILD/bin" FOLIO_SOURCE_DIR="$ROOT"
taskset -c 1 "$BUILD/bin/watch-bench" --cpu 0 "${@:2}"
