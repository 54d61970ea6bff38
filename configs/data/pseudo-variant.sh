#!/usr/bin/env bash
# A variant of the recipe's pseudo-questions (configs/data/wikiqa+trecqa-all+pseudo.sh) with WikiQA train and
# TRAIN-ALL, and its cross-source folder (WikiQA train + these pseudo-questions, TrecQA dev), named by SUFFIX.
# Needs runs/data/trecqa-all (bash configs/data/wikiqa+trecqa-all.sh); SHARED is ../shared/data unless set.
# Usage: bash configs/data/pseudo-variant.sh SUFFIX [pseudo-questions options, e.g. --keep 0.4]
set -euo pipefail
suffix=$1; shift
shared=$(realpath "${SHARED:-../shared/data}")
python -m matching pseudo-questions --data "$shared/wikiqa" --out "runs/data/wikiqa-pseudo-subject-$suffix" \
  --subject 1 --seed 0 "$@"
python -m matching combine --data "$shared/wikiqa" runs/data/trecqa-all "runs/data/wikiqa-pseudo-subject-$suffix" \
  --dev "$shared/wikiqa" runs/data/trecqa-all --test "$shared/trecqa" \
  --out "runs/data/wikiqa+trecqa-all+pseudo-subject-$suffix"
python -m matching combine --data "$shared/wikiqa" "runs/data/wikiqa-pseudo-subject-$suffix" --dev "$shared/trecqa" \
  --test "$shared/trecqa" --out "runs/data/wikiqa+pseudo-subject-$suffix-to-trecqa"
