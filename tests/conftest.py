"""Shared fixtures: the GloVe vectors, tiny seeded models and tiny invented data.

Nothing here reads the shared WikiQA files: every data set is written by the tests
themselves into a temporary folder.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, settings

from matching.explain.explanation import Explanation, matrix_names
from matching.explain.matcher import Matcher
from matching.models import PairBatch, build_model, family_of
from matching.models.params import ModelParams
from matching.models.parts import Part
from matching.text.data import RankingList, write_toks_folder
from matching.text.embeddings import WordVectors, load_glove
from matching.text.tokenized import TokenizedList, tokenize_lists
from matching.training.cards import ModelCard
from matching.training.trainer import TrainingConfig, TrainingSettings, train_and_card

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from common import free_port  # noqa: E402,F401 - the bench's, shared by the tests that start servers

# Deterministic, fast property tests: no example database, no wall-clock deadline
# (another process may be training on this machine), a modest number of examples.
settings.register_profile(
    "matchlens", max_examples=25, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.load_profile("matchlens")

# Tiny tensors: threads only add contention (training sets this too, for reproducibility).
torch.set_num_threads(1)


@pytest.fixture(autouse=True, scope="session")
def _scores_cache_of_the_tests(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The teachers' scores the tests keep (`training.score_cache`) go to a folder of the test run, not the home."""
    import os

    from matching.training.score_cache import CACHE_VARIABLE

    os.environ[CACHE_VARIABLE] = str(tmp_path_factory.mktemp("cache"))


FIRST = "test_browser_deeplinks"
"""Thirty browser contexts at once (the longest test): started first, beside the tests without a browser;
the other browser modules go last (beside one another, a browser test takes twice as long or more)."""


