#!/bin/bash
# folio-publish VAULT: waits (bounded) until ingest at FOLIO_SERVER is ready,
# then, if the site has no notes yet (or FOLIO_PUBLISH_FORCE=1), pushes VAULT
# with the API token from FOLIO_TOKEN_FILE. The token goes
# to the CLI in its environment (FOLIO_TOKEN), not on a command line.
set -euo pipefail
vault=${1:?usage: folio-publish VAULT}
server=${FOLIO_SERVER:-http://ingest:8080}
token_file=${FOLIO_TOKEN_FILE:-/run/folio/api/token}
wait_seconds=${FOLIO_PUBLISH_WAIT:-180}
deadline=$((SECONDS + wait_seconds))
until [[ -s $token_file ]] && curl -fsS -o /dev/null --max-time 2 "$server/readyz" 2>/dev/null; do
  if ((SECONDS >= deadline)); then
    echo "folio-publish: $server/readyz (or $token_file) not ready after ${wait_seconds}s" >&2
    exit 1
  fi
  sleep 1
done
FOLIO_TOKEN=$(head -n1 "$token_file")
export FOLIO_TOKEN
# A push makes the site match the vault: notes missing from it are deleted.
# So a routine `up` never pushes over a site that has notes already; to
# push anyway (your own vault over the site): FOLIO_PUBLISH_FORCE=1.
if [[ ${FOLIO_PUBLISH_FORCE:-0} != 1 ]]; then
  manifest=$(printf 'header = "Authorization: Bearer %s"\n' "$FOLIO_TOKEN" |  # not on a command line
             curl -fsS --max-time 10 -K - "$server/api/v1/manifest") \
    || { echo "folio-publish: cannot read $server/api/v1/manifest" >&2; exit 1; }
  if [[ $manifest != *'"notes":[]'* ]]; then  # the full manifest lists every note
    echo "folio-publish: the site has notes already; not pushing $vault over it (FOLIO_PUBLISH_FORCE=1 does)"
    exit 0
  fi
fi
exec folio push "$vault" --server "$server"
