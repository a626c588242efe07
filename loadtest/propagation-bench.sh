#!/usr/bin/env bash
# Runs loadtest/propagation-bench (nats-server, ingest and both edges pinned
# to CPU 0, the driver to CPU 1); appends to loadtest/results/propagation-*.csv.
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export FOLIO_BIN_DIR="$ROOT/$BUILD/bin" FOLIO_SOURCE_DIR="$ROOT"
FOLIO_COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
export FOLIO_COMMIT
taskset -c 1 "$BUILD/bin/propagation-bench" --cpu 0 "${@:2}"
