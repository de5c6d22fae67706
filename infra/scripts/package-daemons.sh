#!/usr/bin/env bash
# Lays out each daemon as its image holds it: usage `infra/scripts/package-daemons.sh OUT_DIR`
# → OUT_DIR/relay, OUT_DIR/consumer, OUT_DIR/api and OUT_DIR/console, each the app's dist/ (with source maps), its production
# dependencies and the workspace packages it uses (with their dist/); no dev dependencies, no pnpm.
# The Dockerfile's build stage and infra/test/packaged-daemons.test.ts both run exactly this.
#
# Needs an installed workspace (`pnpm install`) and nothing else: it runs offline and reads the
# lockfile alone, never pnpm's metadata cache, so it works on a cold builder.
set -euo pipefail
out="${1:?usage: $0 OUT_DIR}"
cd "$(dirname "$0")/../.."

pnpm --filter @outbox/client --filter @outbox/shared --filter @outbox/relay --filter @outbox/consumer --filter @outbox/api --filter @outbox/console run build

for app in relay consumer api console; do
  # Injecting the workspace packages for the deploy only: the workspace itself keeps its symlinks
  # (edits show up without a reinstall), while the deployed copy gets real directories resolved
  # from the lockfile. `--legacy` would avoid injection but needs the metadata cache (NO_OFFLINE_META).
  pnpm --config.inject-workspace-packages=true deploy --prod --offline \
    --filter "@outbox/${app}" "${out}/${app}"
  rm -rf "${out}/${app}/test" "${out}/${app}/bench" "${out}/${app}"/tsconfig*.json
done
