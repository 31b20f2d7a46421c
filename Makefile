# kapi: `make run` starts one replica with embedded etcd; `make test` runs every test.
SHELL := /bin/bash
DATA_DIR ?= ./data
PORT ?= 6443
BIND ?= 127.0.0.1
# extra flags for bin/kapi, e.g. make run KAPI_ARGS='--advertise-address 192.0.2.10 -v 2'
KAPI_ARGS ?=
# the local replicated cluster (make cluster): its directory, and how many of each
CLUSTER_DIR ?= ./cluster
REPLICAS ?= 3
ETCD_MEMBERS ?= 3

.PHONY: all deps docker-deps build run test test-unit check format test-docker docker-images docker-engine-stop bench clean help cluster cluster-down cluster-status

all: build

help:
	@echo "make run    install what is missing, build, start one kapi replica with embedded etcd"
	@echo "make test   install what is missing, build, run every test"
	@echo "make test-unit  build, run the unit tests only (those that start no etcd, kapi or other process; seconds)"
	@echo "make check  types, lint, formatting, import boundaries between layers, generated files current"
	@echo "make format  rewrite the sources in the formatting make check wants"
	@echo "make cluster        start 3 etcd members, 3 kapi replicas and haproxy on 127.0.0.1 in CLUSTER_DIR (./cluster)"
	@echo "make cluster-down   stop them (by recorded PID); make cluster-status lists them"
	@echo "make test-docker    deploy/docker-compose.yml end to end on a Docker engine (faults under load, down/up, down -v)"
	@echo "make docker-images  start dockerd if none runs; build stand-ins for base images that cannot be pulled"
	@echo "make docker-engine-stop  stop the dockerd that make docker-images started (by its recorded PID)"
	@echo "make bench  run the benchmarks (kapi beside raw etcd)"
	@echo "make build  compile TypeScript to dist/"
	@echo "make clean  remove dist/, data/ and test leftovers"

deps:
	@scripts/install-deps.sh

# docker.io, docker-compose and debootstrap: needed by the targets below only
docker-deps:
	@scripts/install-deps.sh --docker

build: deps
	@npm run --silent build

run: build
	@echo "kapi: starting on https://$(BIND):$(PORT) with data in $(DATA_DIR) (Ctrl-C stops it and its etcd)"
	@echo "kapi: once it is ready:  kubectl --kubeconfig $(DATA_DIR)/admin.kubeconfig get ns"
	@exec bin/kapi --data-dir $(DATA_DIR) --bind-address $(BIND) --secure-port $(PORT) $(KAPI_ARGS)

# returns once the cluster serves; its processes keep running (detached, PIDs in CLUSTER_DIR/pids)
cluster: build
	@node dist/deploy/cluster-cli.js up --dir $(CLUSTER_DIR) --replicas $(REPLICAS) --etcd-members $(ETCD_MEMBERS) $(if $(strip $(KAPI_ARGS)),-- $(KAPI_ARGS))

cluster-down:
	@if [ -f dist/deploy/cluster-cli.js ]; then node dist/deploy/cluster-cli.js down --dir $(CLUSTER_DIR); else echo "make cluster-down: dist/ is missing; run make build first" >&2; exit 1; fi

cluster-status:
	@node dist/deploy/cluster-cli.js status --dir $(CLUSTER_DIR)

test: build
	@scripts/run-tests.sh

# the tests that start no process (scripts/unit-tests.mjs tells them by what they import)
test-unit: build
	@scripts/run-tests.sh $$(node scripts/unit-tests.mjs)

check: deps
	@scripts/check.sh

# rewrites the sources as make check wants them formatted (biome.json)
format: deps
	@node_modules/.bin/biome format --write

# the engine, and the base images deploy/ names (pulled, or built locally when no registry answers)
docker-images: docker-deps
	@scripts/docker-images.sh up

docker-engine-stop:
	@scripts/docker-images.sh stop-engine

# runs docker-images itself; stops the dockerd it started, removes the compose project it made
test-docker: build docker-deps
	@scripts/test-docker.sh

# extra options for the benchmark, e.g. make bench BENCH_ARGS='--only create,get --quick'
BENCH_ARGS ?=
bench: build
	@node dist/bench/run.js $(BENCH_ARGS)

clean:
	@if [ -f dist/deploy/cluster-cli.js ] && [ -f $(CLUSTER_DIR)/cluster.json ]; then node dist/deploy/cluster-cli.js down --dir $(CLUSTER_DIR); fi
	rm -rf dist data .tmp cluster
