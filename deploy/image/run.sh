#!/bin/sh
# `make image-run`: the image on this host, in the foreground (Ctrl-C stops it):
#   deploy/image/run.sh [ADDRESS] [PORT]       (default 127.0.0.1 8501)
# It shares the host's network (no firewall rules made; on a host of its own `podman run -p
# 8501:8501 localhost/convviz` publishes the port instead). The cookie secret is mounted from a
# file outside the image: $CONVVIZ_COOKIE_SECRET_FILE, or ~/.config/convviz/cookie-secret (made
# once, 0600); copy that file to every host that serves the same course.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
export CONTAINERS_CONF="$HERE/containers.conf"
IMAGE=${IMAGE:-localhost/convviz:latest}
SECRET=${CONVVIZ_COOKIE_SECRET_FILE:-${XDG_CONFIG_HOME:-$HOME/.config}/convviz/cookie-secret}
if [ ! -s "$SECRET" ]; then
  mkdir -p "$(dirname "$SECRET")"
  (umask 077 && od -An -tx1 -N32 /dev/urandom | tr -d ' \n' >"$SECRET")
fi
podman image exists "$IMAGE" || { echo "no $IMAGE: \`make image\` first" >&2; exit 1; }
# the container's user (10001) reads its own copy; the copy goes when the container does
MOUNTED=$(mktemp -d)
trap 'rm -rf "$MOUNTED"' EXIT INT TERM
cp "$SECRET" "$MOUNTED/cookie-secret"
chmod 0400 "$MOUNTED/cookie-secret"
if [ "$(id -u)" = 0 ]; then chown 10001:10001 "$MOUNTED/cookie-secret"
else podman unshare chown 10001:10001 "$MOUNTED/cookie-secret"; fi
echo "convviz on http://${1:-127.0.0.1}:${2:-8501}/ (Ctrl-C stops it)"
podman run --rm --network=host --name "convviz-${2:-8501}" \
  --volume "$MOUNTED/cookie-secret:/run/secrets/convviz-cookie:ro" \
  --env CONVVIZ_COOKIE_SECRET_FILE=/run/secrets/convviz-cookie \
  "$IMAGE" "${1:-127.0.0.1}" "${2:-8501}"
