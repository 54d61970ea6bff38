#!/usr/bin/env bash
# MatchLens on a machine without Docker: N app processes behind Debian's nginx, sticky sessions.
#
#   deploy/run-processes.sh                  # 2 processes, proxy on 127.0.0.1:8080
#   MATCHLENS_PROCESSES=4 MATCHLENS_LISTEN=0.0.0.0:8080 deploy/run-processes.sh   # a classroom
#
# Settings (environment): MATCHLENS_PROCESSES (2), MATCHLENS_LISTEN (127.0.0.1:8080),
# MATCHLENS_FIRST_PORT (8501: the apps take this port and the next ones, on 127.0.0.1 only),
# MATCHLENS_RUN_DIR (a new temporary folder: nginx config, logs, pids). Needs nginx
# (apt-get install -y nginx). Stops everything it started on Ctrl+C or TERM.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PROCESSES="${MATCHLENS_PROCESSES:-2}"
LISTEN="${MATCHLENS_LISTEN:-127.0.0.1:8080}"
FIRST_PORT="${MATCHLENS_FIRST_PORT:-8501}"
RUN_DIR="${MATCHLENS_RUN_DIR:-$(mktemp -d -t matchlens-XXXXXX)}"
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
PYTHON="${PYTHON:-python}"

if [ ! -x "$NGINX" ]; then
  echo "nginx is not installed: apt-get install -y nginx" >&2
  exit 1
fi
if ! [[ "$PROCESSES" =~ ^[1-9][0-9]*$ ]]; then
  echo "MATCHLENS_PROCESSES must be a positive number, not '$PROCESSES'" >&2
  exit 1
fi
mkdir -p "$RUN_DIR/logs" "$RUN_DIR/tmp"
chmod 1777 "$RUN_DIR/tmp"  # nginx workers (user nobody when started as root) buffer uploads here

pids=()
stop() {
  trap - EXIT INT TERM
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap stop EXIT
trap 'exit 130' INT TERM

upstreams=""
for ((n = 0; n < PROCESSES; n++)); do
  port=$((FIRST_PORT + n))
  (cd "$ROOT" && exec "$PYTHON" -m streamlit run app.py --server.address 127.0.0.1 --server.port "$port" \
      --server.headless true) > "$RUN_DIR/logs/app-$port.log" 2>&1 &
  pids+=("$!")
  upstreams+="server 127.0.0.1:$port;"$'\n        '
done

export MATCHLENS_UPSTREAMS="$upstreams" MATCHLENS_LISTEN="$LISTEN"
export MATCHLENS_NGINX_MAIN="pid $RUN_DIR/nginx.pid; error_log $RUN_DIR/logs/nginx-error.log;"
export MATCHLENS_NGINX_HTTP="access_log $RUN_DIR/logs/nginx-access.log matchlens; client_body_temp_path $RUN_DIR/tmp/body; proxy_temp_path $RUN_DIR/tmp/proxy; fastcgi_temp_path $RUN_DIR/tmp/fastcgi; uwsgi_temp_path $RUN_DIR/tmp/uwsgi; scgi_temp_path $RUN_DIR/tmp/scgi;"
# Only our variables are substituted: nginx's own ($http_upgrade, ...) stay as they are.
envsubst '${MATCHLENS_UPSTREAMS} ${MATCHLENS_LISTEN} ${MATCHLENS_NGINX_MAIN} ${MATCHLENS_NGINX_HTTP}' \
  < "$ROOT/deploy/nginx.conf.template" > "$RUN_DIR/nginx.conf"
"$NGINX" -t -q -c "$RUN_DIR/nginx.conf" -p "$RUN_DIR" -g "daemon off;"
"$NGINX" -c "$RUN_DIR/nginx.conf" -p "$RUN_DIR" -g "daemon off;" &
pids+=("$!")

echo "MatchLens: $PROCESSES process(es) on 127.0.0.1:$FIRST_PORT.. behind nginx on http://$LISTEN (run folder $RUN_DIR)"
echo "app pids: ${pids[*]:0:$PROCESSES}"
wait -n "${pids[@]}"
echo "a MatchLens process or nginx stopped; stopping the rest (logs in $RUN_DIR/logs)" >&2
exit 1
