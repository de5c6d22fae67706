#!/usr/bin/env bash
# `pnpm test:stress [RUNS] [VITEST ARGS…]`: the whole vitest suite (or the files the extra vitest
# arguments select) RUNS times (default 3) while two extra processes keep both cores busy, to find tests that fail under CPU contention. Prints one summary line per
# run; exits 1 when any run had a failure. Each run's JSON results stay in reports/stress-N.json.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
shift || true

burners=()
stop_burners() { ((${#burners[@]})) && kill "${burners[@]}" 2>/dev/null || true; }
trap stop_burners EXIT
for _ in 1 2; do
  node -e 'for (;;) {}' &
  burners+=("$!")
done

failed=0
for ((run = 1; run <= runs; run++)); do
  results="reports/stress-${run}.json"
  rm -f "${results}"
  echo "== stress run ${run}/${runs} (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  pnpm exec vitest run --reporter=dot --reporter=json --outputFile.json="${results}" "$@" || true
  echo -n "stress run ${run}: "
  node test/summarize-results.mjs "${results}" || failed=1
done
exit "${failed}"
