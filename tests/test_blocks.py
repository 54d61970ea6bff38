"""The masked building blocks, tested directly on padded batches with garbage in the padding."""

from __future__ import annotations

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from matching.models.blocks import (
    GATES,
    AttentionGate,
    BiLSTMEncoder,
    CosineInteraction,
    IdfTable,
    MLPHead,
    TensorInteraction,
    TunedWords,
    UnknownWordVector,
    cosine_matrix,
    entmax15,
    exact_match_matrix,
    kmax_pool,
    length_mask,
    normalised_entropy,
    sparsemax,
)

lengths_strategy = st.lists(st.integers(1, 7), min_size=1, max_size=5)


def padded(lengths: list[int], dim: int, seed: int, extra: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Random (B, L, dim) vectors whose padding holds large garbage, and the (B,) lengths."""
    generator = torch.Generator().manual_seed(seed)
    width = max(lengths) + extra
    vectors = torch.randn(len(lengths), width, dim, generator=generator)
    lengths_t = torch.tensor(lengths)
    garbage = 100 * torch.randn(len(lengths), width, dim, generator=generator)
    vectors = torch.where(length_mask(lengths_t, width)[..., None], vectors, garbage)
    return vectors, lengths_t


def test_length_mask() -> None:
    assert length_mask(torch.tensor([1, 3, 0]), 3).tolist() == [
        [True, False, False], [True, True, True], [False, False, False]]


def test_unknown_word_vector_replaces_only_unknown_rows() -> None:
    block = UnknownWordVector(3)
    with torch.no_grad():
        block.vector.copy_(torch.tensor([7.0, 8.0, 9.0]))
    vectors = torch.arange(12.0).reshape(1, 4, 3)
    unknown = torch.tensor([[False, True, False, True]])
    out = block(vectors, unknown)
    assert out[0, 1].tolist() == out[0, 3].tolist() == [7.0, 8.0, 9.0]
    assert torch.equal(out[0, 0], vectors[0, 0]) and torch.equal(out[0, 2], vectors[0, 2])


def test_tuned_words_add_their_offset_to_their_words_only_and_learn_it() -> None:
    block = TunedWords(3, 2)
    block.fill(torch.tensor([40, -7, 5]))  # stored sorted, an unknown word's negative id among them
    assert block.ids.tolist() == [-7, 5, 40]
    with torch.no_grad():
        block.offsets.copy_(torch.tensor([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]]))
    vectors = torch.zeros(1, 5, 2)
    ids = torch.tensor([[5, 6, -7, 40, -(2**40)]])  # 6 not tuned; the last is padding
    out = block(vectors, ids)
    assert out[0].tolist() == [[2.0, 2.0], [0.0, 0.0], [1.0, 1.0], [3.0, 3.0], [0.0, 0.0]]
    out.sum().backward()
    assert block.offsets.grad.tolist() == [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]]
    assert torch.equal(TunedWords(0, 2)(vectors, ids), vectors)  # nothing tuned: the vectors as they are


@pytest.mark.parametrize("gate_kind", list(GATES))
@pytest.mark.parametrize("scaling", ["none", "length"])
@given(lengths=lengths_strategy, seed=st.integers(0, 2**16), extra=st.integers(0, 3),
       temperature=st.sampled_from([1.0, 0.3]))
def test_attention_is_a_distribution_over_real_tokens(gate_kind: str, scaling: str, lengths: list[int], seed: int,
                                                        extra: int, temperature: float) -> None:
    torch.manual_seed(seed)
    gate = AttentionGate(6, scaling, gate_kind, temperature)
    with torch.no_grad():
        gate.v.weight.mul_(3.0)  # sharper than the default init, so weights really differ
    vectors, lengths_t = padded(lengths, 6, seed, extra)
    mask = length_mask(lengths_t, vectors.shape[1])
    with torch.no_grad():
        weighted, alpha, _ = gate(vectors, mask)
    assert torch.isfinite(alpha).all() and torch.isfinite(weighted).all()
    assert (alpha >= 0).all()
    assert (alpha[~mask] == 0).all(), "padding takes a share of the attention"
    assert (weighted[~mask] == 0).all()
    torch.testing.assert_close(alpha.sum(-1), torch.ones(len(lengths)), atol=1e-5, rtol=0)
    for row, length in enumerate(lengths):
        # The same sentence alone, unpadded, gets the same attention.
        with torch.no_grad():
            alone_weighted, alone, _ = gate(vectors[row:row + 1, :length], torch.ones(1, length, dtype=torch.bool))
        torch.testing.assert_close(alpha[row, :length], alone[0], atol=1e-6, rtol=1e-5)
        torch.testing.assert_close(weighted[row, :length], alone_weighted[0], atol=1e-5, rtol=1e-5)
        scale = length if scaling == "length" else 1
        expected = vectors[row, :length] * (alpha[row, :length] * scale)[:, None]
        torch.testing.assert_close(weighted[row, :length], expected)


def bisection_entmax15(z: torch.Tensor) -> torch.Tensor:
    """Reference 1.5-entmax of one unpadded row: p = max(z/2 - tau, 0)^2, tau by bisection."""
    half = z.double() / 2
    low, high = float(half.max()) - 1.0, float(half.max())
    for _ in range(200):
        tau = (low + high) / 2
        total = float(torch.clamp(half - tau, min=0).pow(2).sum())
        low, high = (tau, high) if total > 1 else (low, tau)
    return torch.clamp(half - (low + high) / 2, min=0).pow(2).float()


def projection_sparsemax(z: torch.Tensor) -> torch.Tensor:
    """Reference sparsemax of one unpadded row: the Euclidean projection onto the simplex, by bisection."""
    low, high = float(z.max()) - 1.0, float(z.max())
    for _ in range(200):
        tau = (low + high) / 2
        low, high = (tau, high) if float(torch.clamp(z.double() - tau, min=0).sum()) > 1 else (low, tau)
    return torch.clamp(z - (low + high) / 2, min=0)


@pytest.mark.parametrize(("gate", "reference"), [(sparsemax, projection_sparsemax), (entmax15, bisection_entmax15)])
@given(lengths=lengths_strategy, seed=st.integers(0, 2**16), extra=st.integers(0, 3),
       scale=st.sampled_from([0.1, 1.0, 5.0]))
def test_sparse_gates_match_their_definition_and_pass_gradients(gate, reference, lengths: list[int],  # type: ignore[no-untyped-def]
                                                                 seed: int, extra: int, scale: float) -> None:
    generator = torch.Generator().manual_seed(seed)
    width = max(lengths) + extra
    logits = (scale * torch.randn(len(lengths), width, generator=generator)).requires_grad_()
    mask = length_mask(torch.tensor(lengths), width)
    alpha = gate(logits, mask)
    for row, length in enumerate(lengths):
        torch.testing.assert_close(alpha[row, :length], reference(logits[row, :length].detach()),
                                   atol=1e-5, rtol=0)
    assert (alpha[~mask] == 0).all()
    alpha.pow(2).sum().backward()
    assert logits.grad is not None and torch.isfinite(logits.grad).all()
    assert (logits.grad[~mask] == 0).all(), "padding logits receive a gradient"


def test_sparse_gates_give_exact_zeros_and_softmax_does_not() -> None:
    logits = torch.tensor([[3.0, 0.0, -2.0, 1.0]])
    mask = torch.ones_like(logits, dtype=torch.bool)
    assert (sparsemax(logits, mask) == 0).sum() == 3
    assert (entmax15(logits, mask) == 0).sum() >= 1
    assert (GATES["softmax"](logits, mask) > 0).all()


def test_temperature_sharpens_and_zero_init_starts_uniform() -> None:
    vectors, lengths = padded([5], 4, 1)
    mask = length_mask(lengths, 5)
    torch.manual_seed(0)
    warm = AttentionGate(4, "none", "softmax", 1.0)
    torch.manual_seed(0)
    cold = AttentionGate(4, "none", "softmax", 0.25)
    with torch.no_grad():
        entropy_warm = normalised_entropy(warm(vectors, mask)[1], mask)
        entropy_cold = normalised_entropy(cold(vectors, mask)[1], mask)
        _, uniform, _ = AttentionGate(4, "none", "sparsemax", init="zero")(vectors, mask)
    assert entropy_cold < entropy_warm < 1
    torch.testing.assert_close(uniform, torch.full((1, 5), 0.2))
    torch.testing.assert_close(normalised_entropy(uniform, mask), torch.ones(1))


@pytest.mark.parametrize("override", ["uniform", "permuted"])
def test_gate_override_keeps_a_distribution_over_real_tokens(override: str) -> None:
    torch.manual_seed(0)
    gate = AttentionGate(6, "length", "softmax", 0.2)
    vectors, lengths = padded([4, 2, 6], 6, 3, extra=1)
    mask = length_mask(lengths, vectors.shape[1])
    with torch.no_grad():
        _, own, _ = gate(vectors, mask)
        gate.override, gate.override_seed = override, 5
        weighted, alpha, _ = gate(vectors, mask)
    assert (alpha[~mask] == 0).all() and (weighted[~mask] == 0).all()
    torch.testing.assert_close(alpha.sum(-1), torch.ones(3))
    for row, length in enumerate(lengths.tolist()):
        if override == "uniform":
            torch.testing.assert_close(alpha[row, :length], torch.full((length,), 1 / length))
        else:  # the same weights, in another order
            torch.testing.assert_close(alpha[row, :length].sort().values, own[row, :length].sort().values)


def test_exact_match_matrix_and_idf_table() -> None:
    q_ids = torch.tensor([[5, 7, -9, -(2**40)]])
    a_ids = torch.tensor([[7, 5, 5, -9, -(2**41)]])
    table = IdfTable(2)
    table.fill(torch.tensor([7, 5]), torch.tensor([0.5, 0.1]), 1.0)
    weights = table(q_ids)
    assert weights.tolist() == [[pytest.approx(0.1), 0.5, 1.0, 1.0]]
    binary = exact_match_matrix(q_ids, a_ids)
    assert binary[0].tolist() == [[0, 1, 1, 0, 0], [1, 0, 0, 0, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 0]]
    weighted = exact_match_matrix(q_ids, a_ids, weights)
    torch.testing.assert_close(weighted, binary * weights[:, :, None])


def test_length_scaling_has_mean_weight_one() -> None:
    torch.manual_seed(0)
    gate = AttentionGate(4, "length")
    vectors, lengths = padded([3, 5], 4, 0, extra=2)
    mask = length_mask(lengths, vectors.shape[1])
    with torch.no_grad():
        ones = torch.ones_like(vectors)
        weighted, alpha, _ = gate(ones, mask)
    # With all-ones input every output value is alpha_t * m, whose mean over real tokens is 1.
    means = weighted[..., 0].sum(-1) / lengths
    torch.testing.assert_close(means, torch.ones(2))


# (64, 16): one padded run; (2, 16): padded runs of 2 rows by length; (2, 1): one unpadded run per length
@pytest.mark.parametrize(("rows_per_run", "uniform_rows"), [(64, 16), (2, 16), (2, 1)])
@given(lengths=lengths_strategy, seed=st.integers(0, 2**16), extra=st.integers(0, 3))
def test_bilstm_states_ignore_padding(rows_per_run: int, uniform_rows: int, lengths: list[int], seed: int,
                                      extra: int) -> None:
    torch.manual_seed(seed)
    encoder = BiLSTMEncoder(5, 3, rows_per_run, uniform_rows)
    vectors, lengths_t = padded(lengths, 5, seed, extra)
    with torch.no_grad():
        states = encoder(vectors, lengths_t)
    forward, backward = states[..., :3], states[..., 3:]
    mask = length_mask(lengths_t, vectors.shape[1])
    assert forward.shape == backward.shape == (len(lengths), vectors.shape[1], 3)
    assert (forward[~mask] == 0).all() and (backward[~mask] == 0).all()
    for row, length in enumerate(lengths):
        with torch.no_grad():
            alone = encoder(vectors[row:row + 1, :length], torch.tensor([length]))
        torch.testing.assert_close(states[row, :length], alone[0], atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize(("rows_per_run", "uniform_rows"), [(64, 16), (2, 1), (3, 2)])
def test_bilstm_then_maps_each_run_as_the_whole_would_be_mapped(rows_per_run: int, uniform_rows: int) -> None:
    torch.manual_seed(0)
    encoder = BiLSTMEncoder(4, 3, rows_per_run=rows_per_run, uniform_rows=uniform_rows)
    vectors, lengths = padded([5, 1, 3, 7, 2, 7, 4, 7, 3], 4, 0, extra=2)
    unit = CosineInteraction().side
    with torch.no_grad():
        whole = unit(encoder(vectors, lengths), "answer")
        by_run = encoder(vectors, lengths, then=lambda states: unit(states, "answer"))
    assert torch.equal(whole, by_run)


def test_bilstm_matches_torch_packed_sequences() -> None:
    """The unpacked encoder gives the states nn.LSTM gives on packed sequences (the textbook way)."""
    torch.manual_seed(0)
    encoder = BiLSTMEncoder(4, 3, rows_per_run=3, uniform_rows=2)  # the two 7s unpadded, the rest in runs of 3
    vectors, lengths = padded([5, 1, 3, 7, 2, 7, 4], 4, 0, extra=2)
    packed = torch.nn.utils.rnn.pack_padded_sequence(vectors, lengths, batch_first=True, enforce_sorted=False)
    with torch.no_grad():
        states = encoder(vectors, lengths)
        textbook, _ = encoder.lstm(packed)
    textbook, _ = torch.nn.utils.rnn.pad_packed_sequence(textbook, batch_first=True, total_length=vectors.shape[1])
    torch.testing.assert_close(states, textbook, atol=1e-6, rtol=1e-5)


def test_cosine_matrix_values_and_zero_vectors() -> None:
    q = torch.tensor([[[1.0, 0.0], [0.0, 0.0]]])
    a = torch.tensor([[[2.0, 0.0], [-1.0, 1.0], [0.0, 3.0]]])
    matrix = cosine_matrix(q, a)
    half = 2 ** -0.5
    torch.testing.assert_close(matrix, torch.tensor([[[1.0, -half, 0.0], [0.0, 0.0, 0.0]]]))


def test_tensor_interaction_shape_and_relu() -> None:
    torch.manual_seed(0)
    block = TensorInteraction(4, 3)
    out = block(torch.randn(2, 5, 4), torch.randn(2, 6, 4))
    assert out.shape == (2, 3, 5, 6) and (out >= 0).all()


def brute_force_top_k(matrix: torch.Tensor, m: int, n: int, k: int) -> list[tuple[float, int, int]]:
    """Real cells sorted by value, ties in reading order (i, j): the first k."""
    cells = [(float(matrix[i, j]), i, j) for i in range(m) for j in range(n)]
    return sorted(cells, key=lambda cell: (-cell[0], cell[1], cell[2]))[:k]


@given(shapes=st.lists(st.tuples(st.integers(1, 4), st.integers(1, 5)), min_size=1, max_size=4),
       count=st.integers(1, 3), k=st.integers(1, 12), seed=st.integers(0, 2**16),
       filler=st.sampled_from([0.0, -1.0, 0.25]))
def test_kmax_pool_takes_the_k_largest_real_cells(shapes: list[tuple[int, int]], count: int, k: int,
                                                  seed: int, filler: float) -> None:
    generator = torch.Generator().manual_seed(seed)
    q_len, a_len = torch.tensor([s[0] for s in shapes]), torch.tensor([s[1] for s in shapes])
    width_m, width_n = int(q_len.max()) + 1, int(a_len.max())
    # Few distinct values, so ties are common; padding cells are larger than any real one.
    matrices = torch.randint(-3, 4, (len(shapes), count, width_m, width_n), generator=generator).float()
    cell_mask = length_mask(q_len, width_m)[:, :, None] & length_mask(a_len, width_n)[:, None, :]
    matrices = torch.where(cell_mask[:, None], matrices, torch.full_like(matrices, 99.0))
    pooled = kmax_pool(matrices, cell_mask, k, filler)
    assert pooled.values.shape == pooled.rows.shape == pooled.filler.shape == (len(shapes), count, k)
    assert pooled.flat().shape == (len(shapes), count * k)
    for b, (m, n) in enumerate(shapes):
        for c in range(count):
            expected = brute_force_top_k(matrices[b, c], m, n, k)
            real = len(expected)
            assert real == min(k, m * n)
            assert pooled.values[b, c, :real].tolist() == [v for v, _, _ in expected]
            assert pooled.rows[b, c, :real].tolist() == [i for _, i, _ in expected]
            assert pooled.cols[b, c, :real].tolist() == [j for _, _, j in expected]
            assert not pooled.filler[b, c, :real].any()
            # Fewer than k real cells: the rest are flagged fillers at (-1, -1).
            assert pooled.filler[b, c, real:].all()
            assert (pooled.values[b, c, real:] == filler).all()
            assert (pooled.rows[b, c, real:] == -1).all() and (pooled.cols[b, c, real:] == -1).all()


@given(seed=st.integers(0, 2**16), batch=st.integers(1, 6))
def test_mlp_contributions_split_the_score_exactly(seed: int, batch: int) -> None:
    torch.manual_seed(seed)
    head = MLPHead(7, 5)
    pooled = torch.randn(batch, 7, requires_grad=True)
    score = head(pooled)
    contributions, bias = head.contributions(pooled)
    torch.testing.assert_close(contributions.sum(-1) + bias, score, atol=1e-5, rtol=0)
    # Contributions are gradient x input (the head is piecewise linear).
    (gradient,) = torch.autograd.grad(score.sum(), pooled)
    torch.testing.assert_close(contributions, gradient * pooled, atol=1e-6, rtol=1e-5)


def test_an_unknown_interaction_fails_loudly() -> None:
    from matching.models.blocks import make_interaction

    with pytest.raises(ValueError, match="unknown interaction 'dot'"):
        make_interaction("dot", 8, 2)
