#!/usr/bin/env bash
# Installs the tools that validate the deployment files without running them, and nothing when they are
# already there: Debian's docker-compose (v1, checks compose.yaml with `config -q`, no Docker engine needed)
# and systemd (for `systemd-analyze verify` on the units). Needs root or password-less sudo, and apt.
# Usage: install-validators.sh
set -euo pipefail

missing=()
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
command -v systemd-analyze >/dev/null 2>&1 || missing+=(systemd)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo -n"; fi
export DEBIAN_FRONTEND=noninteractive
echo "install-validators: installing ${missing[*]} with apt-get" >&2
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
for tool in docker-compose systemd-analyze; do
  command -v "$tool" >/dev/null 2>&1 || { echo "install-validators: $tool still missing after apt-get" >&2; exit 1; }
done
