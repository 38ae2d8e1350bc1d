#!/bin/sh
# The image's base (deploy/image/build.sh): Debian 12 minbase made with debootstrap from the mirror
# apt already uses, kept as a tarball OUTSIDE the clone (a new machine pays it once, ~3 min,
# ~200 MB), then `podman import`ed as convviz-base:bookworm when podman does not have it.
#   deploy/image/base.sh [CACHE_DIR]      (default: $XDG_CACHE_HOME/convviz or ~/.cache/convviz)
set -eu
CACHE=${1:-${XDG_CACHE_HOME:-$HOME/.cache}/convviz}
TARBALL=$CACHE/bookworm-minbase.tar
BASE=localhost/convviz-base:bookworm

if [ ! -s "$TARBALL" ]; then
  # the first URIs of apt's own Debian source: the mirror this machine already trusts
  MIRROR=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
  [ -n "$MIRROR" ] || MIRROR=$(awk '$1 == "deb" { print $2; exit }' /etc/apt/sources.list)
  mkdir -p "$CACHE"
  ROOTFS=$(mktemp -d "$CACHE/rootfs.XXXXXX")
  trap 'rm -rf "$ROOTFS"' EXIT
  echo "debootstrap: a Debian 12 minbase from $MIRROR into $ROOTFS (once per machine, ~3 min)"
  debootstrap --variant=minbase bookworm "$ROOTFS" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
    || { tail -20 "$CACHE/debootstrap.log" >&2; exit 1; }
  rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/*
  tar -C "$ROOTFS" --numeric-owner -cf "$TARBALL.tmp" .
  mv "$TARBALL.tmp" "$TARBALL"
fi
if ! podman image exists "$BASE"; then
  podman import --quiet "$TARBALL" "$BASE" >/dev/null
  echo "podman import: $BASE from $TARBALL"
fi
