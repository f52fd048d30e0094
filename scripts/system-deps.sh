#!/usr/bin/env bash
# Installs the system services the integration tests start: Virtuoso from Debian.
# Needs root (apt-get); without it the Virtuoso tests skip and say why.
set -euo pipefail
if command -v virtuoso-t >/dev/null 2>&1 && command -v isql-vt >/dev/null 2>&1; then
  exit 0
fi
if [ "$(id -u)" != "0" ]; then
  echo "system-deps: not root; skipping Virtuoso install (its integration tests will be skipped)" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq virtuoso-opensource-7-bin >/dev/null
