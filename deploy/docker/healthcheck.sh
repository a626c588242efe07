#!/bin/sh
# HEALTHCHECK of the folio images: GET /livez on the service's own port
# (FOLIO_ADMIN_LISTEN when set, else FOLIO_LISTEN), 200 = healthy.
addr=${FOLIO_ADMIN_LISTEN:-${FOLIO_LISTEN:-}}
port=${addr##*:}
[ -n "$port" ] || { echo "folio-healthcheck: FOLIO_LISTEN is not set" >&2; exit 1; }
exec curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$port/livez"
