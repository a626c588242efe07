#!/bin/bash
# folio-secrets: makes a compose deployment's secrets, once, each in its own
# directory (a volume of its own, so every service mounts only the ones it
# needs):
#   /run/folio/api/token            ingest's API token (authors, publish)
#   /run/folio/storage-write/token  storage's write token (storage, ingest)
#   /run/folio/storage-read/token   storage's read token (storage, edges)
#   /run/folio/nats-<user>/password NATS password of user ingest, edge,
#                                   search, storage (that service and nats)
#   /run/folio/grafana/password     Grafana's admin password (grafana)
# A secret given in the environment (FOLIO_API_TOKEN, FOLIO_STORAGE_WRITE_TOKEN,
# FOLIO_STORAGE_READ_TOKEN, GRAFANA_ADMIN_PASSWORD, e.g. from .env) is
# written as given (blanks removed; blank = not given); otherwise an existing
# file is kept, and a missing one gets 32 random bytes in hex (NATS
# passwords: "p" + hex, as nats-server's config parser would read an
# all-digit value as a number).
set -euo pipefail
umask 077
write_secret() {  # DIR FILE GIVEN [PREFIX]
  local dir=$1 file=$2 given=${3//[[:space:]]/} prefix=${4:-} tmp
  if [[ -z $given && -s $dir/$file ]]; then return 0; fi
  [[ -n $given ]] || given=$prefix$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
  tmp=$(mktemp "$dir/.$file.XXXXXX")
  printf '%s\n' "$given" >"$tmp"
  mv -f "$tmp" "$dir/$file"
}
write_token() { write_secret "$1" token "$2"; }  # DIR GIVEN
write_token /run/folio/api "${FOLIO_API_TOKEN:-}"
write_token /run/folio/storage-write "${FOLIO_STORAGE_WRITE_TOKEN:-}"
write_token /run/folio/storage-read "${FOLIO_STORAGE_READ_TOKEN:-}"
for user in ingest edge search storage; do
  write_secret "/run/folio/nats-$user" password "" p
done
write_secret /run/folio/grafana password "${GRAFANA_ADMIN_PASSWORD:-}"
# Grafana runs as its own user (472) and mounts only this volume.
chmod 0755 /run/folio/grafana && chmod 0444 /run/folio/grafana/password
echo "folio-secrets: tokens ready in /run/folio/{api,storage-write,storage-read}/token," \
  "NATS passwords in /run/folio/nats-{ingest,edge,search,storage}/password, Grafana's in /run/folio/grafana/password"
