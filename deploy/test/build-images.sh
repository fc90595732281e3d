#!/usr/bin/env bash
# Builds the gleaner image and the stand-ins for node:24-slim, postgres, redis and caddy with
# podman, from Debian's mirror and the npm registry only (no container registry is reached).
# Run as root from the repository, after `npm ci` (Node 24 comes from node_modules/node).
# Prints the podman settings to export: CONTAINERS_CONF, and the images for compose.scaled.yaml.
set -euo pipefail
cd "$(dirname "$0")/../.."
work="${CONTAINER_WORK_DIR:-/tmp/gleaner-container-build}"
mkdir -p "$work"

# This machine's container runtime settings: runc (crun 1.8 refuses hybrid cgroups) and no
# default ulimits (raising them is not permitted inside this sandbox).
conf="$work/containers.conf"
printf '[containers]\ndefault_ulimits = []\n\n[engine]\nruntime = "runc"\n' >"$conf"
export CONTAINERS_CONF="$conf"

need=()
for tool in podman runc mmdebstrap podman-compose; do command -v "$tool" >/dev/null || need+=("$tool"); done
if [ "${#need[@]}" -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

if ! podman image exists localhost/debian-bookworm-minbase; then
  rm -f "$work/rootfs.tar"
  mmdebstrap --quiet --variant=minbase --include=ca-certificates bookworm "$work/rootfs.tar" http://deb.debian.org/debian
  podman import --quiet "$work/rootfs.tar" localhost/debian-bookworm-minbase >/dev/null
  rm -f "$work/rootfs.tar"
fi

# node:24-slim's stand-in: Node from the `node` package that npm ci installed, npm 11 from the registry.
ctx="$work/node-base"
rm -rf "$ctx" && mkdir -p "$ctx"
cp deploy/test/node-base.Containerfile "$ctx/Containerfile"
cp -L node_modules/node/bin/node "$ctx/node"
(cd "$ctx" && npm pack --silent npm@11 >/dev/null && mv npm-*.tgz npm.tgz)
cp /etc/ssl/certs/ca-certificates.crt "$ctx/ca-certificates.crt"
podman build --quiet -t localhost/node-base:24 "$ctx" >/dev/null

for image in postgres redis caddy; do
  podman build --quiet -t "localhost/gleaner-test-$image" -f "deploy/test/$image.Containerfile" deploy/test >/dev/null
done
podman build --quiet --format docker --build-arg NODE_IMAGE=localhost/node-base:24 -t localhost/gleaner:latest . >/dev/null
echo "built: localhost/gleaner:latest and the stand-ins (node-base, postgres, redis, caddy)"
