#!/usr/bin/env bash
# scale-bench: what a push costs as the vault grows (1k, 10k, 100k notes by default).
# For each size: a generated vault (loadtest/vaultgen.py), a fresh nats-server -js,
# folio-storage, folio-ingest and folio-edge on loopback; first import, one changed note
# (median of 5), 1% changed, a fresh edge's ready time, RSS and data bytes.
# Writes loadtest/results/scale-bench.csv, scale-bench.svg and scale-bench-1m.md.
#   loadtest/scale-bench.sh [BUILD_DIR] [scale_bench.py flags...]
#   SIZES=1000,10000 loadtest/scale-bench.sh        # shorter
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
for tool in python3; do command -v $tool >/dev/null || { echo "missing $tool"; exit 1; }; done
command -v nats-server >/dev/null || [[ -x /usr/sbin/nats-server ]] || { echo "missing nats-server (scripts/install-deps.sh)"; exit 1; }
for b in folio folio-ingest folio-edge folio-storage; do
  [[ -x "$ROOT/$BUILD/bin/$b" ]] || { echo "missing $BUILD/bin/$b (build first: make build)"; exit 1; }
done
exec python3 "$ROOT/loadtest/scale_bench.py" --build "$ROOT/$BUILD" "${@:2}"
