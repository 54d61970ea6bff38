#!/usr/bin/env bash
# The training folder of the *-all models: WikiQA train + TrecQA TRAIN-ALL, both dev sets, TrecQA test.
# runs/data/trecqa-all is TrecQA with TRAIN-ALL as its train split (links, nothing copied); `combine`
# prefixes each question id with its source folder's name (wikiqa:, trecqa-all:), so the cards' keyword
# studies report each dev set on its own.
# Usage: bash configs/data/wikiqa+trecqa-all.sh [SHARED_DATA (default ../shared/data)]
set -euo pipefail
shared=$(realpath "${1:-../shared/data}")
mkdir -p runs/data/trecqa-all
ln -sfn "$shared/trecqa/train-all" runs/data/trecqa-all/train
ln -sfn "$shared/trecqa/dev" runs/data/trecqa-all/dev
ln -sfn "$shared/trecqa/test" runs/data/trecqa-all/test
python -m matching combine --data "$shared/wikiqa" runs/data/trecqa-all --test "$shared/trecqa" \
  --out runs/data/wikiqa+trecqa-all
