#!/usr/bin/env bash
# Half the pseudo-questions (--share 0.5: a subset of the recipe's own, the same questions) with WikiQA train and
# TRAIN-ALL, and its cross-source folder. For mcan-kw-all with keyword_solo 0.15, whose full dose was measured on
# 2026-11-28 (docs/models-and-training.md, "Half the pseudo-questions for mcan-kw-all").
# Usage: [SHARED=../shared/data] bash configs/data/wikiqa+trecqa-all+pseudo-half.sh
exec bash "$(dirname "$0")/pseudo-variant.sh" half --share 0.5
