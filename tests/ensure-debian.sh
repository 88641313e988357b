#!/bin/sh
# `make test` runs this first, once per Debian package set the tests drive for real:
#   sh tests/ensure-debian.sh "WHAT NEEDS THEM" "COMMANDS" PACKAGE...
# e.g. chromium + chromedriver for the viewer's browser tests, redis-server for the shared-
# state tests (they start their own on a free port). Install the packages when a command is
# missing and we may (root, or password-less sudo); when we may not, say so loudly: those
# tests then skip, naming what is missing.
what=$1 commands=$2
shift 2
missing=
for c in $commands; do command -v "$c" >/dev/null 2>&1 || missing=1; done
[ -z "$missing" ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "test: NO $commands (no apt-get here): $what will be SKIPPED" >&2
  exit 0
fi
if [ "$(id -u)" = 0 ]; then SUDO=; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
  echo "test: NO $commands and not root: $what will be SKIPPED (sudo apt-get install $*)" >&2
  exit 0
fi
echo "test: installing $* (apt-get) for $what" >&2
$SUDO apt-get install -y -q "$@" >/dev/null 2>&1 \
  || { $SUDO apt-get update -q >/dev/null 2>&1 \
       && $SUDO apt-get install -y -q "$@" >/dev/null 2>&1; } \
  || echo "test: COULD NOT INSTALL $*: $what will be SKIPPED" >&2
exit 0
