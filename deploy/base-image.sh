#!/usr/bin/env bash
# Builds a local stand-in for the official Node 24 image (node:24-bookworm-slim) where no image
# registry is reachable: a minimal Debian from Debian's mirror (debootstrap) plus the Node binary
# and npm from the npm registry, with the image's `node` user (uid 1000). Pass it to the Dockerfile
# with --build-arg NODE_IMAGE=<tag>. The image is the cache: an existing one is reused unless
# REBUILD=1. Needs root, podman, debootstrap; prints the tag on its last line.
set -euo pipefail
tag=${BASE_IMAGE:-localhost/switchboard-node-base:24-bookworm}
suite=${DEBIAN_SUITE:-bookworm}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
node_version=${NODE_VERSION:-24}

if [ "${REBUILD:-0}" != 1 ] && podman image exists "$tag"; then
  echo "base image $tag already built (REBUILD=1 to build it again)" >&2
  echo "$tag"
  exit 0
fi

work=$(mktemp -d /var/tmp/switchboard-base.XXXXXX)
trap 'rm -rf "$work"' EXIT
rootfs=$work/rootfs
echo "debootstrap $suite into $rootfs…" >&2
debootstrap --variant=minbase "$suite" "$rootfs" "$mirror" >&2

echo "Node $node_version and npm from the npm registry…" >&2
npm install --prefix "$work/node" --no-audit --no-fund --no-save "node@$node_version" >&2
install -m 0755 "$work/node/node_modules/node/bin/node" "$rootfs/usr/local/bin/node"
npm install --global --prefix "$rootfs/usr/local" --no-audit --no-fund npm@11 >&2

# The official image's unprivileged user.
echo 'node:x:1000:1000::/home/node:/bin/bash' >> "$rootfs/etc/passwd"
echo 'node:x:1000:' >> "$rootfs/etc/group"
echo 'node:*:20000:0:99999:7:::' >> "$rootfs/etc/shadow"
install -d -o 1000 -g 1000 "$rootfs/home/node"

# The CAs this machine trusts (where a TLS-intercepting proxy stands before the npm registry, its CA
# is among them), so `npm ci` in a build on this base reaches the registry as the host's npm does.
ca_env=()
if [ -s /etc/ssl/certs/ca-certificates.crt ]; then
  install -D -m 0644 /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
  ca_env=(--change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt')
fi

# What a container image does not need.
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/locale/*

# Checked in the root filesystem, so building the base needs no container start (the test checks that).
versions="Node $(chroot "$rootfs" /usr/local/bin/node --version), npm $(chroot "$rootfs" /usr/bin/env PATH=/usr/local/bin:/usr/bin:/bin npm --version)"

tar -C "$rootfs" --numeric-owner -c . | podman import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["node"]' "${ca_env[@]}" \
  - "$tag" >&2
echo "built $tag: $versions" >&2
echo "$tag"
