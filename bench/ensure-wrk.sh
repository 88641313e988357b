#!/bin/sh
# `make bench` runs this first: install wrk from the distribution's packages when it is
# missing and we may (root, or password-less sudo). Failing is fine: the bench then
# falls back to its bundled asyncio load client and says so in the table.
command -v wrk >/dev/null 2>&1 && exit 0
command -v apt-get >/dev/null 2>&1 || exit 0
if [ "$(id -u)" = 0 ]; then SUDO=; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; else exit 0; fi
echo "bench: installing wrk (apt-get install wrk)" >&2
$SUDO apt-get install -y -q wrk >/dev/null 2>&1 \
  || { $SUDO apt-get update -q >/dev/null 2>&1 && $SUDO apt-get install -y -q wrk >/dev/null 2>&1; } \
  || echo "bench: could not install wrk; using the bundled asyncio client" >&2
exit 0
