#!/usr/bin/env bash
# Provisions what the deployment tests need on a fresh Debian bookworm machine of this kind, as root:
# Debian's docker.io (the engine; no systemd here, so dockerd is started in the background with its log in
# /var/log/dockerd.log), Compose v2 (Debian trixie's docker-compose package, the `docker compose` plugin; its
# only dependency is libc6), debootstrap (for the stand-in images), nginx and openssl. Idempotent. A dockerd it
# starts has its pid written to $DOCKERD_PID_FILE (when set), so that the caller can stop what it started.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive
packages=()
command -v dockerd >/dev/null || packages+=(docker.io)
command -v debootstrap >/dev/null || packages+=(debootstrap)
[ -x /usr/sbin/nginx ] || packages+=(nginx)
command -v openssl >/dev/null || packages+=(openssl)
if [ "${#packages[@]}" -gt 0 ]; then
  # Installing must not start nginx on port 80 or a second dockerd through the init scripts.
  policy_added=false
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod 0755 /usr/sbin/policy-rc.d
    policy_added=true
  fi
  apt-get update -qq
  apt-get install -y -qq "${packages[@]}" > /dev/null
  if [ "$policy_added" = true ]; then rm -f /usr/sbin/policy-rc.d; fi
fi

if ! docker compose version > /dev/null 2>&1; then
  # Bookworm's docker-compose is 1.29 (Python); trixie's is Compose v2 as a CLI plugin. Its package is
  # fetched through a private apt state, so the machine's sources stay bookworm's.
  apt_dir=$(mktemp -d)
  trap 'rm -rf "$apt_dir"' EXIT
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/parts"
  echo 'deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main' > "$apt_dir/sources.list"
  trixie=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o "Dir::Etc::SourceParts=$apt_dir/parts"
    -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o APT::Sandbox::User=root)
  apt-get "${trixie[@]}" update -qq
  (cd "$apt_dir" && apt-get "${trixie[@]}" download docker-compose)
  apt-get install -y -qq "$apt_dir"/docker-compose_*.deb > /dev/null
fi

if ! docker info > /dev/null 2>&1; then
  setsid dockerd > /var/log/dockerd.log 2>&1 < /dev/null &
  if [ -n "${DOCKERD_PID_FILE:-}" ]; then echo "$!" > "$DOCKERD_PID_FILE"; fi
  for _ in $(seq 1 60); do
    docker info > /dev/null 2>&1 && break
    sleep 1
  done
  docker info > /dev/null 2>&1 || { tail -n 40 /var/log/dockerd.log >&2; exit 1; }
fi

echo "docker engine $(docker info --format '{{.ServerVersion}}' ) ($(docker info --format '{{.Driver}}')), $(docker compose version), $(/usr/sbin/nginx -v 2>&1), $(openssl version)"
