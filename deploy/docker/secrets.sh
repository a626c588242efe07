#!/bin/bash
# folio-secrets: makes a compose deployment's three tokens, once, each in
# its own directory (a volume of its own, so every service mounts only the
# tokens it needs):
#   /run/folio/api/token            ingest's API token (authors, publish)
#   /run/folio/storage-write/token  storage's write token (storage, ingest)
#   /run/folio/storage-read/token   storage's read token (storage, edges)
# A token given in the environment (FOLIO_API_TOKEN, FOLIO_STORAGE_WRITE_TOKEN,
# FOLIO_STORAGE_READ_TOKEN, e.g. from .env) is written as given (blanks
# removed; blank = not given); otherwise an existing file is kept, and a
# missing one gets 32 random bytes in hex.
set -euo pipefail
umask 077
write_token() {  # DIR GIVEN
  local dir=$1 given=${2//[[:space:]]/} tmp
  if [[ -z $given && -s $dir/token ]]; then return 0; fi
  [[ -n $given ]] || given=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
  tmp=$(mktemp "$dir/.token.XXXXXX")
  printf '%s\n' "$given" >"$tmp"
  mv -f "$tmp" "$dir/token"
}
write_token /run/folio/api "${FOLIO_API_TOKEN:-}"
write_token /run/folio/storage-write "${FOLIO_STORAGE_WRITE_TOKEN:-}"
write_token /run/folio/storage-read "${FOLIO_STORAGE_READ_TOKEN:-}"
echo "folio-secrets: tokens ready in /run/folio/{api,storage-write,storage-read}/token"
