#!/usr/bin/env bash
# The training folder of mvlstm-em-kw-all since 2026-11-28: WikiQA train + TrecQA TRAIN-ALL + one pseudo-question
# written from each of WikiQA train's sections (python -m matching pseudo-questions; docs/models-and-training.md,
# "Pseudo-questions written from WikiQA's own sections"), both dev sets as they are, TrecQA test; and its cross-source
# folder (WikiQA train + the pseudo-questions, TrecQA dev). The folder names are part of the question ids, so of the
# training data's fingerprint in the cards: keep them. Needs runs/data/trecqa-all (bash configs/data/wikiqa+trecqa-all.sh).
# Usage: bash configs/data/wikiqa+trecqa-all+pseudo.sh [SHARED_DATA (default ../shared/data)]
set -euo pipefail
shared=$(realpath "${1:-../shared/data}")
python -m matching pseudo-questions --data "$shared/wikiqa" --out runs/data/wikiqa-pseudo-subject --subject 1 --seed 0
python -m matching combine --data "$shared/wikiqa" runs/data/trecqa-all runs/data/wikiqa-pseudo-subject \
  --dev "$shared/wikiqa" runs/data/trecqa-all --test "$shared/trecqa" --out runs/data/wikiqa+trecqa-all+pseudo-subject
python -m matching combine --data "$shared/wikiqa" runs/data/wikiqa-pseudo-subject --dev "$shared/trecqa" \
  --test "$shared/trecqa" --out runs/data/wikiqa+pseudo-subject-to-trecqa
