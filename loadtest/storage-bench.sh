#!/usr/bin/env bash
# storage-bench: folio-storage over HTTP next to what the disk itself does, measured in one
# run on the same disk (the directory below, on the repository's file system).
#
# Latency, in ROUNDS rounds (default 3; the disk is shared, so the two sides alternate and
# the medians of the rounds are compared):
#   - fio "append": 4 KiB writes + fdatasync each, into a file that grows (fallocate=none):
#     what the journal does (it appends to a segment file that is not preallocated).
#   - fio "overwrite": the same into a file written beforehand (no metadata to commit): the
#     disk's floor, for reference.
#   - folio-storage: 4 KiB PUTs from one writer (p50/p99/mean), and the mean time of the
#     fdatasync inside it (its metrics): mean PUT - mean fdatasync = the software's share.
# Throughput, once: PUT/s at 8 and 64 writers, 4 KiB GET/s, 1 MiB PUTs (4 writers) against
# fio sequential 1 MiB writes (one fsync at the end: the disk's bandwidth; and an fdatasync
# after every write: one durable 1 MiB write at a time), write amplification at 1 MiB and
# 64 KiB. Prints the ratios against the targets (issue 15).
# Replicated (issue 23), once: a 3-node nats-server -js cluster on loopback and folio-storage
# --replicated --nats-replicas 3: 4 KiB PUTs from one writer (p50/p99) and 1 MiB PUTs (4
# writers), against the same fio figures (targets: p50 ≤ 3× one append+fdatasync; 1 MiB
# ≥ 0.5× fdatasync'ed sequential writes). NATS runs on any CPU; its file store syncs on its
# own schedule (sync_interval), not per message: a PUT is durable on disk here and held in
# the memory of a quorum of NATS servers.
# Needs fio and wrk (FOLIO_BENCH_DEPS=1 scripts/install-deps.sh). Requests carry a write
# token made for the run. folio-storage runs on CPU 0, wrk on CPU 1. PUTs go to
# /objects/bench/... (the blob path is the same journal code plus the SHA-256 check, which
# wrk cannot compute per request).
#
#   loadtest/storage-bench.sh [BUILD_DIR] [SECONDS]     (defaults: build 5)
#   env ROUNDS=3; FOLIO_BENCH_NO_BUILD=1 runs BUILD_DIR/bin/folio-storage as it is (to
#   compare a build of another commit).
set -euo pipefail
BUILD=${1:-build}; SECS=${2:-5}; ROUNDS=${ROUNDS:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd); cd "$ROOT"
for t in fio wrk curl python3; do command -v $t >/dev/null || { echo "missing $t (FOLIO_BENCH_DEPS=1 scripts/install-deps.sh)"; exit 1; }; done
if [[ "${FOLIO_BENCH_NO_BUILD:-0}" != 1 ]]; then
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$BUILD" --target folio-storage -j "$(nproc)" >/dev/null
fi
BIN=$(cd "$BUILD/bin" && pwd)/folio-storage

WORK="$ROOT/run/storage-bench"; rm -rf "$WORK"; mkdir -p "$WORK"
LUA="$WORK/put.lua"
cat >"$LUA" <<'LUA'
local n = 0
local body = string.rep("x", tonumber(os.getenv("BODY_BYTES") or "4096"))
local next_tid = 0
function setup(thread) thread:set("tid", next_tid); next_tid = next_tid + 1 end
function request()
  n = n + 1
  return wrk.format("PUT", "/objects/bench/" .. os.getenv("PHASE") .. "/" .. tid .. "-" .. n, nil, body)
