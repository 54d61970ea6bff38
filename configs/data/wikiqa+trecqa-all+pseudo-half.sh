#!/usr/bin/env bash
# The training folder of amvlstm-q-kw-all and mcan-kw-all since 2026-11-29: WikiQA train + TrecQA TRAIN-ALL + half the
# pseudo-questions (--share 0.5: a subset of mvlstm-em-kw-all's, the same questions), and its cross-source folder
# (docs/models-and-training.md, "Half the pseudo-questions for mcan-kw-all"). The folder names are part of the
# question ids, so of the training data's fingerprint in the cards: keep them.
# Usage: [SHARED=../shared/data] bash configs/data/wikiqa+trecqa-all+pseudo-half.sh
exec bash "$(dirname "$0")/pseudo-variant.sh" half --share 0.5
