#!/bin/sh
# The base the image tier builds on (tests/image): Debian bookworm with Python 3 and its
# venv module, made from Debian's archive with debootstrap and imported as an image, since
# this machine cannot pull one from a registry. `sh tests/image/debian-base.sh NAME DIR`
# imports it as NAME; DIR keeps the root filesystem between runs.
set -eu
name=$1 dir=$2
if [ ! -x "$dir/rootfs/usr/bin/python3" ]; then
  rm -rf "$dir/rootfs"
  mkdir -p "$dir"
  debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates \
    bookworm "$dir/rootfs" http://deb.debian.org/debian >"$dir/debootstrap.log" 2>&1 \
    || { tail -20 "$dir/debootstrap.log" >&2; exit 1; }
  # What a slim image leaves out too: the package cache, lists, documentation.
  rm -rf "$dir/rootfs/var/cache/apt/archives/"*.deb "$dir/rootfs/var/lib/apt/lists/"* \
    "$dir/rootfs/usr/share/doc" "$dir/rootfs/usr/share/man" "$dir/rootfs/usr/share/locale"
fi
tar -C "$dir/rootfs" -c . | podman import --quiet - "$name" >/dev/null
