#!/usr/bin/env bash
# Creates the Secret "folio-tokens" that deploy/k8s expects, with new random
# tokens (nothing secret is kept in the repository):
#   api-token            ingest's API token (FOLIO_TOKEN): `folio push --token`
#   storage-write-token  folio-storage's write token; ingest's --storage-token
#   storage-read-token   folio-storage's read token; the edges' --storage-token
#   backup-key           the key that signs ingest's backups (--backup-key-file),
#                        so an ingest on a new disk can verify and restore them
# Usage: deploy/k8s/make-secrets.sh [NAMESPACE]   (default: folio)
# Give your own values (e.g. the tokens of an existing installation) in the
# environment: FOLIO_API_TOKEN, FOLIO_STORAGE_WRITE_TOKEN,
# FOLIO_STORAGE_READ_TOKEN, FOLIO_BACKUP_KEY. An existing Secret is left alone (delete it first
# to replace it, then restart ingest, storage and the edges).
# The tokens go to kubectl as files in a private temporary directory, never
# on a command line. Read the API token back with
#   kubectl -n folio get secret folio-tokens -o jsonpath='{.data.api-token}' | base64 -d
set -euo pipefail
NS=${1:-folio}
SECRET=folio-tokens
KEYS=(api-token storage-write-token storage-read-token backup-key)

if kubectl get namespace "$NS" >/dev/null 2>&1; then :; else
  kubectl create namespace "$NS"
fi
if kubectl -n "$NS" get secret "$SECRET" >/dev/null 2>&1; then
  echo "make-secrets: secret $NS/$SECRET exists; left as it is" >&2
  exit 0
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
chmod 700 "$dir"
random_token() { od -An -tx1 -N32 /dev/urandom | tr -d ' \n'; }
given=("${FOLIO_API_TOKEN:-}" "${FOLIO_STORAGE_WRITE_TOKEN:-}" "${FOLIO_STORAGE_READ_TOKEN:-}" "${FOLIO_BACKUP_KEY:-}")
args=()
for i in "${!KEYS[@]}"; do
  value=${given[$i]:-$(random_token)}
  printf '%s' "$value" > "$dir/${KEYS[$i]}"
  args+=("--from-file=${KEYS[$i]}=$dir/${KEYS[$i]}")
done
if cmp -s "$dir/storage-write-token" "$dir/storage-read-token"; then
  echo "make-secrets: the storage write and read tokens must differ" >&2
  exit 1
fi
kubectl -n "$NS" create secret generic "$SECRET" "${args[@]}"
echo "make-secrets: created $NS/$SECRET (${KEYS[*]})"
