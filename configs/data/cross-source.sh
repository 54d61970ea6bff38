#!/usr/bin/env bash
# The cross-source folders: a config trained on one source, every epoch measured on the other source's dev set
# (docs/models-and-training.md, "More epochs, and text not seen"). Needs runs/data/trecqa-all
# (bash configs/data/wikiqa+trecqa-all.sh).
#   runs/data/wikiqa-to-trecqa:      WikiQA train, TrecQA dev, TrecQA test
#   runs/data/trecqa-all-to-wikiqa:  TrecQA TRAIN-ALL, WikiQA dev, TrecQA test
# Usage: bash configs/data/cross-source.sh [SHARED_DATA (default ../shared/data)]
set -euo pipefail
shared=$(realpath "${1:-../shared/data}")
python -m matching combine --data "$shared/wikiqa" --dev "$shared/trecqa" --test "$shared/trecqa" \
  --out runs/data/wikiqa-to-trecqa
python -m matching combine --data runs/data/trecqa-all --dev "$shared/wikiqa" --test "$shared/trecqa" \
  --out runs/data/trecqa-all-to-wikiqa
