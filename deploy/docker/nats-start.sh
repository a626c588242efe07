#!/bin/bash
# folio-nats: nats-server with /etc/nats/nats.conf (users from
# /etc/nats/permissions.conf), each user's password read from
# /run/folio/nats-<user>/password (made by folio-secrets) into the variable
# the config names (FOLIO_NATS_<USER>_PASSWORD). Arguments go to nats-server.
set -euo pipefail
for user in ingest edge search storage; do
  file=/run/folio/nats-$user/password
  [[ -s $file ]] || { echo "folio-nats: $file is missing or empty (run the secrets service first)" >&2; exit 1; }
  var=FOLIO_NATS_${user^^}_PASSWORD
  export "$var=$(head -n1 "$file")"
done
exec nats-server -c /etc/nats/nats.conf "$@"
