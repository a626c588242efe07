#!/usr/bin/env bash
# Pins folio's images in deploy/k8s/common/kustomization.yaml to one version:
# every folio-<svc> image's newTag becomes VERSION (the `git describe --tags
# --always` the images were built and tagged from), and with --digest also
# its digest, read from the registry (skopeo, else docker buildx imagetools),
# so that a re-pushed tag cannot change what runs.
# Usage: deploy/k8s/pin-images.sh VERSION [--registry REG] [--digest] [--file F]
#   --registry REG   newName becomes REG/folio-<svc> (default: keep newName)
#   --digest         also pin digest: sha256:... (needs the images pushed)
#   --file F         another kustomization.yaml (default: common/'s)
# kubectl 1.20 has no `kustomize edit set image`: this edits the file's
# images: entries in place and touches nothing else (NATS stays as it is).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
FILE=$HERE/common/kustomization.yaml
VERSION="" REGISTRY="" DIGEST=0
while [ $# -gt 0 ]; do
  case $1 in
    --registry) REGISTRY=${2:?--registry needs a value}; shift 2 ;;
    --digest) DIGEST=1; shift ;;
    --file) FILE=${2:?--file needs a value}; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    -*) echo "pin-images: unknown option $1" >&2; exit 2 ;;
    *) VERSION=$1; shift ;;
  esac
done
if [ -z "$VERSION" ]; then
  echo "usage: pin-images.sh VERSION [--registry REG] [--digest] (VERSION: git describe --tags --always)" >&2
  exit 2
fi
if [ "$VERSION" = latest ] || ! [[ $VERSION =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]]; then
  echo "pin-images: $VERSION is not a version tag" >&2
  exit 2
fi

digest_of() {  # IMAGE:TAG -> sha256:...
  if command -v skopeo >/dev/null; then
    skopeo inspect --format '{{.Digest}}' "docker://$1"
  elif command -v docker >/dev/null; then
    docker buildx imagetools inspect --format '{{json .Manifest.Digest}}' "$1" | tr -d '"'
  else
    echo "pin-images: --digest needs skopeo or docker buildx" >&2
    return 1
  fi
}

# One pass per folio image: set newName (with --registry), newTag and the
# digest line of the entry "- name: folio/<svc>".
for svc in ingest edge search storage; do
  name=$(awk -v n="folio/$svc" '$1=="-" && $2=="name:" {cur=$3} cur==n && $1=="newName:" {print $2; exit}' "$FILE")
  [ -n "$name" ] || { echo "pin-images: no images: entry folio/$svc with newName in $FILE" >&2; exit 1; }
  [ -z "$REGISTRY" ] || name=$REGISTRY/folio-$svc
  digest=""
  if [ "$DIGEST" = 1 ]; then
    digest=$(digest_of "$name:$VERSION")
    [[ $digest =~ ^sha256:[0-9a-f]{64}$ ]] || { echo "pin-images: no digest for $name:$VERSION" >&2; exit 1; }
  fi
  tmp=$(mktemp)
  awk -v n="folio/$svc" -v name="$name" -v tag="$VERSION" -v digest="$digest" '
    $1=="-" && $2=="name:" { cur=$3 }
    cur==n && $1=="digest:" { next }
    cur==n && $1=="newName:" { print "  newName: " name; next }
    cur==n && $1=="newTag:" { print "  newTag: " tag; if (digest != "") print "  digest: " digest; next }
    { print }' "$FILE" > "$tmp"
  cat "$tmp" > "$FILE"
  rm -f "$tmp"
  echo "pin-images: folio/$svc -> $name:$VERSION${digest:+@$digest}"
done
