#!/bin/sh
# One Streamlit process of convviz, as the hall's supervisord and the container image start it:
#   deploy/serve.sh ADDRESS PORT
# Every process of a course must sign its cookies with one secret (a browser that moves to
# another process or host keeps its session cookie valid): it is read at each start from the
# file $CONVVIZ_COOKIE_SECRET_FILE names (the hall's run directory, a mounted Secret) or taken
# from STREAMLIT_SERVER_COOKIE_SECRET; with neither, Streamlit draws its own (one process alone).
# $PYTHON is the interpreter with the app installed (default: python3 on the PATH).
set -eu
[ $# -eq 2 ] || { echo "usage: $0 ADDRESS PORT" >&2; exit 2; }
if [ -n "${CONVVIZ_COOKIE_SECRET_FILE:-}" ]; then
  STREAMLIT_SERVER_COOKIE_SECRET=$(cat "$CONVVIZ_COOKIE_SECRET_FILE")
  export STREAMLIT_SERVER_COOKIE_SECRET
fi
if [ -z "${STREAMLIT_SERVER_COOKIE_SECRET:-}" ]; then
  echo "serve.sh: no shared cookie secret (CONVVIZ_COOKIE_SECRET_FILE): fine for one process" >&2
fi
cd "$(dirname "$0")/.."
exec "${PYTHON:-python3}" -m streamlit run app.py --server.headless true \
  --server.address "$1" --server.port "$2" --server.fileWatcherType none \
  --browser.gatherUsageStats false
