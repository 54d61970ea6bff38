"""Throughput against MatchZoo-py itself: its own MVLSTM and MatchLens's scoring, same pairs, one run.

MatchZoo-py's side is its own code, unmodified (`pip install -r bench/requirements.txt`, see there):
`matchzoo.models.MVLSTM` built with the sizes of the shipped `pretrained/mvlstm` (GloVe 6B 50d,
frozen; Bi-LSTM 50 per direction; top_k 10; MLP: one ReLU layer of 32; a linear score) and the
shipped weights copied in (both of its Bi-LSTMs get the shared one; its OOV row gets the learned
unknown-word vector), so the shapes are checked and both sides compute the same kind of thing.
MatchZoo-py's MVLSTM has no interaction choice: it is cosine, as the shipped model's.

Three MatchZoo-py figures, each a superset of the one before (timed regions):
  forward     its `Trainer.predict` loop without the DataLoader: `torch.no_grad()`, the model's
              forward over ready batches of 256 padded word-id tensors, `.detach().cpu()`,
              the scores concatenated. Not timed: tokenising, word ids, padding, tensors.
  from ids    per batch, what its DataLoader does after a batch is unpacked: its padding
              callback (`MVLSTM.get_default_padding_callback()`: 'pre', fixed 10 question /
              40 answer ids, or `--matchzoo-lengths`), `torch.tensor` of each field, then
              `forward`. Word ids given.
  from tokens each distinct text's tokens to ids by its `Vocabulary` unit, then `from ids`.
Two MatchLens figures:
  full path   `evaluation.model_scores` -> `Matcher.score_tokens`, as `python -m matching evaluate`
              runs it: from the same tokens, the pairs bucketed by length, word lookup, padded
              tables, the Bi-LSTM per distinct text, masked cosine, k-max, MLP, scores put back.
  ids known   the same with every text's word ids already known (`known`, as for an upload's
              second model): from ids, like MatchZoo-py's `from ids`.
  file order  `Matcher.score_tokens` called directly with the pairs in file order, not bucketed by
              length (as the sanity checks and word deletion call it): batches pad more.
Tokenising is never timed: both sides start from the same `Token` lists (their lookup keys).

Rounds alternate (each system once per round, the order reversed every other round) after one
warm-up round, so a slow moment of this shared machine hits every system; medians are printed,
and the ratios are of the medians.

Run: python bench/matchzoo.py [--data DIR] [--threads 2] [--rounds 15] [--only SYSTEM ...]
"""

from __future__ import annotations

import argparse
import collections
import collections.abc
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from common import ROOT

from matching.evaluation.dataset import TokenizedList, model_scores, tokenize_lists
from matching.explain.matcher import Matcher
from matching.models.batching import TextCache
from matching.models.mvlstm import MVLSTM
from matching.text.data import read_toks_folder
from matching.training.checkpoint import load_checkpoint

# This file's own folder is first on sys.path when it runs, and its name is the package's: take
# the folder off so `import matchzoo` finds MatchZoo-py (`common`, already imported, put the repo on).
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]
# MatchZoo-py 1.1.1 (its last release) imports `Iterable` from `collections` (its padding callback,
# which its MVLSTM module imports), and Python 3.10 removed that alias (it lives in
# `collections.abc`). Putting the alias back is all it takes; MatchZoo-py's own files are untouched.
collections.Iterable = collections.abc.Iterable  # type: ignore[attr-defined]
try:
    import matchzoo as mz
except ImportError as error:
    sys.exit(f"MatchZoo-py is not installed ({error}): pip install --no-deps -r bench/requirements.txt")

BATCH_SIZE = 256


# ---------------------------------------------------------------- MatchZoo-py's side

