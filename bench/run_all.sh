#!/usr/bin/env bash
# Every benchmark, one after the other, in one command: bash bench/run_all.sh
# (sessions starts the app on 127.0.0.1:8610 and stops it afterwards; the replica figures start
# deploy/run-processes.sh: 2 app processes behind nginx on 127.0.0.1:8090.)
# Figures taken beside other work measure the machine: the load average is printed at the start and
# before each figure (sessions, matchzoo and evaluate_upload print their own).
set -e
cd "$(dirname "$0")"
load() { echo "load average $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"; }
echo "== start: $(load)"
for script in cold_start latency throughput memory evaluate_upload evaluate_stream why; do
  echo "== $script ($(load))"
  python "$script.py"
done
# MatchZoo-py pins old packages: install it where it cannot replace the project's, e.g.
#   python -m venv --system-site-packages /tmp/mz && /tmp/mz/bin/pip install --no-deps -r bench/requirements.txt
# and run with MATCHZOO_PYTHON=/tmp/mz/bin/python.
mz_python="${MATCHZOO_PYTHON:-python}"
echo "== matchzoo: three runs, every round of every run counted, no run or mode set aside ($(load))"
if "$mz_python" -c "import collections, collections.abc; collections.Iterable = collections.abc.Iterable; import matchzoo" 2>/dev/null; then
  for run in 1 2 3; do "$mz_python" matchzoo.py; done
else
  echo "MatchZoo-py is not installed (see above): skipped"
fi
echo "== sessions, one process ($(load))"
python sessions.py --cpu-runs 5 --pages rank attention interactions pooled evaluate models --sessions 0
python sessions.py --sessions 20 --rounds 3 --pages rank interactions
echo "== sessions, 2 processes behind nginx (deploy/run-processes.sh) ($(load))"
if command -v nginx >/dev/null || [ -x /usr/sbin/nginx ]; then
  log="$(mktemp)"
  MATCHLENS_PROCESSES=2 MATCHLENS_LISTEN=127.0.0.1:8090 MATCHLENS_FIRST_PORT=8620 \
    setsid bash ../deploy/run-processes.sh > "$log" 2>&1 &
  replicas=$!
  trap 'kill -TERM -- "-$replicas" 2>/dev/null || true' EXIT
  for _ in $(seq 120); do grep -q "^app pids:" "$log" && break; sleep 1; done
  pids=$(sed -n 's/^app pids: //p' "$log")
  # Behind the proxy each process must have served a session before the class comes in.
  python sessions.py --url http://127.0.0.1:8090 --server-pid $pids --warmup 4 --sessions 20 --rounds 3 \
    --pages rank interactions
  kill -TERM -- "-$replicas" 2>/dev/null || true
  wait "$replicas" 2>/dev/null || true
  trap - EXIT
else
  echo "nginx is not installed (apt-get install -y nginx): skipped"
fi
