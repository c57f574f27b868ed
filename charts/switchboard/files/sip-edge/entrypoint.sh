#!/bin/sh
# The SIP edge's container command (templates/sip-edge.yaml; docs/operations.md "The SIP
# edge"): writes kamailio's dispatcher list from the addresses of call-control's ready replicas
# (the A records of EDGE_CORE_SERVICE, a headless Service), starts kamailio in the foreground,
# and every EDGE_RESOLVE_SECONDS writes the list again, reloading it (kamcmd dispatcher.reload)
# when the replicas changed. A TERM stops kamailio.
set -u
list="$EDGE_DISPATCHER_LIST"

replicas() {
  getent ahostsv4 "$EDGE_CORE_SERVICE" | awk '{ print $1 }' | sort -u |
    sed "s|.*|1 sip:&:$EDGE_CORE_PORT|"
}

replicas >"$list.next" 2>/dev/null || : >"$list.next"
mv "$list.next" "$list"

set -- -DD -E -m "${EDGE_SHM_MB:-64}" -M "${EDGE_PKG_MB:-8}" -Y "${EDGE_RUNTIME_DIR:-/tmp}" \
  -f "${EDGE_CONFIG:-/etc/switchboard-sip-edge/kamailio.cfg}"
if [ "${EDGE_TLS:-0}" = 1 ]; then
  set -- "$@" -A WITH_TLS
fi
kamailio "$@" &
pid=$!
trap 'kill -TERM "$pid" 2>/dev/null' TERM INT

while kill -0 "$pid" 2>/dev/null; do
  sleep "${EDGE_RESOLVE_SECONDS:-10}" &
  wait $!
  replicas >"$list.next" 2>/dev/null || continue
  if ! cmp -s "$list.next" "$list"; then
    mv "$list.next" "$list"
    kamcmd -s "$EDGE_CTL" dispatcher.reload >/dev/null ||
      echo "sip-edge: dispatcher.reload failed" >&2
  fi
done
wait "$pid"
