"""Shared inputs for the benchmarks: one question and 20 candidates the project wrote."""

from __future__ import annotations

import random
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from matching.text.data import RankingList, read_toks_folder  # noqa: E402
from matching.text.embeddings import WordVectors  # noqa: E402

if TYPE_CHECKING:  # cold_start.py times the first import of torch and the package: nothing more here
    import numpy as np

    from matching.text.tokenized import TokenizedList


def mean_average_precision(scores: list[np.ndarray], lists: list[TokenizedList]) -> float:
    """MAP over the questions with a right answer, by `evaluate`'s own code."""
    from matching.evaluation.dataset import mean_over_answerable, system_results

    return mean_over_answerable(system_results(scores, [lst.item.labels for lst in lists]))["MAP"]


def model_names(pretrained: Path, names: list[str]) -> list[str]:
    """`names`, or with `all` the folder of every checkpoint under `pretrained`: what `python -m matching evaluate`
    scores without --models."""
    from matching.training.checkpoint import checkpoint_folders

    return [folder.name for folder in checkpoint_folders(pretrained)] if names == ["all"] else names


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (the probe is closed when it returns); the tests use it too."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def resampled(folders: list[Path], pairs: int, seed: int = 0) -> list[RankingList]:
    """Lists drawn with replacement from every split of `folders` until `pairs` pairs, each under a new id."""
    pool = [item for folder in folders for split in ("train", "dev", "test") if (folder / split).is_dir()
            for item in read_toks_folder(folder / split)]
    rng = random.Random(seed)
    lists: list[RankingList] = []
    total = 0
    while total < pairs:
        item = pool[rng.randrange(len(pool))]
        lists.append(RankingList(f"R{len(lists)}", item.question, item.candidates, item.labels))
        total += len(item.candidates)
    return lists


QUESTION = "how did the roman empire fall ?"
CANDIDATES = [
    "The fall of the Western Roman Empire was the loss of central political control in the west.",
    "Rome is the capital city of Italy and has a population of about 2.8 million.",
    "Barbarian invasions, economic decline and political instability weakened the empire.",
    "The Eastern Roman Empire survived until the fall of Constantinople in 1453.",
    "Pizza is a dish of Italian origin consisting of a flattened base of dough.",
    "In 476 Odoacer deposed Romulus Augustulus, the last western emperor.",
    "Historians such as Edward Gibbon blamed a loss of civic virtue among Roman citizens.",
    "The Colosseum is an oval amphitheatre in the centre of the city of Rome.",
    "Latin was the language of the Roman Empire.",
    "Plague and the Crisis of the Third Century reduced the population and the tax base.",
    "The Roman army increasingly relied on foreign mercenaries.",
    "Julius Caesar was assassinated in 44 BC.",
    "The Visigoths sacked Rome in 410 under Alaric.",
    "Many roads in Europe follow the routes of Roman roads.",
    "The division of the empire into east and west made the west harder to defend.",
    "Roman law influenced many modern legal systems.",
    "The Vandals sacked Rome again in 455.",
    "Christianity became the state religion of the empire in 380.",
    "Inflation and debasement of the currency hurt the Roman economy.",
    "The Tiber is the river that flows through Rome.",
]


def _generated_question(rng: random.Random, words: list[str]) -> str:
    """4 to 15 words drawn from `words`."""
    return " ".join(rng.choices(words, k=rng.randint(4, 15)))


def _generated_answer(rng: random.Random, words: list[str]) -> str:
    """5 to 60 words drawn from `words` (~25 on average, as WikiQA's answers)."""
    return " ".join(rng.choices(words, k=max(5, min(60, int(rng.gammavariate(4.0, 6.5))))))


def marco_like(vectors: WordVectors, questions: int, candidates: int = 1_000, correct: int = 1,
               seed: int = 0) -> list[RankingList]:
    """Generated lists with MS MARCO's shape: `candidates` passages a question, `correct` of them correct (one in
    MS MARCO), at random places; questions and answers as `wikiqa_like` draws them (answers of ~25 words from
    GloVe's 20k most frequent). What an evaluation meets on a collection of long lists: large ties among the
    baselines' scores, a chunk closed by its pairs long before its questions."""
    rng = random.Random(seed)
    words = list(vectors.row_of)[:20_000]
    lists = []
    for number in range(questions):
        question = _generated_question(rng, words)
        texts = tuple(_generated_answer(rng, words) for _ in range(candidates))
        right = set(rng.sample(range(candidates), min(correct, candidates)))
        lists.append(RankingList(str(number), question, texts, tuple(int(n in right) for n in range(candidates))))
    return lists


def wikiqa_like(vectors: WordVectors, questions: int = 240, seed: int = 0) -> list[RankingList]:
    """Generated lists with WikiQA test's shape: ~10 candidates per question, questions of
    ~4-15 words, answers of ~5-60 words (mean ~25), words drawn from GloVe's 20k most frequent."""
    rng = random.Random(seed)
    words = list(vectors.row_of)[:20_000]
    lists = []
    for number in range(questions):
        question = _generated_question(rng, words)
        count = rng.randint(3, 18)
        candidates = tuple(_generated_answer(rng, words) for _ in range(count))
        labels = tuple(int(rng.random() < 0.12) for _ in range(count))
        lists.append(RankingList(str(number), question, candidates, labels))
    return lists
