#!/usr/bin/env bash
# Installs the system services the integration tests start: Virtuoso and the PostgreSQL server
# from Debian. Needs root (apt-get); without it those tests are skipped and say why.
set -euo pipefail
have_virtuoso() { command -v virtuoso-t >/dev/null 2>&1 && command -v isql-vt >/dev/null 2>&1; }
have_postgres() { ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; }
packages=()
have_virtuoso || packages+=(virtuoso-opensource-7-bin)
have_postgres || packages+=(postgresql)
if [ ${#packages[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != "0" ]; then
  echo "system-deps: not root; skipping ${packages[*]} (their integration tests will be skipped)" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# (the PostgreSQL tests start throwaway clusters of their own; Debian's default one is not used)
apt-get install -y -qq "${packages[@]}" >/dev/null
