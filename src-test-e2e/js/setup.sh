#!/usr/bin/env bash
# Installs what the e2e client tests need on a fresh machine, and nothing when it is already there:
#   - the npm packages of package-lock.json (openai SDK, playwright-core) into $1/node_modules (npm ci);
#   - Debian's chromium when /usr/bin/chromium is missing and "chromium" is an argument (needs root and apt).
# Usage: setup.sh TARGET_DIR [chromium]
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TARGET="$1"
shift || true

mkdir -p "$TARGET"
if ! cmp -s "$HERE/package-lock.json" "$TARGET/package-lock.json" || [ ! -d "$TARGET/node_modules/openai" ]; then
  cp "$HERE/package.json" "$HERE/package-lock.json" "$TARGET/"
  (cd "$TARGET" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
fi
for f in "$HERE"/*.mjs; do
  if [ -e "$f" ]; then cp "$f" "$TARGET/"; fi
done

if [ "${1:-}" = "chromium" ] && [ ! -x /usr/bin/chromium ]; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then SUDO="sudo -n"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
