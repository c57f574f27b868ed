#!/usr/bin/env bash
# Builds the SIP edge's image (images/sip-edge/Containerfile: Debian's kamailio and
# kamailio-tls-modules with charts/switchboard/files/sip-edge/) with Podman where no image
# registry is reachable: on the Debian bookworm base that scripts/build-image.sh makes
# (BASES_ONLY=1; debootstrap, reused while it exists). Prints the image's size on the last line
# of standard output (bytes).
#
#   scripts/build-sip-edge-image.sh                          # switchboard-sip-edge:<version>
#   IMAGE=switchboard-sip-edge:dev scripts/build-sip-edge-image.sh
#   DEBIAN_IMAGE=debian:bookworm-slim scripts/build-sip-edge-image.sh   # a registry's base
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

version="$(node -p 'require("./package.json").version' 2>/dev/null || echo latest)"
IMAGE="${IMAGE:-switchboard-sip-edge:$version}"
read -r -a podman_args <<<"${PODMAN_ARGS:---runtime runc}"

base="${DEBIAN_IMAGE:-$(BASES_ONLY=1 scripts/build-image.sh | tail -1)}"
echo "== podman build $IMAGE on $base" >&2
podman "${podman_args[@]}" build --network host -f images/sip-edge/Containerfile \
  --build-arg "DEBIAN_IMAGE=$base" -t "$IMAGE" charts/switchboard/files/sip-edge >&2
size="$(podman "${podman_args[@]}" image inspect --format '{{.Size}}' "$IMAGE")"
echo "== $IMAGE: $((size / 1000000)) MB ($size bytes)" >&2
echo "$size"
