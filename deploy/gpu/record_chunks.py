"""A pytest plugin for `carry.py --tests`: records every whitespace-free chunk `tokenize` cuts while the tests run
here, so that the stand-in spaCy and the carried GloVe rows hold the tests' words as well as the data's.

    MATCHLENS_RECORD_CHUNKS=chunks.json python -m pytest -n 0 -p record_chunks tests/test_devices.py
(with deploy/gpu on PYTHONPATH; `carry.py --tests` runs it so.)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from matching.text import tokens

SEEN: set[str] = set()
_real_words_of_chunk = tokens._words_of_chunk


def _recording(chunk: str) -> tuple[tuple[int, str, str, int], ...]:
    SEEN.add(chunk)
    return _real_words_of_chunk(chunk)


def pytest_configure(config: pytest.Config) -> None:
    tokens._words_of_chunk = _recording  # tokenize looks it up by name at each call


def pytest_unconfigure(config: pytest.Config) -> None:
    Path(os.environ["MATCHLENS_RECORD_CHUNKS"]).write_text(json.dumps(sorted(SEEN)), encoding="utf-8")
