#!/usr/bin/env bash
# make check: types (strict, no unused locals or parameters), lint and formatting (biome.json), the import
# boundaries between layers, and generated files that match their generators. Fast; runs in .ci/run before the
# tests.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "check: types" >&2
npx tsc -p tsconfig.json --noEmit --noUnusedLocals --noUnusedParameters

echo "check: lint and formatting" >&2
# lint rules and the formatting make format writes (biome.json)
node_modules/.bin/biome ci --error-on-warnings --colors=off

echo "check: layers" >&2
node scripts/check-layers.mjs

echo "check: documentation links" >&2
node scripts/check-doc-links.mjs

echo "check: generated files" >&2
# The generators whose inputs are the reference data in ../shared always run; those that
# also read Go sources run when KAPI_GO_SOURCES names them (scripts/README.md).
generated=(server/apis/generated storage/etcd/generated server/protobuf/generated)
if [ -d ../shared/k8s ] && [ -d ../shared/etcd ]; then
  node scripts/generate-schemas.mjs
  node scripts/generate-etcd-proto.mjs
  if [ -n "${KAPI_GO_SOURCES:-}" ]; then
    node scripts/generate-k8s-proto.mjs
    node scripts/generate-go-types.mjs
    node scripts/generate-go-fields.mjs
  else
    echo "check: KAPI_GO_SOURCES is unset: the Go-reading generators were not re-run" >&2
  fi
  if ! git diff --exit-code --stat -- "${generated[@]}"; then
    echo "check: generated files differ from what the generators write (run npm run generate and commit)" >&2
    exit 1
  fi
else
  echo "check: ../shared is missing: generated files not compared" >&2
fi
echo "check: all passed" >&2
