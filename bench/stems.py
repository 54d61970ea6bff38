"""The lexical baselines on whole words and on their stems: what a keyword term with `keyword_stems` reads.

Word overlap and BM25 within the list, as the baselines compute them (`text.baselines`: each question's own
candidates the collection), once over the words' lookup keys and once over their Snowball stems (`text.stems`:
"founded" and "founding" match). MAP over the questions with a right and a wrong candidate, on the section
collection's sets (A and C are the sets a choice reads; B is read only to report) and on the dev split of each
--data folder. No model is run.

    python bench/stems.py [--data ../shared/data/wikiqa ../shared/data/trecqa]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from common import ROOT  # noqa: F401  (puts the checkout on sys.path)
from section_collection import SETS, answerable, per_question

from matching.evaluation.studies import paired_tests
from matching.text.baselines import _bm25, _overlap, overlap_words, stemmed_words
from matching.text.data import read_ranking_file, read_toks_folder
from matching.text.tokenized import tokenize_lists

FORMS = {"words": overlap_words, "stems": stemmed_words}
RANKERS = {"word overlap": _overlap, "BM25": _bm25}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", nargs="*", type=Path, default=[], help="data folders whose dev split is read too")
    args = parser.parse_args()
    collections = {f"set {name}" + (" (read to report)" if name == "B" else ""): read_ranking_file(path)
                   for name, path in SETS.items()}
    collections |= {f"{folder.name} dev": read_toks_folder(folder / "dev") for folder in args.data}
    print("| collection | questions | " + " | ".join(f"{r} on {f}" for r in RANKERS for f in FORMS)
          + " | stems - words (p) |")
    print("|---|---:|" + "---:|" * (len(RANKERS) * len(FORMS)) + "---|")
    for name, raw in collections.items():
        lists = [t for t in answerable(tokenize_lists(raw)[0]) if overlap_words(t.question)]
        cells, gains = [], []
        for ranker_name, ranker in RANKERS.items():
            ap = {}
            for form, words in FORMS.items():
                ap[form] = per_question([ranker(words(t.question), [words(c) for c in t.candidates])
                                         for t in lists], lists)
                cells.append(f"{ap[form].mean():.4f}")
            (test,) = paired_tests([ap["stems"]], [ap["words"]], ["words"])
            gains.append(f"{ranker_name} {test.difference:+.4f} ({test.p_value:.3f})")
        print(f"| {name} | {len(lists)} | " + " | ".join(cells) + " | " + "; ".join(gains) + " |")


if __name__ == "__main__":
    main()