def _order(item: pytest.Item) -> int:
    module = item.module.__name__  # type: ignore[attr-defined]
    return 0 if module == FIRST else 2 if module.startswith("test_browser") else 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under xdist (pyproject: -n 2 --dist loadgroup) the tests of a module that share a module-scoped fixture
    (a server, a browser, a kernel) run on one worker, which sets it up once; the others are spread one by one.
    The deep-link test goes first, the other browser tests last (`_order`)."""
    items.sort(key=_order)
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        if info is not None and any(definition.scope == "module" for definitions in info.name2fixturedefs.values()
                                    for definition in definitions):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))  # type: ignore[attr-defined]

TINY = {"hidden_size": 4, "k": 5, "mlp_hidden": 8, "tensor_slices": 2,
        "max_question_len": 12, "max_answer_len": 16}
"""Small enough to build and run in milliseconds, big enough to exercise every path."""
TINY_PYRAMID = {"kernel_count": 3, "pool_rows": 2, "pool_cols": 3, "mlp_hidden": 8,
                "max_question_len": 12, "max_answer_len": 16}
TINY_MCAN = {"projection_size": 6, "affinity_size": 5, "fm_factors": 3, "hidden_size": 4, "highway_size": 7,
             "max_question_len": 12, "max_answer_len": 16}
TINY_CDSSM = {"filters": 5, "hidden_size": 6, "max_question_len": 12, "max_answer_len": 16}
TINY_DUET = {"local_filters": 3, "distributed_filters": 4, "answer_windows": 4, "mlp_hidden": 5,
             "max_question_len": 12, "max_answer_len": 16}
TINY_ARCII = {"ngram_filters": 4, "kernel_count": 3, "pool_rows": 2, "pool_cols": 3, "mlp_hidden": 8,
              "max_question_len": 12, "max_answer_len": 16}
TINY_BY_FAMILY = {"mvlstm": TINY, "amvlstm": TINY, "matchpyramid": TINY_PYRAMID, "mcan": TINY_MCAN,
                  "cdssm": TINY_CDSSM, "duet": TINY_DUET, "arcii": TINY_ARCII}

# Every model variant the core can build, named for test ids.
VARIANTS: dict[str, dict[str, object]] = {
    "cosine": {"family": "mvlstm", "interaction": "cosine"},
    "bilinear": {"family": "mvlstm", "interaction": "bilinear"},
    "tensor": {"family": "mvlstm", "interaction": "tensor"},
    "amv-question": {"family": "amvlstm", "attention": "question", "attention_scaling": "length"},
    "amv-question-directions": {"family": "amvlstm", "attention": "question", "attention_scaling": "length",
                                "pool_directions": True},
    "amv-answer-none": {"family": "amvlstm", "attention": "answer", "attention_scaling": "none"},
    "amv-both-tensor": {"family": "amvlstm", "attention": "both", "attention_scaling": "none",
                        "interaction": "tensor"},
    "amv-question-sparsemax": {"family": "amvlstm", "attention": "question", "attention_gate": "sparsemax",
                               "attention_temperature": 0.5},
    "amv-both-entmax": {"family": "amvlstm", "attention": "both", "attention_gate": "entmax15",
                        "attention_scaling": "none", "attention_init": "zero"},
    "cosine-exact": {"family": "mvlstm", "exact_match": "binary"},
    "amv-question-exact-idf": {"family": "amvlstm", "attention": "question", "pool_directions": True,
                               "exact_match": "idf", "idf_words": 3},
    "amv-both-exact-attention": {"family": "amvlstm", "attention": "both", "attention_gate": "sparsemax",
                                 "exact_match": "attention"},
    "pyramid-entmax-question": {"family": "matchpyramid", "attention": "question", "attention_gate": "entmax15"},
    "pyramid-dot": {"family": "matchpyramid"},
    "pyramid-cosine": {"family": "matchpyramid", "matching": "cosine"},
    "pyramid-question": {"family": "matchpyramid", "attention": "question"},
    "pyramid-both-none": {"family": "matchpyramid", "attention": "both", "attention_scaling": "none"},
    "pyramid-cosine-answer": {"family": "matchpyramid", "attention": "answer", "matching": "cosine"},
    "mcan-fm": {"family": "mcan", "compression": "fm"},
    "mcan-nn": {"family": "mcan", "compression": "nn"},
    "mcan-sm": {"family": "mcan", "compression": "sm"},
    "cosine-exact-keywords": {"family": "mvlstm", "exact_match": "idf", "idf_words": 3, "keywords": True,
                              "keyword_words": 3},
    "pyramid-keywords": {"family": "matchpyramid", "keywords": True, "keyword_words": 3},
    "mcan-keywords": {"family": "mcan", "keywords": True, "keyword_words": 3, "exact_match": True},
    "cdssm": {"family": "cdssm"},
    "cdssm-question": {"family": "cdssm", "attention": "question"},
    "cdssm-both-keywords": {"family": "cdssm", "attention": "both", "keywords": True, "keyword_words": 3},
    "duet": {"family": "duet"},
    "duet-answer": {"family": "duet", "attention": "answer"},
    "arcii": {"family": "arcii"},
    "arcii-question-keywords": {"family": "arcii", "attention": "question", "keywords": True, "keyword_words": 3},
    "amv-question-tuned": {"family": "amvlstm", "attention": "question", "tune_vectors": True, "tuned_words": 4},
    "pyramid-tuned-keywords": {"family": "matchpyramid", "tune_vectors": True, "tuned_words": 4, "keywords": True,
                               "keyword_words": 3},
}

TUNED_WORDS = ["the", "tower", "paris", "zzqxjvtk"]
"""The words the tiny tuned variants fine-tune (one of them unknown to GloVe)."""



def tiny_params(family: str = "mvlstm", **overrides: object) -> ModelParams:
    """A tiny parameter set of the given family (overrides win over the family's tiny sizes)."""
    return family_of(family).params_type(**{**TINY_BY_FAMILY[family], **overrides})  # type: ignore[arg-type]


def build_matcher(vectors: WordVectors, seed: int = 0, name: str = "tiny", **overrides: object) -> Matcher:
    """A seeded tiny model with non-trivial weights everywhere.

    The shared unknown-word vector starts at zero; it is randomised here so that
    unknown words are not silently invisible to the invariants under test.
    """
    torch.manual_seed(seed)
    model = build_model(tiny_params(**overrides))
    with torch.no_grad():
        model.unknown_word.vector.normal_(0.0, 0.5)
    idf = getattr(model, "idf", None)
    if idf is not None:  # a small IDF table: common words count less than the rest
        words = ["the", "is", "of"][: model.params.idf_words]  # type: ignore[attr-defined]
        idf.fill(torch.from_numpy(vectors.key_ids(words)), torch.linspace(0.1, 0.3, len(words)), 1.0)
    if model.keywords is not None:  # the same small table, and weights that make each feature count
        words = ["the", "is", "of"][: model.params.keyword_words]
        model.keywords.fill(torch.from_numpy(vectors.key_ids(words)), torch.linspace(0.1, 0.3, len(words)), 9.0)
        with torch.no_grad():
            weights = model.keywords.weights  # three features, or more with the list and answer-type switches
            weights.copy_(torch.tensor([0.5, -0.25, 0.75, 2.0, 1.5, -1.0, 0.25, 1.0, -0.5, 0.3][: weights.numel()]))
    if model.tuned_words is not None:  # offsets on a few words, one of them unknown
        model.tuned_words.fill(torch.from_numpy(vectors.key_ids(TUNED_WORDS[: model.params.tuned_words])))
        with torch.no_grad():
            model.tuned_words.offsets.normal_(0.0, 0.5)
    return Matcher(name, model, vectors)


MatcherFactory = Callable[..., Matcher]


@pytest.fixture(scope="session")
def vectors() -> WordVectors:
    return load_glove()


@pytest.fixture(scope="session")
def make_matcher(vectors: WordVectors) -> MatcherFactory:
    """make_matcher(seed=0, name="tiny", family=..., interaction=..., attention=..., ...)."""

    def make(seed: int = 0, name: str = "tiny", **overrides: object) -> Matcher:
        return build_matcher(vectors, seed, name, **overrides)

    return make


@pytest.fixture(scope="session", params=list(VARIANTS), ids=list(VARIANTS))
def variant_matcher(request: pytest.FixtureRequest, vectors: WordVectors) -> Matcher:
    """One tiny matcher per model variant (session-scoped: built once each)."""
    return build_matcher(vectors, 7, request.param, **VARIANTS[request.param])


# --- tiny invented ranking data -------------------------------------------------------

FACTS = [
    ("where is the eiffel tower", "the eiffel tower is in paris", "tower"),
    ("who wrote hamlet", "hamlet was written by william shakespeare", "play"),
    ("what is the capital of japan", "tokyo is the capital of japan", "city"),
    ("how many legs does a spider have", "a spider has eight legs", "insect"),
    ("what color is the sky", "the sky is blue on a clear day", "weather"),
    ("when did world war two end", "world war two ended in 1945", "war"),
    ("what do bees make", "bees make honey from nectar", "honey"),
    ("who painted the mona lisa", "the mona lisa was painted by leonardo da vinci", "museum"),
    ("what is the largest ocean", "the pacific is the largest ocean on earth", "sea"),
    ("how hot is the sun", "the surface of the sun is about 5500 degrees", "star"),
    ("what language is spoken in brazil", "portuguese is spoken in brazil", "country"),
    ("who invented the telephone", "alexander graham bell invented the telephone", "phone"),
]
DISTRACTORS = [
    "the river flows north through the valley",
    "many people enjoy music in the evening",
    "the company was founded in a small garage",
]


def toy_lists(start: int = 0, stop: int = len(FACTS)) -> list[RankingList]:
    """Invented questions: one correct candidate among distractors, not always first."""
    lists = []
    for n in range(start, stop):
        question, answer, topic = FACTS[n]
        wrong = [f"the {topic} is mentioned in {d}" for d in DISTRACTORS]
        position = n % 4
        candidates = wrong[:position] + [answer] + wrong[position:]
        labels = tuple(int(c == answer) for c in candidates)
        lists.append(RankingList(f"Q{n}", question, tuple(candidates), labels))
    return lists


@pytest.fixture(scope="session")
def toy_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder with train/ (8 questions), dev/ (2) and test/ (2)."""
    root = tmp_path_factory.mktemp("toy-wikiqa")
    write_toks_folder(root / "train", toy_lists(0, 8))
    write_toks_folder(root / "dev", toy_lists(8, 10))
    write_toks_folder(root / "test", toy_lists(10, 12))
    return root


# --- invariants every explanation must satisfy ----------------------------------------

def assert_explanation_invariants(explanation: Explanation, matcher: Matcher) -> None:
    """Attention, matrices, pooled cells and contributions agree with each other and the model."""
    params = matcher.params
    m, n = len(explanation.seen_question_tokens), len(explanation.seen_answer_tokens)
    assert m == min(len(explanation.question_tokens), params.max_question_len)
    assert n == min(len(explanation.answer_tokens), params.max_answer_len)
    assert np.isfinite(explanation.score)
    assert explanation.family == params.family
    for side, attention, length in (("question", explanation.question_attention, m),
                                    ("answer", explanation.answer_attention, n)):
        if side not in params.attended_sides:
            assert attention is None
            continue
        assert attention is not None and attention.shape == (length,)
        assert (attention >= 0).all()
        assert abs(float(attention.sum()) - 1.0) < 1e-5
    names = matrix_names(params)
    assert list(explanation.interaction_matrices) == names
    assert list(explanation.cell_contributions) in ([], names)
    for matrix in (*explanation.interaction_matrices.values(), *explanation.display_matrices.values(),
                   *explanation.cell_contributions.values()):
        assert matrix.shape == (m, n) and np.isfinite(matrix).all()
    steps = explanation.steps
    assert steps.question.words.shape == (m, params.embedding_dim)
    assert steps.answer.gated_words.shape[0] == n
    for name, (question, answer) in explanation.all_word_weights.items():
        for weights, length in ((question, m), (answer, n)):
            if weights is not None:  # every named weighting is a distribution over the real words
                assert weights.shape == (length,) and (weights >= 0).all(), name
                assert abs(float(weights.sum()) - 1.0) < 1e-5, name
    if explanation.channels is not None:
        assert explanation.channels.question.shape == (m, len(explanation.channels.names))
        assert explanation.channels.answer.shape == (n, len(explanation.channels.names))
        assert np.isfinite(explanation.channels.question).all() and np.isfinite(explanation.channels.answer).all()
    if not explanation.has(Part.POOLED_CELLS):  # no exact split over cells: nothing claims one
        assert explanation.pooled_cells == () and explanation.bias_contribution is None
        assert explanation.cell_contributions == {} and explanation.cell_bias is None
        return
    cells = explanation.pooled_cells
    assert [c.slot for c in cells] == list(range(len(cells)))
    if hasattr(params, "k"):
        assert_kmax_cells(explanation, params)
    else:
        assert_dynamic_pooling_cells(explanation)
    assert steps.answer.gated_words.shape == (n, params.embedding_dim)
    # The pooled values through the model's own MLP, on the model's device, give the score back ...
    mlp_input = torch.from_numpy(explanation.mlp_input)[None].to(matcher.device)
    with torch.no_grad():
        hidden = matcher.model.head.hidden(mlp_input).cpu()
        replay = float(matcher.model.head(mlp_input)[0])
    assert abs(replay - explanation.learned_score) < 1e-5
    np.testing.assert_allclose(steps.hidden, hidden[0].numpy(), atol=1e-5)
    # ... and both decompositions split it exactly, with the keyword term where the model has one: over the
    # pooled slots and over the matrix cells.
    keywords = explanation.keyword_score
    assert bool(explanation.keyword_terms) == params.keywords
    total = sum(cell.contribution for cell in cells) + explanation.bias_contribution + keywords
    assert abs(total - explanation.score) < 1e-5
    cell_total = sum(float(v.sum(dtype=np.float64)) for v in explanation.cell_contributions.values())
    assert abs(cell_total + explanation.cell_bias + keywords - explanation.score) < 1e-5


def assert_kmax_cells(explanation: Explanation, params: Any) -> None:
    """k-max pooling: the k largest real cells of each matrix, ties in reading order, fillers last."""
    m, n = len(explanation.seen_question_tokens), len(explanation.seen_answer_tokens)
    cells = explanation.pooled_cells
    assert len(cells) == params.pooled_size
    real_count = min(params.k, m * n)
    for c, name in enumerate(matrix_names(params)):
        matrix = explanation.interaction_matrices[name]
        own = cells[c * params.k:(c + 1) * params.k]
        assert [cell.matrix for cell in own] == [name] * params.k == [cell.group for cell in own]
        assert [cell.rank for cell in own] == list(range(1, params.k + 1))
        expected = sorted(((float(matrix[i, j]), i, j) for i in range(m) for j in range(n)),
                          key=lambda cell: (-cell[0], cell[1], cell[2]))[:params.k]
        real, fillers = own[:real_count], own[real_count:]
        assert [(cell.value, cell.i, cell.j) for cell in real] == expected
        assert not any(cell.filler for cell in real)
        for cell in real:
            assert cell.i is not None and cell.j is not None
            assert 0 <= cell.i < m and 0 <= cell.j < n
            assert matrix[cell.i, cell.j] == np.float32(cell.value)
        for cell in fillers:
            assert cell.filler and cell.i is None and cell.j is None
            assert cell.value == params.filler_value
    # A cell's contribution is the sum of the slots that read it.
    expected_cells = {name: np.zeros((m, n)) for name in explanation.cell_contributions}
    for cell in cells:
        if not cell.filler:
            expected_cells[cell.matrix][cell.i, cell.j] += cell.contribution
    for name, values in explanation.cell_contributions.items():
        np.testing.assert_allclose(values, expected_cells[name], atol=1e-6)


def assert_dynamic_pooling_cells(explanation: Explanation) -> None:
    """Dynamic pooling: each value is the maximum of its filter's feature map over a window of real cells."""
    m, n = len(explanation.seen_question_tokens), len(explanation.seen_answer_tokens)
    features = explanation.steps.features
    assert features is not None and features.shape[1:] == (m, n)
    windows = set()
    for cell in explanation.pooled_cells:
        assert not cell.filler and cell.window is not None and cell.i is not None and cell.j is not None
        row0, row1, col0, col1 = cell.window
        assert 0 <= row0 < row1 <= m and 0 <= col0 < col1 <= n
        assert row0 <= cell.i < row1 and col0 <= cell.j < col1
        feature = features[int(cell.group.split()[-1]) - 1]
        assert feature[cell.i, cell.j] == np.float32(cell.value) == feature[row0:row1, col0:col1].max()
        windows.add(cell.window)
    # The windows cover every real cell.
    covered = np.zeros((m, n), dtype=bool)
    for row0, row1, col0, col1 in windows:
        covered[row0:row1, col0:col1] = True
    assert covered.all()


# --- one tiny trained model, shared by the training, card and CLI tests -------------------

def tiny_config(seed: int = 3, name: str = "tiny", **overrides: object) -> TrainingConfig:
    """A tiny model trained for at most two epochs on the toy data."""
    settings = TrainingSettings(seed=seed, max_epochs=2, patience=4, batch_size=8, max_seconds=120.0)
    return TrainingConfig(name=name, params=tiny_params(**overrides), settings=settings,
                          description="a tiny test model", paper={"system": "paper model", "MAP": 0.6, "MRR": 0.62})


SECTION = ("who conquered the achaemenid empire in 330 bc",
           ["The Achaemenid Empire was an ancient Iranian empire founded by Cyrus the Great.",
            "The Achaemenid Empire was divided into provinces called satrapies.",
            "It came to an end in 330 BC, when Alexander the Great conquered its territories.",
            "The Achaemenid Empire built the Royal Road from Sardis to Susa."])
"""A question written from one sentence of a section: the subject every sentence names, the answer "It ..."."""


def assert_every_path_keeps_each_pairs_list(matcher: Matcher, explained: list[Explanation], folder: Path,
                                            vectors: WordVectors) -> Matcher:
    """For a model that reads each pair's list (`explained`: its explanations of SECTION): scored alone, with another
    list in between and the pairs in another order, each pair scores as in its own list's traced pass; so do the
    toy lists through `model_scores`, and the checkpoint loaded back (returned)."""
    from matching.evaluation.dataset import model_scores
    from matching.text.tokens import tokenize
    from matching.training.checkpoint import load_checkpoint, save_checkpoint

    question, candidates = tokenize(SECTION[0]), [tokenize(c) for c in SECTION[1]]
    other = tokenize("where is susa")
    questions = [question, other, question, question, other, question]
    answers = [candidates[3], candidates[0], candidates[1], candidates[0], candidates[2], candidates[2]]
    scores = matcher.score_tokens(questions, answers, batch_size=2)
    by_candidate = {id(c): e.score for c, e in zip(candidates, explained, strict=True)}
    for n in (0, 2, 3, 5):
        assert scores[n] == pytest.approx(by_candidate[id(answers[n])], abs=1e-5)
    lists, _ = tokenize_lists(toy_lists(0, 3))
    for t, found in zip(lists, model_scores(matcher, lists), strict=True):
        assert found.tolist() == pytest.approx([e.score for e in matcher.explain_tokens(t.question, t.candidates)],
                                               abs=1e-5)
    save_checkpoint(matcher, folder, {})
    loaded = load_checkpoint(folder, vectors)
    assert [e.score for e in loaded.explain(*SECTION)] == pytest.approx([e.score for e in explained], abs=1e-6)
    return loaded


def trained_with_a_batch(config: TrainingConfig, vectors: WordVectors
                         ) -> tuple[Matcher, PairBatch, list[TokenizedList], list[tuple[int, int]]]:
    """A tiny model trained on toy lists 0-5 (dev 6-8); the training batch of the first three (hinge) units of toy
    lists 0-3 as it would train, with those lists and the (list, candidate) of each row of the batch."""
    from matching.training.trainer import _Batches, train

    matcher, log = train(config, toy_lists(0, 6), toy_lists(6, 9), vectors, show_progress=False)
    assert log and config.settings.loss == "hinge"  # a chunk's units are (question, right, wrong): the right first
    lists, _ = tokenize_lists(toy_lists(0, 4))
    answers: list[list[Any]] = [list(t.candidates) for t in lists]
    batches = _Batches(lists, [t.question for t in lists], answers, config.settings, matcher.params, vectors)
    chunk = batches.units[:3]
    batch, _ = batches.batch(chunk)
    return matcher, batch, lists, [(n, p) for n, p, _ in chunk] + [(n, q) for n, _, q in chunk]


@pytest.fixture(scope="session")
def trained(toy_data: Path, vectors: WordVectors) -> tuple[Matcher, ModelCard]:
    """(matcher, card) of train_and_card on the toy data."""
    return train_and_card(tiny_config(), toy_data, vectors, show_progress=False)