def matchzoo_model(matcher: Matcher, vocabulary: Any) -> Any:
    """MatchZoo-py's MVLSTM with the shipped model's sizes, its embedding GloVe 6B 50d by
    `vocabulary`, and the shipped weights copied in."""
    params = matcher.params
    words = matcher.vectors.row_of
    glove = matcher.vectors.matrix
    term_index = vocabulary.state["term_index"]
    matrix = np.zeros((len(term_index), glove.shape[1]), dtype=np.float32)
    rows = np.fromiter((words.get(term, -1) for term in term_index), np.int64, len(term_index))
    indices = np.fromiter(term_index.values(), np.int64, len(term_index))
    matrix[indices[rows >= 0]] = glove[rows[rows >= 0]]
    matrix[1] = matcher.model.unknown_word.vector.detach().numpy()  # its OOV row: the learned unknown vector
    model = mz.models.MVLSTM()
    model.params["task"] = mz.tasks.Ranking()
    model.params["embedding"] = matrix
    model.params["embedding_freeze"] = True
    model.params["hidden_size"] = params.hidden_size
    model.params["num_layers"] = 1
    model.params["top_k"] = params.k
    model.params["mlp_num_layers"] = 0  # no layer of mlp_num_units: in -> fan_out (ReLU) is the one layer
    model.params["mlp_num_units"] = params.mlp_hidden
    model.params["mlp_num_fan_out"] = params.mlp_hidden
    model.params["mlp_activation_func"] = "relu"
    model.params["dropout_rate"] = 0.0
    model.guess_and_fill_missing_params(verbose=0)
    model.build()
    shipped = matcher.model.state_dict()
    lstm = {name.removeprefix("encoder.lstm."): value for name, value in shipped.items()
            if name.startswith("encoder.lstm.")}
    model.left_bilstm.load_state_dict(lstm)
    model.right_bilstm.load_state_dict(lstm)
    model.mlp[0][0].load_state_dict({"weight": shipped["head.hidden.weight"], "bias": shipped["head.hidden.bias"]})
    model.out.load_state_dict({"weight": shipped["head.out.weight"], "bias": shipped["head.out.bias"]})
    return model.eval()


def matchzoo_pairs(lists: Sequence[TokenizedList]) -> list[tuple[int, list, list]]:
    """(question number, question tokens, answer tokens) of every pair, in file order."""
    return [(n, lst.question, answer) for n, lst in enumerate(lists) for answer in lst.candidates if answer]


def matchzoo_batch(chunk: Sequence[tuple[int, list[int], list[int]]]) -> dict[str, Any]:
    """A batch as MatchZoo-py's Dataset unpacks it (before its padding callback)."""
    return {"id_left": [q for q, _, _ in chunk], "text_left": [left for _, left, _ in chunk],
            "length_left": [len(left) for _, left, _ in chunk], "id_right": list(range(len(chunk))),
            "text_right": [right for _, _, right in chunk], "length_right": [len(right) for _, _, right in chunk]}


def matchzoo_tensors(padding: Any, batch: dict[str, Any]) -> dict[str, torch.Tensor]:
    """Its DataLoader's per-batch work: the padding callback, then `torch.tensor` of each field."""
    padding.on_batch_unpacked(batch, None)
    return {key: torch.tensor(value) for key, value in batch.items() if key not in ("id_left", "id_right")}


def matchzoo_predict(model: Any, batches: Sequence[dict[str, torch.Tensor]]) -> np.ndarray:
    """Its `Trainer.predict` loop over ready batches."""
    with torch.no_grad():
        return torch.cat([model(inputs).detach().cpu() for inputs in batches], dim=0).numpy()


# ---------------------------------------------------------------- timing

