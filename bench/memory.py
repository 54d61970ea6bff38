"""Memory: peak resident memory of the process before and after loading every model.

GloVe is memory-mapped, so its pages count only once touched. Run: python bench/memory.py
"""

from __future__ import annotations

import resource

from common import CANDIDATES, QUESTION, ROOT

from matching.explain.ranking import rank
from matching.training.checkpoint import load_all


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


if __name__ == "__main__":
    main()
