#!/usr/bin/env bash
# Installs what the integration tests start or drive, from Debian: Virtuoso (SPARQL endpoint
# tests), the PostgreSQL server (session-store tests start throwaway clusters of their own) and
# Chromium (the web chat's browser tests, driven by Playwright at /usr/bin/chromium).
# Needs root (apt-get); without it the tests that need a missing one skip and say why.
set -euo pipefail
missing=()
if ! command -v virtuoso-t >/dev/null 2>&1 || ! command -v isql-vt >/dev/null 2>&1; then
  missing+=(virtuoso-opensource-7-bin)
fi
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  missing+=(postgresql)
fi
if [ ! -x /usr/bin/chromium ]; then
  missing+=(chromium chromium-driver)
fi
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != "0" ]; then
  echo "system-deps: not root; skipping the install of ${missing[*]} (the tests that need them will be skipped)" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${missing[@]}" >/dev/null
