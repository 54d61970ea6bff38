"""The package's shape, as the product's design fixes it: checked on the source, so it cannot drift.

- no model family's name outside `matching/models/` (and configs, checkpoints): pages and services
  ask an explanation for parts, never for a family;
- `matching/` never imports streamlit (a notebook or the CLI can use all of it);
- no chart is built in `ui/`: the pages draw what `matching.explain.charts` builds.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from matching.models import FAMILIES

ROOT = Path(__file__).resolve().parent.parent
FAMILY_STRING = re.compile(r"[\"'](" + "|".join(sorted(map(re.escape, FAMILIES), key=len, reverse=True))
                           + r")([-_][a-z]+)*[\"']")
CHART_BUILDING = re.compile(r"\balt\.Chart\(|\.mark_[a-z]+\(|\bgo\.(Heatmap|Bar|Scatter)\(|\bpx\.")


def sources(*folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (ROOT / folder).rglob("*.py")) + (
        [ROOT / "app.py"] if "app.py" in folders else [])


@pytest.mark.parametrize("path", sources("matching", "ui", "app.py"), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_family_name_outside_the_model_files(path: Path) -> None:
    if path.is_relative_to(ROOT / "matching" / "models"):
        return
    found = FAMILY_STRING.search(path.read_text(encoding="utf-8"))
    assert found is None, f"{path.relative_to(ROOT)} names the family {found.group(0)}: ask for a part instead"


def test_the_family_pattern_finds_a_family_name() -> None:
    assert FAMILY_STRING.search(f"if family == '{next(iter(FAMILIES))}-q':")


@pytest.mark.parametrize("path", sources("matching"), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_package_never_imports_streamlit(path: Path) -> None:
    assert not re.search(r"^\s*(import|from) streamlit\b", path.read_text(encoding="utf-8"), re.M)


@pytest.mark.parametrize("path", sources("ui"), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_chart_is_built_in_the_pages(path: Path) -> None:
    found = CHART_BUILDING.search(path.read_text(encoding="utf-8"))
    assert found is None, f"{path.relative_to(ROOT)} builds a chart ({found.group(0)}): build it in the package"
