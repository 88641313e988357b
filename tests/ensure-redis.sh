#!/bin/sh
# `make test` runs this first: the shared-state tests start Debian's redis-server on a free
# port of their own. Install it when missing and we may (root, or password-less sudo); when
# we may not, say so loudly: those tests then skip, naming what is missing.
command -v redis-server >/dev/null 2>&1 && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "test: NO redis-server (no apt-get here): the shared-state tests will be SKIPPED" >&2
  exit 0
fi
if [ "$(id -u)" = 0 ]; then SUDO=; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
  echo "test: NO redis-server and not root: the shared-state tests will be SKIPPED" \
    "(sudo apt-get install redis-server)" >&2
  exit 0
fi
echo "test: installing redis-server (apt-get) for the shared-state tests" >&2
$SUDO apt-get install -y -q redis-server >/dev/null 2>&1 \
  || { $SUDO apt-get update -q >/dev/null 2>&1 \
       && $SUDO apt-get install -y -q redis-server >/dev/null 2>&1; } \
  || echo "test: COULD NOT INSTALL redis-server: the shared-state tests will be SKIPPED" >&2
# The package starts a system-wide instance on 6379; the tests start their own.
exit 0
