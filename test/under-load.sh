#!/usr/bin/env bash
# `pnpm test:under-load`: CI's whole run (.ci/run: the main suite and the slow suite beside it) on a
# fresh clone of HEAD in a `mktemp -d` folder, while `stress-ng --cpu 2` takes both cores. A verdict
# that depends on the machine's speed fails here first. Prints CI's summary line and the duration;
# exits with CI's status. Long (about twice .ci/run): not part of CI itself.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v stress-ng >/dev/null; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y stress-ng
fi

clone="$(mktemp -d)"
hog=""
finish() {
  if [[ -n "${hog}" ]]; then kill "${hog}" 2>/dev/null || true; fi
  rm -rf "${clone}"
}
trap finish EXIT
# Committed work only: what CI would get. Uncommitted changes are not tested here.
git clone --quiet --no-hardlinks "$(pwd)" "${clone}/repo"
echo "== under load: $(git -C "${clone}/repo" log -1 --format='%h %s') in ${clone}/repo"

stress-ng --cpu 2 --quiet &
hog=$!

started=${SECONDS}
status=0
(cd "${clone}/repo" && CI=true bash .ci/run) 2>&1 | tee "${clone}/ci.log" || status=$?
elapsed=$((SECONDS - started))
summary="$(grep -E '^[0-9]+ passed, [0-9]+ failed' "${clone}/ci.log" | tail -1 || true)"
echo "== under load (stress-ng --cpu 2): ${summary:-no summary line}; exit ${status}; $((elapsed / 60)) min $((elapsed % 60)) s"
exit "${status}"
