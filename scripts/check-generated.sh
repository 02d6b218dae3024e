#!/usr/bin/env bash
# Fails when generated/ differs from what `npm run generate` makes of spec/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
npm run --silent generate >/dev/null
if ! git diff --quiet -- generated/ || [[ -n "$(git status --porcelain --untracked-files=all -- generated/)" ]]; then
  echo "[check-generated] generated/ is out of date with spec/:" >&2
  git status --porcelain --untracked-files=all -- generated/ >&2
  echo "[check-generated] run 'npm run generate' (or 'task generate') and commit the result." >&2
  exit 1
fi
echo "[check-generated] generated/ matches spec/"
