#!/usr/bin/env bash
# Upgrades a running folio on Kubernetes to VERSION, one service at a time, in
# the order that keeps readers serving: a newer ingest may publish what only a
# newer edge or search understands, never the reverse, so the readers go first
# and the writer last:
#   1. edges   (Deployment: a new pod starts, replays every page, then an old one goes)
#   2. search  (StatefulSet, one pod at a time; each catches up before it is Ready)
#   3. storage (StatefulSet, one replica at a time; ingest and the edges move on to the next)
#   4. ingest  (the writer: pushes get 503 for the restart; `folio push` retries)
# Each step waits for its rollout (kubectl rollout status: every pod updated
# and Ready) before the next; a step that fails or times out stops the
# upgrade there (`kubectl rollout undo` that one, or fix and run again: steps
# already on VERSION change nothing).
# Usage: deploy/upgrade.sh VERSION [--namespace NS] [--registry REG] [--timeout 20m] [--dry-run]
#   VERSION     the images' tag: git describe --tags --always of the build
#   --registry  image names REG/folio-<svc> (default: common/kustomization.yaml's newName)
#   --timeout   per step (default 20m: search may take 15 min to load its index)
#   --dry-run   print the kubectl commands, run nothing
# Afterwards pin the same version in the files (deploy/k8s/pin-images.sh VERSION)
# so that the next `kubectl apply -k` does not roll back.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
KUSTOMIZATION=$HERE/k8s/common/kustomization.yaml
NS=folio VERSION="" REGISTRY="" TIMEOUT=20m DRY=0
while [ $# -gt 0 ]; do
  case $1 in
    --namespace|-n) NS=${2:?}; shift 2 ;;
    --registry) REGISTRY=${2:?}; shift 2 ;;
    --timeout) TIMEOUT=${2:?}; shift 2 ;;
    --dry-run) DRY=1; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    -*) echo "upgrade: unknown option $1" >&2; exit 2 ;;
    *) VERSION=$1; shift ;;
  esac
done
if [ -z "$VERSION" ] || [ "$VERSION" = latest ]; then
  echo "usage: upgrade.sh VERSION [--namespace NS] [--registry REG] [--dry-run] (VERSION: not latest)" >&2
  exit 2
fi

run() {
  echo "+ $*"
  [ "$DRY" = 1 ] || "$@"
}

image_of() {  # SVC -> the image name, without tag
  if [ -n "$REGISTRY" ]; then
    echo "$REGISTRY/folio-$1"
  else
    awk -v n="folio/$1" '$1=="-" && $2=="name:" {cur=$3} cur==n && $1=="newName:" {print $2; exit}' "$KUSTOMIZATION"
  fi
}

# kind/name container service, in upgrade order.
for step in "deployment/edge edge edge" "statefulset/search search search" \
            "statefulset/storage storage storage" "statefulset/ingest ingest ingest"; do
  read -r workload container svc <<<"$step"
  image=$(image_of "$svc")
  [ -n "$image" ] || { echo "upgrade: no image name for folio/$svc" >&2; exit 1; }
  echo "upgrade: $workload -> $image:$VERSION"
  run kubectl -n "$NS" set image "$workload" "$container=$image:$VERSION"
  run kubectl -n "$NS" rollout status "$workload" --timeout="$TIMEOUT"
done
echo "upgrade: every folio service runs $VERSION; pin it: deploy/k8s/pin-images.sh $VERSION${REGISTRY:+ --registry $REGISTRY}"
