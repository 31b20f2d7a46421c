#!/usr/bin/env bash
# make test-docker: deploy/docker-compose.yml end to end on a Docker engine
# (e2e/compose.docker-test.ts). Prepares the engine first (scripts/docker-images.sh), runs the
# test under a compose project of its own, and whatever happens removes that project
# (`down -v`) and stops the dockerd it started, by PID. A dockerd that was already running is
# left running.
set -uo pipefail
cd "$(dirname "$0")/.."

engine_was_up=0
if docker info >/dev/null 2>&1; then engine_was_up=1; fi
export KAPI_COMPOSE_PROJECT=${KAPI_COMPOSE_PROJECT:-kapi-test-$$}

cleanup() {
  # the test removes its project itself; this is for a run cut short (Ctrl-C, a crash)
  if docker info >/dev/null 2>&1; then
    docker-compose -p "$KAPI_COMPOSE_PROJECT" -f deploy/docker-compose.yml down -v --remove-orphans -t 10 >/dev/null 2>&1 || true
  fi
  if [ "$engine_was_up" = 0 ]; then scripts/docker-images.sh stop-engine; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

scripts/docker-images.sh up || exit 1
start=$(date +%s)
node --test --test-reporter=spec --test-timeout=1800000 dist/e2e/compose.docker-test.js
rc=$?
elapsed=$(( $(date +%s) - start ))
echo "test-docker: $([ "$rc" = 0 ] && echo passed || echo "FAILED (exit $rc)") in $((elapsed / 60))m$((elapsed % 60))s (project $KAPI_COMPOSE_PROJECT)"
exit "$rc"
