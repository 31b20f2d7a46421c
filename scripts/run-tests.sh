#!/usr/bin/env bash
# Runs every built test (dist/**/*.test.js) with node's test runner, two files at a time
# (the machine has two cores), and ends with a short summary of what failed.
# Usage: scripts/run-tests.sh [path-prefix ...]   e.g. scripts/run-tests.sh dist/server/config
set -uo pipefail
cd "$(dirname "$0")/.."

roots=("$@")
if [ "${#roots[@]}" -eq 0 ]; then roots=(dist); fi
mapfile -t found < <(find "${roots[@]}" -name '*.test.js' -not -path '*/node_modules/*' | sort)
# a compiled test whose source was deleted must not keep running from a stale dist/
files=()
for f in "${found[@]}"; do
  src="${f#dist/}"
  if [ -f "${src%.js}.ts" ]; then files+=("$f"); fi
done
if [ "${#files[@]}" -eq 0 ]; then
  echo "run-tests: no test files under ${roots[*]} (did the build run?)" >&2
  exit 1
fi

mkdir -p .tmp
log=.tmp/test-output.tap
start=$(date +%s)
echo "run-tests: ${#files[@]} test files, 2 at a time" >&2
# TAP on stdout (what CI reads); a copy kept for the summary below.
# A test file that hangs is cut off by --test-timeout rather than stalling the run.
node --test --test-concurrency=2 --test-timeout=600000 --test-reporter=tap "${files[@]}" | tee "$log"
rc=${PIPESTATUS[0]}
elapsed=$(( $(date +%s) - start ))

echo
echo "=== summary ($((elapsed / 60))m$((elapsed % 60))s) ==="
grep -aE '^# (tests|pass|fail|cancelled|skipped|todo) ' "$log" | tail -n 6
# A skipped test proves nothing: a missing client or tool must fail the run, not hide it
# (KAPI_ALLOW_SKIPS=1 lets a developer run without them on purpose).
skipped=$(grep -aE '^# skipped ' "$log" | tail -n 1 | awk '{print $3}')
if [ "${skipped:-0}" -gt 0 ] && [ "${KAPI_ALLOW_SKIPS:-0}" != 1 ]; then
  echo "--- skipped (file:line  test: reason) ---"
  grep -aE '^ *ok [0-9]+ - .* # SKIP' "$log" | sed -E 's/^ *ok [0-9]+ - /  /' | sort -u | head -n 50
  echo "run-tests: ${skipped} tests were skipped (a missing client or tool?); KAPI_ALLOW_SKIPS=1 accepts that"
  if [ "$rc" -eq 0 ]; then rc=1; fi
fi
if [ "$rc" -ne 0 ]; then
  echo "--- failed (file:line  test) ---"
  # one line per failed test, with where it is; tests cancelled because their parent failed
  # are left out (the parent is listed)
  awk '
    /^ *not ok [0-9]+ - / { name = $0; sub(/^ *not ok [0-9]+ - /, "", name); open = 1; loc = ""; cancelled = 0; next }
    open && /^ *location:/ { loc = $2; gsub(/\047/, "", loc); sub(/.*\/dist\//, "dist/", loc) }
    open && /failureType: .cancelledByParent/ { cancelled = 1 }
    open && /^ *\.\.\.$/ { if (!cancelled) printf "  %s  %s\n", loc, name; open = 0 }
  ' "$log" | sort -u | head -n 200
  echo "run-tests: FAILED (exit $rc); full output in $log"
else
  echo "run-tests: all passed"
fi
exit "$rc"
