#!/usr/bin/env bash
# make run: start nats-server -js, folio-storage, folio-ingest, folio-edge and
# folio-search on loopback, publish examples/vault, print the URL. Ctrl-C
# stops everything started here. Ports: 4222 (NATS), 8080 (ingest), 8081
# (edge), 8082 (search), 8083 (storage) unless taken, then the next free
# ones; override with NATS_PORT, INGEST_PORT, EDGE_PORT, SEARCH_PORT,
# STORAGE_PORT. folio-storage makes its tokens in run/storage/ on its first
# start (also in a run/ from before it had them): the write token goes to
# ingest, the read token to the edge.
# FOLIO_NATS_AUTH=1: NATS with the shipped users and permissions
# (deploy/nats/permissions.conf), passwords made once in run/nats-auth/, and
# every service on its own user, as in the deployments (deploy/NATS.md).
set -euo pipefail
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN="$ROOT/$BUILD/bin"
RUN="$ROOT/run"
mkdir -p "$RUN/nats" "$RUN/ingest" "$RUN/search" "$RUN/storage" "$RUN/logs"

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
pick_port() { local p=$1; while ! port_free "$p"; do p=$((p + 1)); done; echo "$p"; }
NATS_PORT=${NATS_PORT:-$(pick_port 4222)}
INGEST_PORT=${INGEST_PORT:-$(pick_port 8080)}
EDGE_PORT=${EDGE_PORT:-$(pick_port 8081)}
[[ $EDGE_PORT == "$INGEST_PORT" ]] && EDGE_PORT=$(pick_port $((INGEST_PORT + 1)))
SEARCH_PORT=${SEARCH_PORT:-$(pick_port 8082)}
while [[ $SEARCH_PORT == "$INGEST_PORT" || $SEARCH_PORT == "$EDGE_PORT" ]]; do SEARCH_PORT=$(pick_port $((SEARCH_PORT + 1))); done
STORAGE_PORT=${STORAGE_PORT:-$(pick_port 8083)}
while [[ $STORAGE_PORT == "$INGEST_PORT" || $STORAGE_PORT == "$EDGE_PORT" || $STORAGE_PORT == "$SEARCH_PORT" ]]; do
  STORAGE_PORT=$(pick_port $((STORAGE_PORT + 1)))
