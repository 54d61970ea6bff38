#!/usr/bin/env bash
# Every benchmark, one after the other: bash bench/run_all.sh
# (sessions starts the app on 127.0.0.1:8610 and stops it afterwards.)
set -e
cd "$(dirname "$0")"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
for script in cold_start latency throughput memory evaluate_upload evaluate_stream why; do
  echo "== $script"
  python "$script.py"
done
echo "== sessions"
python sessions.py --cpu-runs 5 --pages rank attention interactions pooled evaluate models --sessions 0
python sessions.py --sessions 20 --rounds 3 --pages rank interactions
