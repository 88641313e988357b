#!/bin/sh
# `make test` runs this first: the viewer's browser tests drive Debian's chromium through
# its chromedriver. Install both when they are missing and we may (root, or password-less
# sudo). When we may not, say so loudly: those tests then skip, naming what is missing.
command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1 && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "test: NO BROWSER (no apt-get here): the viewer's browser tests will be SKIPPED" >&2
  exit 0
fi
if [ "$(id -u)" = 0 ]; then SUDO=; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; else
  echo "test: NO BROWSER and not root: the viewer's browser tests will be SKIPPED" \
    "(sudo apt-get install chromium chromium-driver)" >&2
  exit 0
fi
echo "test: installing chromium and chromium-driver (apt-get) for the viewer's browser tests" >&2
$SUDO apt-get install -y -q chromium chromium-driver >/dev/null 2>&1 \
  || { $SUDO apt-get update -q >/dev/null 2>&1 \
       && $SUDO apt-get install -y -q chromium chromium-driver >/dev/null 2>&1; } \
  || echo "test: COULD NOT INSTALL chromium: the viewer's browser tests will be SKIPPED" >&2
exit 0