done
TOKEN=${FOLIO_TOKEN:-$(cat "$RUN/ingest/token" 2>/dev/null || head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')}
echo "$TOKEN" >"$RUN/ingest/token"

pids=()
cleanup() {
  trap - INT TERM EXIT
  echo; echo "stopping folio (ingest, edge, search, storage, nats)..."
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup INT TERM EXIT

wait_http() {
  for _ in $(seq 1 100); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "timed out waiting for $1 (logs in $RUN/logs)" >&2; return 1
}

declare -A nats_user_args=()  # USER -> that service's --nats-user/--nats-password-file
if [[ ${FOLIO_NATS_AUTH:-0} == 1 ]]; then
  AUTH="$RUN/nats-auth"
  mkdir -p "$AUTH" && chmod 700 "$AUTH"
  cp "$ROOT/deploy/nats/permissions.conf" "$AUTH/permissions.conf"
  printf 'listen: 127.0.0.1:%s\nhttp: 127.0.0.1:%s\nmax_payload: 1MB\njetstream { store_dir: "%s" }\ninclude ./permissions.conf\n' \
    "$NATS_PORT" $((NATS_PORT + 4000)) "$RUN/nats" >"$AUTH/nats.conf"
  for u in ingest edge search storage; do
    [[ -s $AUTH/$u ]] || (umask 077; printf 'p%s\n' "$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')" >"$AUTH/$u")
    export "FOLIO_NATS_${u^^}_PASSWORD=$(head -n1 "$AUTH/$u")"
    nats_user_args[$u]="--nats-user $u --nats-password-file $AUTH/$u"
  done
  nats-server -c "$AUTH/nats.conf" >"$RUN/logs/nats.log" 2>&1 & pids+=($!)
  for u in ingest edge search storage; do unset "FOLIO_NATS_${u^^}_PASSWORD"; done
else
  nats-server -js -a 127.0.0.1 -p "$NATS_PORT" -sd "$RUN/nats" -m $((NATS_PORT + 4000)) \
    >"$RUN/logs/nats.log" 2>&1 & pids+=($!)
fi
wait_http "http://127.0.0.1:$((NATS_PORT + 4000))/healthz?js-enabled-only=true"

# Storage keeps only the hashes of its tokens; the plain-text files are for
# us. If one was deleted, let storage make a new pair.
WRITE_TOKEN_FILE="$RUN/storage/write-token"; READ_TOKEN_FILE="$RUN/storage/read-token"
if [[ -f "$RUN/storage/token-hashes" && ! ( -f "$WRITE_TOKEN_FILE" && -f "$READ_TOKEN_FILE" ) ]]; then
  echo "run/storage/write-token or read-token is missing: folio-storage will make new tokens"
  mv "$RUN/storage/token-hashes" "$RUN/storage/token-hashes.old"
fi
"$BIN/folio-storage" --listen "127.0.0.1:$STORAGE_PORT" --data "$RUN/storage" \
  >"$RUN/logs/storage.log" 2>&1 & pids+=($!)
wait_http "http://127.0.0.1:$STORAGE_PORT/readyz"

"$BIN/folio-ingest" --listen "127.0.0.1:$INGEST_PORT" --nats "nats://127.0.0.1:$NATS_PORT" \
  --data "$RUN/ingest" --token "$TOKEN" --site-name "folio docs" --instance make-run \
  --storage "http://127.0.0.1:$STORAGE_PORT" --storage-token-file "$WRITE_TOKEN_FILE" ${nats_user_args[ingest]:-} \
  >"$RUN/logs/ingest.log" 2>&1 & pids+=($!)
"$BIN/folio-edge" --listen "127.0.0.1:$EDGE_PORT" --nats "nats://127.0.0.1:$NATS_PORT" \
  --storage "http://127.0.0.1:$STORAGE_PORT" --storage-token-file "$READ_TOKEN_FILE" ${nats_user_args[edge]:-} \
  >"$RUN/logs/edge.log" 2>&1 & pids+=($!)
"$BIN/folio-search" --listen "127.0.0.1:$SEARCH_PORT" --nats "nats://127.0.0.1:$NATS_PORT" \
  --data "$RUN/search" ${nats_user_args[search]:-} >"$RUN/logs/search.log" 2>&1 & pids+=($!)
wait_http "http://127.0.0.1:$INGEST_PORT/readyz"
wait_http "http://127.0.0.1:$EDGE_PORT/readyz"
wait_http "http://127.0.0.1:$SEARCH_PORT/readyz"

"$BIN/folio" push "$ROOT/examples/vault" --server "http://127.0.0.1:$INGEST_PORT" --token "$TOKEN"

cat <<MSG

  folio is running.
    open the site:  http://127.0.0.1:$EDGE_PORT/
    search it:      http://127.0.0.1:$EDGE_PORT/_/search?q=markdown
    a diagram:      http://127.0.0.1:$EDGE_PORT/showcase#diagrams  (mermaid: $(grep -q 'serving the bundled mermaid' "$RUN/logs/ingest.log" && echo "bundled, served by the site" || echo "from its CDN, see logs/ingest.log"))
    ingest API:     http://127.0.0.1:$INGEST_PORT  (token: $TOKEN)
    search API:     http://127.0.0.1:$SEARCH_PORT/api/v1/search?site=default&q=markdown
    storage:        http://127.0.0.1:$STORAGE_PORT/blobs   (attachments; tokens: write $WRITE_TOKEN_FILE, read $READ_TOKEN_FILE)
    back up:        $BIN/folio-ingest backup --storage http://127.0.0.1:$STORAGE_PORT --storage-token-file $WRITE_TOKEN_FILE --data $RUN/ingest
                    (signed with $RUN/ingest/backup.key: keep a copy; restore: stop ingest, same flags, "restore")
    push a vault:   $BIN/folio push DIR --server http://127.0.0.1:$INGEST_PORT --token $TOKEN
    logs:           $RUN/logs/

  Press Ctrl-C to stop.
MSG
wait
