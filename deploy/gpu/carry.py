"""Pack what a GPU machine without a package registry needs to train on the given data folders.

Run on a machine with the requirements installed; it writes FOLDER (default .gpu/, which git ignores through
.git/info/exclude) holding:
  data.tar.xz                 the data folders
  stand/chunks.json.gz        the real spaCy's split of every whitespace-free chunk of their texts, which the
                              stand-in `stand/spacy` reads (matching.text.tokens asks spaCy one chunk at a time)
  stand/special_cases.json    the real spaCy's table of exceptions, which `tokenize` asks before it takes a plain
                              chunk ("cannot") for one word without spaCy
  glove_rows.npz              the real GloVe rows of every word of those texts, with the index file beside it, so
  glove_6B_index.parquet      `unpack_glove.py` rebuilds the package with the same vocabulary fingerprint
  stand/rank_bm25.py          the installed rank-bm25 itself (one pure-Python file), which the keyword features'
                              BM25 imports and the GPU machine does not have
  stand/snowballstemmer/      the installed snowballstemmer (pure Python), which the keyword features' stems import
and copies the stand-in, `unpack_glove.py`, `side_by_side.sh` and the configs named. About 20 MB for WikiQA + TRAIN-ALL.

    python deploy/gpu/carry.py --data runs/data/wikiqa+trecqa-all --configs configs/variants/mcan-kw-all.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import numpy as np
import rank_bm25
import snowballstemmer

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
from matching.text.data import read_toks_folder  # noqa: E402
from matching.text.embeddings import glove_root, load_glove  # noqa: E402
from matching.text.tokens import NON_SPACE, special_cases, tokenize  # noqa: E402


def chunks_of(folders: list[Path]) -> set[str]:
    """Every chunk of the texts as training reads them (`read_toks_folder`) and `tokenize` cuts them."""
    return {chunk for folder in folders for split in sorted(folder.glob("*/a.toks"))
            for item in read_toks_folder(split.parent) for text in (item.question, *item.candidates)
            for chunk in NON_SPACE.findall(text)}


def chunks_of_tests(tests: list[Path]) -> set[str]:
    """Every chunk `tokenize` cuts while `tests` run here (one process, `record_chunks.py`); they must pass."""
    with tempfile.TemporaryDirectory() as folder:
        record = Path(folder) / "chunks.json"
        env = {**os.environ, "MATCHLENS_RECORD_CHUNKS": str(record),
               "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")])}
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "record_chunks", *map(str, tests)],
                       cwd=HERE.parent.parent, env=env, check=True)
        return set(json.loads(record.read_text(encoding="utf-8")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", nargs="+", type=Path, required=True, help="data folders (train/, dev/, test/)")
    parser.add_argument("--configs", nargs="*", type=Path, default=[], help="training configs to carry")
    parser.add_argument("--tests", nargs="*", type=Path, default=[],
                        help="test files to run there too (tests/test_devices.py): run here, recording their words")
    parser.add_argument("--out", type=Path, default=Path(".gpu"))
    args = parser.parse_args()
    (args.out / "stand").mkdir(parents=True, exist_ok=True)
    shutil.copytree(HERE / "stand" / "spacy", args.out / "stand" / "spacy", dirs_exist_ok=True)
    shutil.copy(rank_bm25.__file__, args.out / "stand" / "rank_bm25.py")
    shutil.copytree(Path(snowballstemmer.__file__).parent, args.out / "stand" / "snowballstemmer", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("unpack_glove.py", "side_by_side.sh", "checks.sh"):
        shutil.copy(HERE / name, args.out / name)
    for config in args.configs:
        shutil.copy(config, args.out / config.name)
    with tarfile.open(args.out / "data.tar.xz", "w:xz") as archive:
        for folder in args.data:
            archive.add(folder, arcname=folder.name)
    # The words spaCy finds in each chunk, as `tokenize` keeps them (the spaces and empty keys it drops are
    # dropped there too, so the stand-in need not hold them).
    table: dict[str, list[tuple[int, str, bool]]] = {}
    keys: set[str] = set()
    for chunk in chunks_of(args.data) | (chunks_of_tests(args.tests) if args.tests else set()):
        words = tokenize(chunk)
        table[chunk] = [(word.start, word.text, False) for word in words]
        keys.update(word.key for word in words)
    with gzip.open(args.out / "stand" / "chunks.json.gz", "wt", encoding="utf-8") as handle:
        json.dump(table, handle)
    (args.out / "stand" / "special_cases.json").write_text(json.dumps(sorted(special_cases())), encoding="utf-8")
    vectors = load_glove()
    rows = np.array(sorted(vectors.row_of[key] for key in keys if vectors.is_known(key)), dtype=np.int64)
    np.savez_compressed(args.out / "glove_rows.npz", rows=rows, values=vectors.matrix[rows],
                        shape=np.array(vectors.matrix.shape))
    shutil.copy(glove_root() / "glove_6B_index.parquet", args.out / "glove_6B_index.parquet")
    size = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file()) / 2**20
    print(f"{args.out}: {len(table):,} chunks, {len(rows):,} GloVe rows of {len(keys):,} words; {size:.1f} MiB")


if __name__ == "__main__":
    main()
