#!/usr/bin/env bash
# mvlstm-em-kw-all's training folder with pseudo-questions that keep 0.4 of their sentence's other words (the recipe
# keeps 0.6: configs/data/wikiqa+trecqa-all+pseudo.sh), and its cross-source folder. Measured in
# docs/models-and-training.md ("Pseudo-questions that keep 0.4 of their sentence").
# Usage: [SHARED=../shared/data] bash configs/data/wikiqa+trecqa-all+pseudo-keep04.sh
exec bash "$(dirname "$0")/pseudo-variant.sh" keep04 --keep 0.4
