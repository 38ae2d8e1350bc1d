#!/usr/bin/env bash
# Start N Streamlit processes of convviz on 127.0.0.1:8501… for deploy/nginx.conf.
#   deploy/run-hall.sh [N=number of cores]      stop: kill the pids in deploy/hall.pids
# Each process is one Python interpreter (one core's worth of reruns at a time); the processes
# share one cookie secret, so a process may check a form or upload another one issued.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-$(nproc)}
# Streamlit takes the cookie secret from the environment (not from a command-line flag).
export STREAMLIT_SERVER_COOKIE_SECRET=${STREAMLIT_SERVER_COOKIE_SECRET:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}
export CONVVIZ_CACHE_MB=${CONVVIZ_CACHE_MB:-512}  # each process's shared cache, in MB
: > deploy/hall.pids
for i in $(seq 1 "$N"); do
  port=$((8500 + i))
  .venv/bin/streamlit run app.py \
    --server.headless true --server.address 127.0.0.1 --server.port "$port" \
    --server.fileWatcherType none \
    --browser.gatherUsageStats false >"deploy/hall-$port.log" 2>&1 &
  echo $! >> deploy/hall.pids
  echo "convviz on 127.0.0.1:$port (pid $!)"
done
