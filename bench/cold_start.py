"""Cold start: imports, then load GloVe and all checkpoints, then the first explanation.

Runs in this fresh process, so nothing is cached. Goal: <= 3 s after imports.
Run: python bench/cold_start.py
"""

from __future__ import annotations

import time

started = time.perf_counter()
from common import CANDIDATES, QUESTION, ROOT  # noqa: E402

from matching.explain.ranking import rank  # noqa: E402
from matching.text.embeddings import load_glove  # noqa: E402
from matching.text.tokens import tokenize  # noqa: E402
from matching.training.checkpoint import load_all  # noqa: E402

imported = time.perf_counter()
vectors = load_glove()
glove = time.perf_counter()
models, errors = load_all(ROOT / "pretrained", vectors)
loaded = time.perf_counter()
tokenize("warm up the tokenizer")
rank(QUESTION, CANDIDATES, models)
first = time.perf_counter()
print(f"imports (torch, matching): {imported - started:.2f} s")
print(f"GloVe 400k x 50 (memory-mapped) + index: {glove - imported:.2f} s")
print(f"{len(models)} checkpoints: {loaded - glove:.2f} s" + (f" ({len(errors)} failed)" if errors else ""))
print(f"first rank + explanations (incl. spaCy tokenizer): {first - loaded:.2f} s")
print(f"cold start after imports: {first - imported:.2f} s (goal <= 3 s)")
