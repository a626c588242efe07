#!/usr/bin/env bash
# The container test: folio's images and docker-compose.yml, run for real
# with Debian's podman and podman-compose (no Docker engine, no registry).
#
#   deploy/test-containers.sh           the whole test (below)
#   deploy/test-containers.sh prepare   only the base image and the package
#                                       layers (build deps, runtime); CI can
#                                       start this early, in the background
#
# 1. installs podman, podman-compose, runc, debootstrap and the CNI dnsname
#    plugin when missing (Debian 12; run as root);
# 2. makes a Debian 12 base image from the package mirror with
#    `debootstrap --variant=minbase bookworm` + `podman import`, cached as
#    localhost/debian-base:bookworm and tagged as the Dockerfile's FROM
#    (docker.io/library/debian:bookworm-slim);
# 3. builds every image of deploy/docker/Dockerfile;
# 4. `podman-compose up -d` on a project of its own, with free host ports:
#    every service except grafana, whose image exists only on a public
#    registry this test cannot reach (its provisioning is checked by the
#    Prometheus/Grafana tests); the one-shot `publish` pushes examples/vault;
# 5. checks: every image's shared libraries are present; every service is
#    ready and its HEALTHCHECK healthy; the tokens were generated; both edges
#    serve / and a note page, search answers a query, Prometheus's HTTP API
#    reports every folio target up;
# 6. `podman-compose down -v`, also when a step fails.
# Every wait has a deadline; phase times are printed at the end.
#
# Environment: FOLIO_TEST_PROJECT (compose project, folio-ctest),
# FOLIO_TEST_STATE (containers.conf and debootstrap scratch,
# /var/tmp/folio-containers), DEBIAN_MIRROR (http://deb.debian.org/debian),
# FOLIO_TEST_KEEP=1 (leave the deployment up for a look; down it yourself).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MODE=${1:-test}
PROJECT=${FOLIO_TEST_PROJECT:-folio-ctest}
STATE=${FOLIO_TEST_STATE:-/var/tmp/folio-containers}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
BASE=localhost/debian-base:bookworm
FROM_NAME=docker.io/library/debian:bookworm-slim
# Every image the compose file runs, by Dockerfile target.
declare -A IMAGES=(
  [folio-ingest]=folio/ingest [folio-edge]=folio/edge [folio-search]=folio/search
  [folio-storage]=folio/storage [folio-cli]=folio/cli [nats]=folio/nats [prometheus]=folio/prometheus
)
# Compose services started (all but grafana: see above).
SERVICES=(secrets nats storage storage-2 ingest edge-1 edge-2 search search-2 prometheus publish)

