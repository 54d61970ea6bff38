"""Tokenisation keeps the person's own text: offsets, zero-width characters, limits."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from matching.text.embeddings import WordVectors
from matching.text.tokens import (
    KEY_CODES,
    MAX_TEXT_CHARS,
    NO_CODE,
    KeyCodes,
    TextError,
    Token,
    Tokens,
    lookup_key,
    mark_truncated,
    token_codes,
    tokenize,
)


def assert_offsets(text: str, tokens: list[Token]) -> None:
    previous_end = 0
    for token in tokens:
        assert text[token.start:token.end] == token.text
        assert token.start >= previous_end, "tokens overlap or are out of order"
        assert token.key and token.key == token.key.strip()
        previous_end = token.end


@given(st.text(max_size=120))
def test_offsets_map_back_to_the_original_text(text: str) -> None:
    tokens = tokenize(text)
    assert_offsets(text, tokens)
    assert not any(t.unknown or t.truncated for t in tokens)


@pytest.mark.parametrize("text", ["", " ", "\t\n  \r\n", "\u200b", "\u200b \u200d\ufeff", "\u00a0\u3000"])
def test_blank_and_zero_width_texts_have_no_words(text: str) -> None:
    assert tokenize(text) == []


def test_zero_width_characters_are_kept_in_the_text_but_not_the_key() -> None:
    text = "hello wor\u200bld\u00ad"
    tokens = tokenize(text)
    assert_offsets(text, tokens)
    assert [t.key for t in tokens] == ["hello", "world"]
    assert tokens[1].text == "wor\u200bld\u00ad"


def test_keys_are_lowercased_and_nfkc_normalised() -> None:
    assert lookup_key("ＰＡＲＩＳ") == "paris"
    assert lookup_key("Ca\u200bfé") == "café"
    assert [t.key for t in tokenize("The Eiffel TOWER")] == ["the", "eiffel", "tower"]


def test_markup_emoji_cjk_and_rtl_are_tokens_with_offsets() -> None:
    text = "<script>alert(1)</script> 東京 is 🗼 — مرحبا בעולם"
    tokens = tokenize(text)
    assert_offsets(text, tokens)
    joined = " ".join(t.text for t in tokens)
    for piece in ("東京", "🗼", "مرحبا", "בעולם", "script"):
        assert piece in joined


def test_text_limit() -> None:
    assert len(tokenize("a " * (MAX_TEXT_CHARS // 2))) == MAX_TEXT_CHARS // 2
    with pytest.raises(TextError, match="limit"):
        tokenize("a" * (MAX_TEXT_CHARS + 1))


def test_non_text_is_refused() -> None:
    with pytest.raises(TextError, match="expected text"):
        tokenize(None)  # type: ignore[arg-type]


@given(st.integers(0, 8), st.integers(1, 10))
def test_mark_truncated_flags_and_never_drops(count: int, max_len: int) -> None:
    tokens = tokenize(" ".join(f"w{n}" for n in range(count)))
    marked = mark_truncated(tokens, max_len)
    assert [t.text for t in marked] == [t.text for t in tokens]
    assert [t.truncated for t in marked] == [n >= max_len for n in range(count)]


def _whole_text_tokens(text: str) -> list[Token]:
    """The tokens spaCy gives reading the whole text at once (what `tokenize` did before it read
    each whitespace-free chunk once)."""
    from matching.text.tokens import _tokenizer, _word_key

    return [Token(t.text, t.idx, t.idx + len(t.text), _word_key(t.text))
            for t in _tokenizer()(text) if _word_key(t.text) and not t.is_space]


SAMPLES = ["Don't stop: it's 5 p.m. (U.S.A.) -- can't, cannot, gonna!", "see https://example.org/a?b=1 now",
           "e-mail me@x.org; 3.5kg, $20, 10%...", "\u00a0nbsp\u2003em\u3000ideo\tt\nn  two  spaces ",
           "zero\u200bwidth \u200b soft\u00adhyphen", "\"quoted\" 'single' <b>markup</b> & more",
           "東京は日本の首都です。", "مرحبا بالعالم", "emoji 👋🏽 and :) ;-)", "e\u0301 combining", "U.K.'s"]


@pytest.mark.parametrize("text", SAMPLES)
def test_reading_chunk_by_chunk_gives_what_spacy_gives_on_the_whole_text(text: str) -> None:
    assert tokenize(text) == _whole_text_tokens(text)
    assert tokenize(text) == _whole_text_tokens(text)  # the second time from the remembered chunks


@given(st.lists(st.sampled_from(["can't", "U.S.", "(a)", "x.", "e-mail", "3.5", "👋", "\u200b", "\u00a0", " ", "\n",
                                 "\t", "  ", "a", "Hello", ",", "'s", "http://a.b/c", "--", "\u3000", "é", "\u0301"]),
                max_size=25))
def test_chunk_by_chunk_equals_whole_text_on_mixed_pieces(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert tokenize(text) == _whole_text_tokens(text)


@given(st.text(max_size=80))
def test_chunk_by_chunk_equals_whole_text_on_any_text(text: str) -> None:
    assert tokenize(text) == _whole_text_tokens(text)


def test_collector_paused_nests_and_restores() -> None:
    import gc

    from matching.text.tokens import collector_paused

    assert gc.isenabled()
    with collector_paused:
        with collector_paused:
            assert not gc.isenabled()
        assert not gc.isenabled()  # still inside the outer pause
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused:
            pass
        assert not gc.isenabled()  # left as it was found
    finally:
        gc.enable()


def test_tokens_keep_their_key_codes_side_by_side_and_survive_a_pickle() -> None:
    import pickle

    tokens = tokenize("Who wrote FRANKENSTEIN? Mary\u200bShelley wrote frankenstein")
    assert isinstance(tokens, Tokens)
    assert tokens.codes == tuple(KEY_CODES.code(t.key) for t in tokens)
    assert tokens.codes[2] == tokens.codes[-1]  # one key, one code: FRANKENSTEIN and frankenstein
    assert [KEY_CODES.keys[c] for c in tokens.codes] == [t.key for t in tokens]
    assert token_codes(tokens) == tokens.codes and token_codes(list(tokens)) is None  # a plain list has none
    copy = pickle.loads(pickle.dumps(tokens))
    assert isinstance(copy, Tokens) and copy == tokens and copy.codes == tokens.codes
    assert tokens[1:] == list(tokens)[1:]  # slices are plain lists of the same tokens
    assert Tokens(tokens[:2]).codes == tokens.codes[:2]
    with pytest.raises(ValueError, match="2 codes for 1 tokens"):
        Tokens(tokens[:1], [1, 2])


def test_key_codes_stop_at_their_capacity_and_are_one_per_key_across_threads() -> None:
    from concurrent.futures import ThreadPoolExecutor

    codes = KeyCodes(capacity=50)
    keys = [f"word{n % 60}" for n in range(600)]
    with ThreadPoolExecutor(4) as pool:
        given = list(pool.map(codes.code, keys))
    assert len(codes) == 50 and sorted(codes.code_of.values()) == list(range(50))
    for key, code in zip(keys, given, strict=True):
        assert code == codes.code_of.get(key, NO_CODE)
        assert code == NO_CODE or codes.keys[code] == key
    assert given.count(NO_CODE) == 10 * 10  # 10 keys past the capacity, each asked 10 times


PLAIN_WORDS = st.from_regex(r"[A-Za-z]{1,14}|[0-9]{1,9}", fullmatch=True)


def test_plain_chunks_that_are_special_cases_are_still_split_as_spacy_splits_them() -> None:
    from matching.text.tokens import PLAIN_CHUNK, special_cases

    specials = sorted(case for case in special_cases() if PLAIN_CHUNK.fullmatch(case))
    assert {"cannot", "gonna", "Im"} <= set(specials)  # what the fast path must leave to spaCy
    text = " ".join(specials)
    assert tokenize(text) == _whole_text_tokens(text)
    assert [t.text for t in tokenize("cannot 10km 5pm Ok")] == ["can", "not", "10", "km", "5", "pm", "Ok"]


def test_plain_words_of_the_vocabulary_are_what_spacy_reads(vectors: WordVectors) -> None:
    from matching.text.tokens import PLAIN_CHUNK

    words = sorted(word for word in vectors.row_of if PLAIN_CHUNK.fullmatch(word))[::50]
    chunks = [form for word in words for form in (word, word.capitalize(), word.upper())]
    chunks += [str(number) for number in range(0, 200_000, 17)]
    assert len(chunks) > 25_000
    for chunk in chunks:
        assert tokenize(chunk) == _whole_text_tokens(chunk)


@given(st.lists(PLAIN_WORDS, min_size=1, max_size=30))
def test_plain_chunks_read_without_spacy_are_what_spacy_reads(words: list[str]) -> None:
    text = " ".join(words)
    assert tokenize(text) == _whole_text_tokens(text)
