#!/bin/sh
# `make image`: the convviz image, tagged localhost/convviz:latest (and saved with
#   deploy/image/build.sh --save FILE, the file an operator copies to a host: `podman load -i`).
# Installs Debian's podman, runc and debootstrap when missing; the base comes from
# deploy/image/base.sh (cached outside the clone); the build runs with --isolation=chroot (no
# nested containers needed) and podman's settings from deploy/image/containers.conf.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
IMAGE=${IMAGE:-localhost/convviz:latest}
export CONTAINERS_CONF="$HERE/containers.conf"

missing=""
for tool in podman:podman runc:runc debootstrap:debootstrap; do
  command -v "${tool%%:*}" >/dev/null || [ -x "/usr/sbin/${tool%%:*}" ] || missing="$missing ${tool#*:}"
done
if [ -n "$missing" ]; then
  SUDO=$(command -v sudo >/dev/null && [ "$(id -u)" != 0 ] && echo sudo || true)
  echo "installing Debian's$missing"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
PATH=$PATH:/usr/sbin:/sbin
sh "$HERE/base.sh"

# The build context: the app's files and the host's CAs (for the build stage), nothing else
CONTEXT=$(mktemp -d)
trap 'rm -rf "$CONTEXT"' EXIT
mkdir -p "$CONTEXT/app/deploy"
(cd "$ROOT" && git ls-files -z app.py pages convviz .streamlit pyproject.toml \
  | xargs -0 cp --parents -t "$CONTEXT/app")
cp "$ROOT/deploy/serve.sh" "$CONTEXT/app/deploy/"
cp "$ROOT/requirements.txt" "$CONTEXT/"
cp "${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}" "$CONTEXT/host-ca.crt"
podman build --isolation=chroot --layers --tag "$IMAGE" --file "$HERE/Containerfile" "$CONTEXT"
echo "built $IMAGE ($(podman image inspect --format '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB", $1/1e6}'))"
if [ "${1:-}" = "--save" ] && [ -n "${2:-}" ]; then
  podman save --quiet --output "$2" "$IMAGE"
  echo "saved $2: copy it to a host, then \`podman load -i $(basename "$2")\`"
fi