def alternating_rates(work: dict[str, Callable[[], object]], pairs: int, rounds: int) -> dict[str, list[float]]:
    """Pairs per second of each piece of work in each of `rounds` rounds, after one warm-up round;
    the order of the systems is reversed every other round."""
    rates: dict[str, list[float]] = {name: [] for name in work}
    names = list(work)
    for round_number in range(rounds + 1):
        for name in names if round_number % 2 else reversed(names):
            start = time.perf_counter()
            work[name]()
            if round_number:
                rates[name].append(pairs / (time.perf_counter() - start))
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "wikiqa" / "test",
                        help="a folder of a.toks, b.toks, id.txt, sim.txt (default: WikiQA test)")
    parser.add_argument("--threads", type=int, default=2, help="torch threads, both sides (default 2)")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--matchzoo-lengths", type=int, nargs=2, metavar=("QUESTION", "ANSWER"), default=None,
                        help="pad/cut MatchZoo-py's texts to these fixed lengths instead of its MVLSTM default "
                             "(10 40); 40 60 reads the words MatchLens reads")
    parser.add_argument("--checkpoint", type=Path, default=ROOT / "pretrained" / "mvlstm",
                        help="a shipped MV-LSTM with cosine matching, no gate, no extra matrices")
    parser.add_argument("--only", nargs="+", metavar="SYSTEM", default=None,
                        help="time only these systems (e.g. 'MatchZoo-py forward'), no ratios: to see one side "
                             "alone in its own process")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    matcher = load_checkpoint(args.checkpoint)
    params = matcher.params
    if (type(matcher.model) is not MVLSTM or params.interaction != "cosine" or params.pool_directions
            or params.exact_match != "none"):
        sys.exit(f"{args.checkpoint}: MatchZoo-py's MVLSTM computes a plain cosine MV-LSTM; this model is not one")
    lists, skipped = tokenize_lists(read_toks_folder(args.data))
    pairs = sum(1 for lst in lists for answer in lst.candidates if answer)

    vocabulary = mz.preprocessors.units.Vocabulary()
    vocabulary.fit(list(matcher.vectors.row_of))  # every GloVe word, as the project reads them all
    model = matchzoo_model(matcher, vocabulary)
    padding = (mz.models.MVLSTM.get_default_padding_callback() if args.matchzoo_lengths is None
               else mz.models.MVLSTM.get_default_padding_callback(*args.matchzoo_lengths))
    token_pairs = matchzoo_pairs(lists)

    def to_ids() -> list[tuple[int, list[int], list[int]]]:
        """Each distinct text's ids once (MatchZoo-py preprocesses a DataPack's distinct texts)."""
        questions = [vocabulary.transform([t.key for t in lst.question]) for lst in lists]
        return [(n, questions[n], vocabulary.transform([t.key for t in answer])) for n, _, answer in token_pairs]

    id_pairs = to_ids()
    chunks = [id_pairs[start:start + BATCH_SIZE] for start in range(0, len(id_pairs), BATCH_SIZE)]
    ready = [matchzoo_tensors(padding, matchzoo_batch(chunk)) for chunk in chunks]

    def from_ids(ids: list[tuple[int, list[int], list[int]]]) -> np.ndarray:
        return matchzoo_predict(model, [matchzoo_tensors(padding, matchzoo_batch(ids[s:s + BATCH_SIZE]))
                                        for s in range(0, len(ids), BATCH_SIZE)])

    known = TextCache()
    model_scores(matcher, lists, BATCH_SIZE, known=known)
    work: dict[str, Callable[[], object]] = {
        "MatchZoo-py forward": lambda: matchzoo_predict(model, ready),
        "MatchLens full path": lambda: model_scores(matcher, lists, BATCH_SIZE),
        "MatchZoo-py from ids": lambda: from_ids(id_pairs),
        "MatchLens ids known": lambda: model_scores(matcher, lists, BATCH_SIZE, known=known),
        "MatchZoo-py from tokens": lambda: from_ids(to_ids()),
        "MatchLens file order": lambda: matcher.score_tokens([q for _, q, _ in token_pairs],
                                                             [a for _, _, a in token_pairs], BATCH_SIZE),
    }
    print(f"{pairs:,} pairs ({args.data}), {len(lists)} questions{f', {len(skipped)} skipped' if skipped else ''}; "
          f"batch {BATCH_SIZE}; torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; MatchZoo-py {mz.__version__}; "
          f"{args.rounds} alternating rounds")
    print(f"MatchZoo-py MVLSTM: GloVe {matcher.vectors.dim}d frozen, hidden {model.params['hidden_size']}, "
          f"top_k {model.params['top_k']}, MLP {model.params['mlp_num_fan_out']} relu; padding "
          f"'{padding._pad_word_mode}' fixed {padding._fixed_length_left}/{padding._fixed_length_right}; "
          f"MatchLens {args.checkpoint.name}: reads at most {params.max_question_len}/{params.max_answer_len} "
          "words, unpadded per text")
    if args.only:
        unknown = set(args.only) - set(work)
        if unknown:
            sys.exit(f"--only: unknown system(s) {sorted(unknown)}; the systems: {', '.join(work)}")
        work = {name: run for name, run in work.items() if name in args.only}
    rates = alternating_rates(work, pairs, args.rounds)
    medians = {name: statistics.median(values) for name, values in rates.items()}
    for name, values in rates.items():
        print(f"  {name:24s} median {medians[name]:8,.0f} pairs/s  (min {min(values):,.0f}, max {max(values):,.0f})")
    if args.only:
        return
    print(f"ratio, MatchLens full path / MatchZoo-py forward: "
          f"{medians['MatchLens full path'] / medians['MatchZoo-py forward']:.2f}x")
    print(f"ratio, MatchLens ids known / MatchZoo-py from ids: "
          f"{medians['MatchLens ids known'] / medians['MatchZoo-py from ids']:.2f}x")
    print(f"ratio, MatchLens full path / MatchZoo-py from tokens: "
          f"{medians['MatchLens full path'] / medians['MatchZoo-py from tokens']:.2f}x")
    print(f"ratio, MatchLens file order / MatchZoo-py forward: "
          f"{medians['MatchLens file order'] / medians['MatchZoo-py forward']:.2f}x")


if __name__ == "__main__":
    main()
