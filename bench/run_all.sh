#!/usr/bin/env bash
# Every benchmark, one after the other: bash bench/run_all.sh
set -e
cd "$(dirname "$0")"
for script in cold_start latency throughput memory; do
  echo "== $script"
  python "$script.py"
done
