#!/usr/bin/env bash
# mvlstm-em-kw-all's training folder with pseudo-questions that keep 0.4 of their sentence's other words (the recipe
# keeps 0.6: configs/data/wikiqa+trecqa-all+pseudo.sh), and its cross-source folder (WikiQA train + these
# pseudo-questions, TrecQA dev). Measured in docs/models-and-training.md ("Pseudo-questions that keep 0.4 of their
# sentence"). Needs runs/data/trecqa-all (bash configs/data/wikiqa+trecqa-all.sh).
# Usage: bash configs/data/wikiqa+trecqa-all+pseudo-keep04.sh [SHARED_DATA (default ../shared/data)]
set -euo pipefail
shared=$(realpath "${1:-../shared/data}")
python -m matching pseudo-questions --data "$shared/wikiqa" --out runs/data/wikiqa-pseudo-subject-keep04 --subject 1 \
  --seed 0 --keep 0.4
python -m matching combine --data "$shared/wikiqa" runs/data/trecqa-all runs/data/wikiqa-pseudo-subject-keep04 \
  --dev "$shared/wikiqa" runs/data/trecqa-all --test "$shared/trecqa" \
  --out runs/data/wikiqa+trecqa-all+pseudo-subject-keep04
python -m matching combine --data "$shared/wikiqa" runs/data/wikiqa-pseudo-subject-keep04 --dev "$shared/trecqa" \
  --test "$shared/trecqa" --out runs/data/wikiqa+pseudo-subject-keep04-to-trecqa
