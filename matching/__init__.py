"""MatchLens core: neural text matching models with one faithful explanation per forward pass.

This package never imports streamlit; the app's pages only draw what it returns. The Python API
(`matching.api`) is re-exported here and imported on first use, so `import matching` stays fast:

    import matching
    ranking = matching.rank("who wrote hamlet", ["shakespeare wrote hamlet", "it rained"])
    ranking.to_frame()
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from matching.api import EvaluationResult, cells, compare, evaluate, gap_chart, load, rank

__all__ = ["EvaluationResult", "__version__", "cells", "compare", "evaluate", "gap_chart", "load", "rank"]
_API = frozenset(__all__) - {"__version__"}


def __getattr__(name: str) -> Any:
    """The API's names, imported from `matching.api` when first asked for (PEP 562)."""
    if name in _API:
        from matching import api

        return getattr(api, name)
    raise AttributeError(f"module 'matching' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*(name for name in globals() if name.startswith("__")), *__all__})