timings=()
phase_start=$SECONDS
phase_name=""
phase() {
  if [[ -n $phase_name ]]; then timings+=("$(printf '%-10s %4ds' "$phase_name" $((SECONDS - phase_start)))"); fi
  phase_name=$1
  phase_start=$SECONDS
  [[ -n $1 ]] && echo "== test-containers: $1 (at ${SECONDS}s)"
  return 0
}
report_timings() {
  phase ""
  echo "== test-containers: phase times"
  printf '   %s\n' "${timings[@]}"
  echo "   total      $(printf '%4ds' "$SECONDS")"
}
fail() { echo "test-containers: FAIL: $*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || fail "run as root (rootful podman; apt-get; debootstrap)"

phase packages
PKGS=(podman podman-compose runc debootstrap golang-github-containernetworking-plugin-dnsname curl)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# podman's defaults fail on these machines: crun refuses the cgroup layout
# and raising RLIMIT_NOFILE/NPROC is not permitted.
mkdir -p "$STATE"
cat >"$STATE/containers.conf" <<'EOF'
[containers]
default_ulimits = []
[engine]
cgroup_manager = "cgroupfs"
runtime = "runc"
EOF
export CONTAINERS_CONF=$STATE/containers.conf

phase base-image
if podman image exists "$BASE"; then
  echo "$BASE exists (cached)"
else
  rm -rf "$STATE/rootfs"
  debootstrap --variant=minbase bookworm "$STATE/rootfs" "$MIRROR" >"$STATE/debootstrap.log" 2>&1 \
    || { tail -20 "$STATE/debootstrap.log" >&2; fail "debootstrap (log: $STATE/debootstrap.log)"; }
  tar -C "$STATE/rootfs" -c . | podman import --quiet - "$BASE" >/dev/null
  rm -rf "$STATE/rootfs"
fi
podman tag "$BASE" "$FROM_NAME"

build() {  # TARGET [TAG]: one target of the Dockerfile, docker format (keeps HEALTHCHECK)
  podman build --quiet --format docker --layers -f "$ROOT/deploy/docker/Dockerfile" \
    --target "$1" ${2:+-t "$2"} "$ROOT" >/dev/null
}
# The compile stage, with this machine's ccache mounted when there is one: the
# stage uses `make build`'s flags, so after a `make build` of the same sources
# (CI does one first) it is cache hits. FOLIO_TEST_CCACHE=0: compile from scratch.
build_binaries() {
  local cache="" log="$STATE/build-stage.log"
  if [[ ${FOLIO_TEST_CCACHE:-1} == 1 ]] && command -v ccache >/dev/null; then
    cache=$(ccache -k cache_dir 2>/dev/null || true)
    [[ -d $cache ]] || cache=""
  fi
  if ! podman build --format docker --layers -f "$ROOT/deploy/docker/Dockerfile" --target build \
      ${cache:+-v "$cache:/ccache"} "$ROOT" >"$log" 2>&1; then
    tail -40 "$log" >&2
    fail "the build stage failed (log: $log)"
  fi
  if [[ -n $cache ]]; then
    echo "   build stage with ccache from $cache: $(grep -E '^ *(Hits|Misses):' "$log" | tr -s ' ' | paste -sd' ')"
  fi
}

if [[ $MODE == prepare ]]; then
  phase package-layers
  build build-deps
  build runtime
  report_timings
  exit 0
fi
[[ $MODE == test ]] || fail "unknown mode '$MODE' (test or prepare)"

phase images
build_binaries  # compiles once; every service target below copies from it
for target in "${!IMAGES[@]}"; do build "$target" "${IMAGES[$target]}:latest"; done
# The runtime stage must hold every shared library the binaries load.
for image in ingest edge search storage cli; do
  bin=folio-$image; [[ $image == cli ]] && bin=folio
  if podman run --rm --no-healthcheck --entrypoint ldd "folio/$image:latest" "/usr/local/bin/$bin" | grep 'not found'; then
    fail "folio/$image: $bin needs libraries the runtime stage lacks (above)"
  fi
done

phase up
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
taken=" "
pick_port() {  # a free loopback port from $1 up, not picked before
  local p=$1
  while [[ $taken == *" $p "* ]] || ! port_free "$p"; do p=$((p + 1)); done
  taken+="$p "
  echo "$p"
}
export FOLIO_BIND=127.0.0.1
export FOLIO_INGEST_PORT=$(pick_port 18080) FOLIO_EDGE1_PORT=$(pick_port 18081)
export FOLIO_EDGE2_PORT=$(pick_port 18084) FOLIO_SEARCH_PORT=$(pick_port 18082)
export FOLIO_STORAGE_PORT=$(pick_port 18083) FOLIO_NATS_MONITOR_PORT=$(pick_port 18222)
export FOLIO_PROMETHEUS_PORT=$(pick_port 19090) FOLIO_GRAFANA_PORT=$(pick_port 13000)
export FOLIO_STORAGE2_PORT=$(pick_port 18085) FOLIO_SEARCH2_PORT=$(pick_port 18086)
export FOLIO_VAULT=$ROOT/examples/vault
compose() { podman-compose --no-ansi -p "$PROJECT" -f "$ROOT/docker-compose.yml" "$@"; }
LOGS=$STATE/logs
down() {
  local rc=$?
  trap - EXIT INT TERM
  if ((rc != 0)); then
    mkdir -p "$LOGS"
    for s in "${SERVICES[@]}"; do podman logs "${PROJECT}_${s}_1" >"$LOGS/$s.log" 2>&1 || true; done
    echo "test-containers: container logs in $LOGS" >&2
    for s in "${SERVICES[@]}"; do echo "--- $s (last lines)"; tail -5 "$LOGS/$s.log"; done >&2
  fi
  if [[ ${FOLIO_TEST_KEEP:-0} == 1 ]]; then
    echo "FOLIO_TEST_KEEP=1: left running; stop with: CONTAINERS_CONF=$CONTAINERS_CONF podman-compose -p $PROJECT down -v"
  else
    phase down
    compose down -v -t 15 >"$STATE/down.log" 2>&1 || echo "test-containers: down failed (log: $STATE/down.log)" >&2
  fi
  report_timings
  exit "$rc"
}
trap down EXIT
trap 'exit 130' INT TERM
compose down -v -t 5 >/dev/null 2>&1 || true  # what an interrupted run left
compose up -d --no-build "${SERVICES[@]}" >"$STATE/up.log" 2>&1 \
  || { tail -30 "$STATE/up.log" >&2; fail "podman-compose up (log: $STATE/up.log)"; }

phase checks
# until DEADLINE_SECONDS WHAT CMD...: CMD until it succeeds, or fail naming WHAT.
until_ok() {
  local secs=$1 what=$2
  local deadline=$((SECONDS + secs))
  shift 2
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "$what (gave up after ${secs}s)"
    sleep 2
  done
  echo "ok: $what"
}
body_has() { curl -fsS --max-time 5 "$1" | grep -qF "$2"; }  # URL TEXT: 200 and TEXT in the body
for svc in ingest:$FOLIO_INGEST_PORT search:$FOLIO_SEARCH_PORT storage:$FOLIO_STORAGE_PORT \
           search-2:$FOLIO_SEARCH2_PORT storage-2:$FOLIO_STORAGE2_PORT; do
  until_ok 120 "${svc%%:*} ready" curl -fsS --max-time 5 "http://127.0.0.1:${svc#*:}/readyz"
done
# The edges answer /readyz on their admin port only, which is not published.
for s in edge-1 edge-2; do
  until_ok 120 "$s ready (admin port)" podman exec "${PROJECT}_${s}_1" curl -fsS --max-time 5 http://127.0.0.1:9081/readyz
  ! curl -fsS --max-time 5 -o /dev/null "http://127.0.0.1:$([[ $s == edge-1 ]] && echo "$FOLIO_EDGE1_PORT" || echo "$FOLIO_EDGE2_PORT")/metrics" \
    || fail "$s serves /metrics on its public port"
done
# Each image's HEALTHCHECK (podman runs it on demand here: its timers need systemd).
for s in ingest edge-1 edge-2 search search-2 storage storage-2 nats prometheus; do
  podman healthcheck run "${PROJECT}_${s}_1" >/dev/null || fail "$s: HEALTHCHECK is not healthy"
done
echo "ok: healthchecks healthy"
# The tokens were made (random, 32 bytes in hex), not taken from a
# compose variable left unexpanded; the two storage roles differ.
token_of() { head -n1 "$(podman volume inspect -f '{{.Mountpoint}}' "${PROJECT}_secrets-$1")/token"; }
for t in api storage-write storage-read; do
  [[ $(token_of "$t") =~ ^[0-9a-f]{64}$ ]] || fail "token $t is not 64 hex digits"
done
[[ $(token_of storage-write) != "$(token_of storage-read)" ]] || fail "storage write and read tokens are equal"
secret_of() { head -n1 "$(podman volume inspect -f '{{.Mountpoint}}' "${PROJECT}_secrets-$1")/password"; }
for u in ingest edge search storage; do
  [[ $(secret_of "nats-$u") =~ ^p[0-9a-f]{64}$ ]] || fail "NATS password of $u is not p + 64 hex digits"
done
[[ -n $(secret_of grafana) ]] || fail "no Grafana admin password"
echo "ok: tokens and passwords generated"
# Every service logged in with its own user and stayed in its permissions.
if podman logs "${PROJECT}_nats_1" 2>&1 | grep "Violation"; then fail "nats logged a violation during start (above)"; fi
echo "ok: no violation in nats' log"
publish_done() {
  [[ $(podman inspect -f '{{.State.Status}}' "${PROJECT}_publish_1") == exited ]]
}
until_ok 180 "publish finished" publish_done
rc=$(podman inspect -f '{{.State.ExitCode}}' "${PROJECT}_publish_1")
((rc == 0)) || { podman logs "${PROJECT}_publish_1" >&2; fail "publish exited $rc"; }
for port in "$FOLIO_EDGE1_PORT" "$FOLIO_EDGE2_PORT"; do
  until_ok 60 "edge :$port serves /" body_has "http://127.0.0.1:$port/" "own documentation, written as a vault"
  until_ok 60 "edge :$port serves a note" body_has "http://127.0.0.1:$port/getting-started" "Getting started"
done
until_ok 120 "search answers" body_has \
  "http://127.0.0.1:$FOLIO_SEARCH_PORT/api/v1/search?site=default&q=getting+started" '"url":"/getting-started"'
targets_up() {  # every folio job has a target, and every target is up
  local json
  json=$(curl -fsS --max-time 5 "http://127.0.0.1:$FOLIO_PROMETHEUS_PORT/api/v1/targets?state=active") || return 1
  local job
  for job in ingest edge search storage; do
    grep -qF "\"job\":\"$job\"" <<<"$json" || return 1
  done
  # 7 folio targets (ingest, two edges, two search and two storage
  # replicas) plus prometheus itself, none down or unknown.
  [[ $(grep -o '"health":"up"' <<<"$json" | wc -l) -ge 8 ]] || return 1
  ! grep -qE '"health":"(down|unknown)"' <<<"$json"
}
until_ok 120 "prometheus: every folio target up" targets_up

phase failover
# An attachment pushed through ingest (to the first storage replica, and
# through it to JetStream), then that replica stopped: both edges still
# serve the attachment's bytes (from storage-2), and with one search
# replica stopped the edges' search still answers.
api_token=$(token_of api)
attachment=$(head -c 3000 /dev/urandom | base64 -w0)
attachment_sha=$(base64 -d <<<"$attachment" | sha256sum | cut -c1-64)
curl -fsS --max-time 30 -H "Authorization: Bearer $api_token" -H 'Content-Type: application/json' \
  --data "{\"notes\":[{\"path\":\"Failover.md\",\"content\":\"# Failover\\n\\n![[failover.png]]\\n\"}],\"attachments\":[{\"path\":\"failover.png\",\"data\":\"$attachment\"}]}" \
  "http://127.0.0.1:$FOLIO_INGEST_PORT/api/v1/push" >/dev/null || fail "push with an attachment"
asset="/assets/${attachment_sha:0:16}/failover.png"
until_ok 60 "edge serves the note with the attachment" body_has "http://127.0.0.1:$FOLIO_EDGE1_PORT/failover" "$asset"
compose stop -t 5 storage >/dev/null 2>&1 || fail "stopping storage"
asset_ok() { [[ $(curl -fsS --max-time 10 "http://127.0.0.1:$1$asset" | sha256sum | cut -c1-64) == "$attachment_sha" ]]; }
for port in "$FOLIO_EDGE1_PORT" "$FOLIO_EDGE2_PORT"; do
  asset_ok "$port" || fail "edge :$port did not serve the attachment with storage stopped"
done
echo "ok: storage stopped, both edges serve the attachment from storage-2"
compose stop -t 5 search >/dev/null 2>&1 || fail "stopping search"
for port in "$FOLIO_EDGE1_PORT" "$FOLIO_EDGE2_PORT"; do
  body_has "http://127.0.0.1:$port/_/search?q=getting+started&mode=text" "/getting-started" \
    || fail "edge :$port: search did not answer with one search replica stopped"
done
echo "ok: search stopped, both edges' search answers from search-2"
if podman logs "${PROJECT}_nats_1" 2>&1 | grep "Violation"; then fail "nats logged a violation (above)"; fi
echo "ok: no violation in nats' log after the failover checks"
# A client without a user is refused (inside the nats container: 4222 is
# not published).
anonymous=$(podman exec "${PROJECT}_nats_1" bash -c \
  'exec 3<>/dev/tcp/127.0.0.1/4222; printf "CONNECT {\"verbose\":false}\r\nPING\r\n" >&3; timeout 2 cat <&3' || true)
[[ $anonymous == *"Authorization Violation"* ]] || fail "nats let a client without a user in: $anonymous"
echo "ok: nats refuses a client without a user"
echo "test-containers: PASS"