end
LUA
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PORT=$(free_port)
URL="http://127.0.0.1:$PORT"
TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')  # storage's write token for this run
AUTH="Authorization: Bearer $TOKEN"
PID=""; STORAGE_ARGS=(); NATS_PIDS=(); NATS_URLS=""
start_nats_cluster() {  # store_dir: 3 JetStream nodes on loopback, fresh stores under store_dir
  local store=$1 ports=() cports=() mports=() i
  for i in 0 1 2; do ports+=("$(free_port)"); cports+=("$(free_port)"); mports+=("$(free_port)"); done
  local routes="nats://127.0.0.1:${cports[0]},nats://127.0.0.1:${cports[1]},nats://127.0.0.1:${cports[2]}"
  NATS_URLS="nats://127.0.0.1:${ports[0]},nats://127.0.0.1:${ports[1]},nats://127.0.0.1:${ports[2]}"
  for i in 0 1 2; do
    rm -rf "$store/nats$i"
    nats-server -js -a 127.0.0.1 -p "${ports[$i]}" -m "${mports[$i]}" -sd "$store/nats$i" --server_name "n$i" \
      --cluster_name folio-bench --cluster "nats://127.0.0.1:${cports[$i]}" --routes "$routes" \
      >"$WORK/nats$i.log" 2>&1 &
    NATS_PIDS+=($!)
  done
  for i in 0 1 2; do
    for _ in $(seq 1 200); do curl -fsS -o /dev/null "http://127.0.0.1:${mports[$i]}/healthz" 2>/dev/null && break; sleep 0.05; done
  done
}
stop_nats_cluster() { for p in "${NATS_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null || true; done; NATS_PIDS=(); }
stop_storage() { [[ -n "$PID" ]] && { kill "$PID"; wait "$PID" 2>/dev/null || true; }; PID=""; }
start_storage() {  # fresh journal each phase, so write amplification is per workload
  stop_storage
  rm -rf "$WORK/journal"
  FOLIO_WRITE_TOKEN="$TOKEN" FOLIO_READ_TOKEN="read-$TOKEN" taskset -c 0 "$BIN" \
    --listen "127.0.0.1:$PORT" --data "$WORK/journal" "${STORAGE_ARGS[@]}" >"$WORK/storage.log" 2>&1 &
  PID=$!
  for _ in $(seq 1 400); do curl -fsS -o /dev/null "$URL/readyz" 2>/dev/null && return; sleep 0.05; done
  echo "folio-storage did not start"; cat "$WORK/storage.log"; exit 1
}
trap '[[ -n "$PID" ]] && kill "$PID" 2>/dev/null; stop_nats_cluster; true' EXIT
# Gauges are refreshed once a second: wait for the phase's last second to show.
metric() { sleep 1.2; curl -fsS "$URL/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
# wrk --latency output -> "p50_us p99_us rps mean_us"
cat >"$WORK/parse_wrk.py" <<'PY'
import re, sys
t = open(sys.argv[1]).read()
def us(s):
    v, u = re.match(r"([\d.]+)(\w+)", s).groups(); return float(v) * {"us": 1, "ms": 1e3, "s": 1e6}[u]
p = {m.group(1): us(m.group(2)) for m in re.finditer(r"^\s+(50|99)%\s+(\S+)", t, re.M)}
mean = us(re.search(r"^\s+Latency\s+(\S+)", t, re.M).group(1))
rps = float(re.search(r"Requests/sec:\s+([\d.]+)", t).group(1))
errs = re.search(r"Non-2xx or 3xx responses: (\d+)", t)
print(f"{p.get('50', 0):.0f} {p.get('99', 0):.0f} {rps:.0f} {mean:.0f}" + (f" ERRORS={errs.group(1)}" if errs else ""))
PY
run_wrk() {  # phase conns threads body_bytes
  PHASE=$1 BODY_BYTES=$4 taskset -c 1 wrk -t"$3" -c"$2" -d"${SECS}s" --latency -H "$AUTH" -s "$LUA" "$URL" \
    >"$WORK/wrk-$1.txt"
  python3 "$WORK/parse_wrk.py" "$WORK/wrk-$1.txt"
}
# fio 4 KiB write + fdatasync, one writer, SECS seconds -> "p50_us p99_us" of write + sync
# (fio reports the two apart; one operation is both).
fio_sync() {  # name extra-args...
  local n=$1; shift
  fio --name="$n" --directory="$WORK" --rw=write --bs=4k --size=256m --ioengine=sync --fdatasync=1 \
      --time_based=1 --runtime="$SECS" "$@" --output-format=json >"$WORK/fio-$n.json" 2>/dev/null
  rm -f "$WORK/$n".*
  python3 - "$WORK/fio-$n.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["jobs"][0]
w = a["write"]["clat_ns"]["percentile"]; y = a["sync"]["lat_ns"]["percentile"]
print(f"{(w['50.000000'] + y['50.000000']) / 1e3:.0f} {(w['99.000000'] + y['99.000000']) / 1e3:.0f}")
PY
}
median() { python3 -c 'import statistics, sys; print(f"{statistics.median(float(x) for x in sys.argv[1:]):.0f}")' "$@"; }

echo "== $(nproc) CPUs; disk of $WORK: $(df -h "$WORK" | awk 'NR==2 {print $1, $2}'); $ROUNDS rounds of ${SECS} s"
declare -a A50 A99 O50 O99 P50 P99 PMEAN SYNC SOFT
for r in $(seq 1 "$ROUNDS"); do
  read -r a50 a99 < <(fio_sync append --fallocate=none)
  # The overwrite job writes its 16 MiB file once before it starts (not timed).
  read -r o50 o99 < <(fio_sync overwrite --size=16m --overwrite=1)
  start_storage
  read -r p50 p99 _ pmean _ < <(run_wrk "w1r$r" 1 1 4096)
  commits=$(metric folio_storage_group_commits); sync_s=$(metric folio_storage_group_commit_sync_seconds)
  # (a build from before these gauges existed: the split is not known, shown as 0)
  sync_us=$(python3 -c "print(f'{${sync_s:-0} * 1e6 / max(${commits:-0}, 1):.0f}')")
  A50+=("$a50"); A99+=("$a99"); O50+=("$o50"); O99+=("$o99"); P50+=("$p50"); P99+=("$p99"); PMEAN+=("$pmean")
  SYNC+=("$sync_us"); SOFT+=("$((pmean - sync_us))")
  echo "round $r: fio append $a50/$a99 µs, overwrite $o50/$o99 µs; PUT $p50/$p99 µs (mean $pmean, its fdatasync $sync_us)"
done
FIO_P50=$(median "${A50[@]}"); FIO_P99=$(median "${A99[@]}"); OV_P50=$(median "${O50[@]}"); OV_P99=$(median "${O99[@]}")
P1_50=$(median "${P50[@]}"); P1_99=$(median "${P99[@]}"); P1_MEAN=$(median "${PMEAN[@]}")
SYNC_US=$(median "${SYNC[@]}"); SOFT_US=$(median "${SOFT[@]}")

fio --name=seq --directory="$WORK" --rw=write --bs=1m --size=512m --ioengine=sync --end_fsync=1 \
    --output-format=json >"$WORK/fio-seq.json" 2>/dev/null; rm -f "$WORK"/seq.*
fio --name=seqsync --directory="$WORK" --rw=write --bs=1m --size=256m --ioengine=sync --fdatasync=1 \
    --output-format=json >"$WORK/fio-seqsync.json" 2>/dev/null; rm -f "$WORK"/seqsync.*
read -r FIO_SEQ FIO_SEQSYNC < <(python3 - "$WORK/fio-seq.json" "$WORK/fio-seqsync.json" <<'PY'
import json, sys
print(" ".join(f"{json.load(open(f))['jobs'][0]['write']['bw'] / 1024:.0f}" for f in sys.argv[1:]))
PY
)

start_storage
read -r _ _ P8_RPS _ < <(run_wrk w8 8 1 4096)
read -r P64_50 P64_99 P64_RPS _ < <(run_wrk w64 64 1 4096)
FSYNCS=$(metric folio_storage_fsyncs)
taskset -c 1 wrk -t1 -c64 -d"${SECS}s" --latency -H "$AUTH" "$URL/objects/bench/w8/0-1" >"$WORK/wrk-get.txt"
read -r G_50 G_99 G_RPS _ < <(python3 "$WORK/parse_wrk.py" "$WORK/wrk-get.txt")
PUTS=$(curl -fsS "$URL/metrics" | awk '$1 ~ /^folio_storage_requests_total/ && /op="put"/ {print $2}')
start_storage
read -r _ _ M_RPS _ < <(run_wrk mib 4 1 1048576)
WA_MIB=$(metric folio_storage_write_amplification)
start_storage
read -r _ _ K64_RPS _ < <(run_wrk k64 8 1 65536)
WA_64K=$(metric folio_storage_write_amplification)
stop_storage

# Replicated: --nats-replicas 3 on a 3-node loopback cluster, its stores first on the
# journal's disk, then in /dev/shm (as if each NATS server had a disk of its own: on one
# disk, ext4's ordered journal makes the journal's fdatasync also write NATS' dirty pages).
replicated_phase() {  # store_dir; sets RP50 RP99 RRPS RMEAN RMIB (in this shell: it owns the processes)
  start_nats_cluster "$1"
  STORAGE_ARGS=(--replicated --nats "$NATS_URLS" --nats-replicas 3)
  start_storage
  read -r RP50 RP99 RRPS RMEAN _ < <(run_wrk r3w1 1 1 4096)
  read -r _ _ RMIB _ < <(run_wrk r3mib 4 1 1048576)
  stop_storage
  STORAGE_ARGS=()
  stop_nats_cluster
  rm -rf "$1"/nats[012]
}
replicated_phase "$WORK"
R3_50=$RP50; R3_99=$RP99; R3_RPS=$RRPS; R3_MEAN=$RMEAN; R3_M_RPS=$RMIB
SHM=$(mktemp -d /dev/shm/storage-bench.XXXXXX)
replicated_phase "$SHM"
S3_50=$RP50; S3_99=$RP99; S3_RPS=$RRPS; S3_MEAN=$RMEAN; S3_M_RPS=$RMIB
rmdir "$SHM"

R() { python3 -c "print(f'{$1:.${2:-2}f}')"; }
cat <<TABLE

| measure | folio-storage | disk (fio, same run) | target | ratio |
|---|---:|---:|---:|---:|
| 4 KiB write, one writer, p50 | PUT ${P1_50} µs | append+fdatasync ${FIO_P50} µs | ≤ 1.2× | $(R "$P1_50 / $FIO_P50")× |
| 4 KiB write, one writer, p99 | PUT ${P1_99} µs | append+fdatasync ${FIO_P99} µs | ≤ 2× | $(R "$P1_99 / $FIO_P99")× |
| the same against a preallocated file, p50 / p99 | | overwrite+fdatasync ${OV_P50} / ${OV_P99} µs | | $(R "$P1_50 / $OV_P50")× / $(R "$P1_99 / $OV_P99")× |
| one writer: mean PUT, its fdatasync, the rest | ${P1_MEAN} µs = ${SYNC_US} + ${SOFT_US} µs | | | |
| 1 MiB PUT throughput (4 writers) | ${M_RPS} MiB/s | sequential ${FIO_SEQ} MiB/s | ≥ 0.8× | $(R "$M_RPS / $FIO_SEQ")× |
| 1 MiB writes, fdatasync after each | | ${FIO_SEQSYNC} MiB/s | | $(R "$M_RPS / $FIO_SEQSYNC")× |
| write amplification, 1 MiB / 64 KiB blobs | $(R "$WA_MIB" 4) / $(R "$WA_64K" 4) | | ≤ 1.001 / 1.01 | |
| 4 KiB PUT/s at 8 / 64 writers | ${P8_RPS} / ${P64_RPS} | | | |
| 4 KiB PUT at 64 writers, p50 / p99 | ${P64_50} / ${P64_99} µs | | | |
| fdatasyncs for ${PUTS} PUTs at 8 and 64 writers | ${FSYNCS} | | | |
| 4 KiB GET/s (64 connections), p50 | ${G_RPS}, ${G_50} µs | | | |
| replicas 3: 4 KiB PUT, one writer, p50 | ${R3_50} µs | append+fdatasync ${FIO_P50} µs | ≤ 3× | $(R "$R3_50 / $FIO_P50")× |
| replicas 3: 4 KiB PUT, one writer, p99 / mean / PUT/s | ${R3_99} / ${R3_MEAN} µs / ${R3_RPS} | | | |
| replicas 3: 1 MiB PUT throughput (4 writers) | ${R3_M_RPS} MiB/s | 1 MiB + fdatasync each ${FIO_SEQSYNC} MiB/s | ≥ 0.5× | $(R "$R3_M_RPS / $FIO_SEQSYNC")× |
| replicas 3, NATS stores in /dev/shm: 4 KiB PUT p50 | ${S3_50} µs | append+fdatasync ${FIO_P50} µs | ≤ 3× | $(R "$S3_50 / $FIO_P50")× |
| replicas 3, NATS stores in /dev/shm: 4 KiB p99 / mean / PUT/s | ${S3_99} / ${S3_MEAN} µs / ${S3_RPS} | | | |
| replicas 3, NATS stores in /dev/shm: 1 MiB PUT throughput | ${S3_M_RPS} MiB/s | 1 MiB + fdatasync each ${FIO_SEQSYNC} MiB/s | ≥ 0.5× | $(R "$S3_M_RPS / $FIO_SEQSYNC")× |
TABLE
mkdir -p loadtest/results
CSV=loadtest/results/storage-bench.csv
# The commit of the build's sources (with FOLIO_BENCH_NO_BUILD that may be another checkout).
SRC=$(awk -F= '/^CMAKE_HOME_DIRECTORY/ {print $2}' "$BUILD/CMakeCache.txt" 2>/dev/null || true)
COMMIT=$(git -C "${SRC:-.}" rev-parse --short HEAD 2>/dev/null || echo unknown)
[[ -f $CSV ]] || echo "date,commit,rounds,secs,fio_append_p50_us,fio_append_p99_us,fio_overwrite_p50_us,fio_overwrite_p99_us,put1_p50_us,put1_p99_us,put1_mean_us,put1_sync_us,put1_software_us,fio_seq_mibs,fio_seq_sync_mibs,mib_put_mibs,wa_1mib,wa_64k,put8_rps,put64_rps,put64_p50_us,put64_p99_us,fsyncs,puts,get_rps,get_p50_us" >"$CSV"
echo "$(date -u +%FT%TZ),$COMMIT,$ROUNDS,$SECS,$FIO_P50,$FIO_P99,$OV_P50,$OV_P99,$P1_50,$P1_99,$P1_MEAN,$SYNC_US,$SOFT_US,$FIO_SEQ,$FIO_SEQSYNC,$M_RPS,$WA_MIB,$WA_64K,$P8_RPS,$P64_RPS,$P64_50,$P64_99,$FSYNCS,$PUTS,$G_RPS,$G_50" >>"$CSV"
CSV3=loadtest/results/storage-bench-replicated.csv
[[ -f $CSV3 ]] || echo "date,commit,secs,fio_append_p50_us,fio_seq_sync_mibs,r3_put1_p50_us,r3_put1_p99_us,r3_put1_mean_us,r3_mib_put_mibs,r3shm_put1_p50_us,r3shm_put1_p99_us,r3shm_put1_mean_us,r3shm_mib_put_mibs" >"$CSV3"
echo "$(date -u +%FT%TZ),$COMMIT,$SECS,$FIO_P50,$FIO_SEQSYNC,$R3_50,$R3_99,$R3_MEAN,$R3_M_RPS,$S3_50,$S3_99,$S3_MEAN,$S3_M_RPS" >>"$CSV3"
rm -rf "$WORK/journal"
