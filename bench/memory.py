"""Memory: peak resident memory of the process before and after loading every model, and what the
app's pass cache (matching.explain.passes) keeps for a classroom's inputs.

GloVe is memory-mapped, so its pages count only once touched. Run: python bench/memory.py
"""

from __future__ import annotations

import resource

from common import CANDIDATES, QUESTION, ROOT

from matching.explain.passes import PassCache
from matching.explain.ranking import rank, rank_tokens
from matching.text.tokens import tokenize
from matching.training.cards import default_models
from matching.training.checkpoint import load_all

CLASS = 20
"""Students, each asking the teacher's 20 candidates a question of their own, with the default models."""


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def main() -> None:
    before = peak_mib()
    models, _ = load_all(ROOT / "pretrained")
    loaded = peak_mib()
    rank(QUESTION, CANDIDATES, models)
    ranked = peak_mib()
    parameters = sum(p.numel() for m in models.values() for p in m.model.parameters())
    files = sum((m.path / "model.safetensors").stat().st_size for m in models.values() if m.path)
    print(f"peak RSS after imports: {before:.0f} MiB")
    print(f"peak RSS after loading GloVe + {len(models)} models: {loaded:.0f} MiB (+{loaded - before:.0f} MiB)")
    print(f"peak RSS after one rank + explanations: {ranked:.0f} MiB")
    print(f"model parameters: {parameters:,} ({parameters * 4 / 2**20:.2f} MiB float32); "
          f"checkpoint files: {files / 1024:.0f} KiB in all")
    for name, matcher in models.items():
        size = (matcher.path / "model.safetensors").stat().st_size if matcher.path else 0
        count = sum(p.numel() for p in matcher.model.parameters())
        print(f"  {name}: {count:,} parameters, {size / 1024:.0f} KiB file")
    passes = PassCache()  # the app's bound: 256 MiB ($MATCHLENS_PASS_CACHE_MIB)
    chosen = {name: models[name] for name in default_models(list(models))}
    candidates = [tokenize(c) for c in CANDIDATES]
    for student in range(CLASS):
        question = f"{QUESTION[:-1]} {student}?"
        rank_tokens(question, tokenize(question), CANDIDATES, candidates, chosen, passes=passes)
        rank_tokens(question, tokenize(question), CANDIDATES, candidates, chosen, passes=passes)  # a page switch
    print(f"pass cache after {CLASS} questions x {len(CANDIDATES)} candidates x {len(chosen)} default models, each "
          f"asked twice: {len(passes)} passes, {passes.nbytes / 2**20:.1f} MiB of arrays (bound "
          f"{passes.max_bytes / 2**20:.0f} MiB), {passes.hits} reused, {passes.misses} computed; peak RSS now "
          f"{peak_mib():.0f} MiB")


if __name__ == "__main__":
    main()
