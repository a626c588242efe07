#!/usr/bin/env bash
# Creates the Secrets that deploy/k8s expects (nothing secret is kept in the
# repository):
#
# "folio-tokens", random values:
#   api-token               ingest's API token (FOLIO_TOKEN_FILE): `folio push --token`
#   storage-write-token     folio-storage's write token; ingest's --storage-token
#   storage-read-token      folio-storage's read token; the edges' --storage-token
#   backup-key              the key that signs ingest's backups (--backup-key-file),
#                           so an ingest on a new disk can verify and restore them
#   nats-<user>-password    the NATS password of user ingest, edge, search,
#                           storage (deploy/nats/permissions.conf): the NATS pods
#                           get all four, each folio pod only its own
# "nats-routes-tls", made with openssl: a CA (ca.crt) and one certificate
# (tls.crt, tls.key) for the routes between the NATS nodes (mutual TLS, each
# node checks the other's certificate against ca.crt; SANs nats-0.nats ...,
# *.nats, *.nats.<namespace>.svc.cluster.local). Or let cert-manager make
# it (deploy/NATS.md).
#
# Usage: deploy/k8s/make-secrets.sh [NAMESPACE]   (default: folio)
# Give your own values (e.g. the tokens of an existing installation) in the
# environment: FOLIO_API_TOKEN, FOLIO_STORAGE_WRITE_TOKEN,
# FOLIO_STORAGE_READ_TOKEN, FOLIO_BACKUP_KEY. Idempotent: a value the Secret
# has is kept; a key it lacks (an installation from before the NATS users)
# is added; an existing nats-routes-tls is left alone. To rotate, see
# deploy/NATS.md.
# Values go to kubectl as files in a private temporary directory or on
# stdin, never on a command line. Read the API token back with
#   kubectl -n folio get secret folio-tokens -o jsonpath='{.data.api-token}' | base64 -d
set -euo pipefail
NS=${1:-folio}
SECRET=folio-tokens
KEYS=(api-token storage-write-token storage-read-token backup-key nats-ingest-password nats-edge-password nats-search-password nats-storage-password)
TLS_SECRET=nats-routes-tls
TLS_KEYS=(ca.crt tls.crt tls.key)
TLS_DAYS=${FOLIO_NATS_TLS_DAYS:-3650}

if kubectl get namespace "$NS" >/dev/null 2>&1; then :; else
  kubectl create namespace "$NS"
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
chmod 700 "$dir"
umask 077
random_token() { od -An -tx1 -N32 /dev/urandom | tr -d ' \n'; }
# "p" + hex: nats-server's config parser reads an all-digit value as a number.
random_password() { printf 'p%s' "$(random_token)"; }

# folio-tokens: what exists is kept, what is missing is made.
declare -A given=([api-token]=${FOLIO_API_TOKEN:-} [storage-write-token]=${FOLIO_STORAGE_WRITE_TOKEN:-}
                  [storage-read-token]=${FOLIO_STORAGE_READ_TOKEN:-} [backup-key]=${FOLIO_BACKUP_KEY:-})
exists=0
kubectl -n "$NS" get secret "$SECRET" >/dev/null 2>&1 && exists=1
args=()
added=()
for key in "${KEYS[@]}"; do
  value=""
  if ((exists)); then
    value=$(kubectl -n "$NS" get secret "$SECRET" -o "jsonpath={.data.${key//./\\.}}" | base64 -d)
  fi
  if [[ -z $value ]]; then
    if [[ $key == nats-*-password ]]; then value=$(random_password); else value=${given[$key]:-$(random_token)}; fi
    added+=("$key")
  fi
  printf '%s' "$value" > "$dir/$key"
  args+=("--from-file=$key=$dir/$key")
done
if cmp -s "$dir/storage-write-token" "$dir/storage-read-token"; then
  echo "make-secrets: the storage write and read tokens must differ" >&2
  exit 1
fi
if ((${#added[@]} == 0)); then
  echo "make-secrets: secret $NS/$SECRET has every key; left as it is" >&2
elif ((exists)); then
  kubectl -n "$NS" create secret generic "$SECRET" "${args[@]}" --dry-run=client -o yaml | kubectl -n "$NS" apply -f -
  echo "make-secrets: added ${added[*]} to $NS/$SECRET (restart the pods that use them)"
else
  kubectl -n "$NS" create secret generic "$SECRET" "${args[@]}"
  echo "make-secrets: created $NS/$SECRET (${KEYS[*]})"
fi

# nats-routes-tls: a CA and the routes' certificate, made once.
if kubectl -n "$NS" get secret "$TLS_SECRET" >/dev/null 2>&1; then
  echo "make-secrets: secret $NS/$TLS_SECRET exists; left as it is" >&2
  exit 0
fi
openssl req -x509 -newkey rsa:3072 -nodes -days "$TLS_DAYS" -subj "/CN=folio NATS routes CA" \
  -keyout "$dir/ca.key" -out "$dir/ca.crt" 2>/dev/null
sans="DNS:nats,DNS:*.nats,DNS:*.nats.$NS,DNS:*.nats.$NS.svc,DNS:*.nats.$NS.svc.cluster.local"
for i in 0 1 2; do sans+=",DNS:nats-$i.nats,DNS:nats-$i.nats.$NS.svc.cluster.local"; done
openssl req -newkey rsa:3072 -nodes -subj "/CN=nats" -keyout "$dir/tls.key" -out "$dir/tls.csr" 2>/dev/null
printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\nkeyUsage=digitalSignature,keyEncipherment\n' \
  "$sans" > "$dir/ext.cnf"
openssl x509 -req -in "$dir/tls.csr" -CA "$dir/ca.crt" -CAkey "$dir/ca.key" -CAcreateserial \
  -days "$TLS_DAYS" -extfile "$dir/ext.cnf" -out "$dir/tls.crt" 2>/dev/null
tls_args=()
for key in "${TLS_KEYS[@]}"; do tls_args+=("--from-file=$key=$dir/$key"); done
kubectl -n "$NS" create secret generic "$TLS_SECRET" "${tls_args[@]}"
echo "make-secrets: created $NS/$TLS_SECRET (${TLS_KEYS[*]}; the CA's key is not kept)"
