"""Tests for the keyword analyzer (docshelf.analyze)."""

from __future__ import annotations

import unicodedata

import pytest
import Stemmer
from hypothesis import given, settings
from hypothesis import strategies as st

from docshelf.analyze import Analyzer, Token

EN_DE = Analyzer()


def test_cjk_bigram_query_matches_inside_sentence() -> None:
    doc = set(EN_DE.terms("2015年黑豹队赢得了超级碗。"))
    query = EN_DE.terms("黑豹")
    assert "黑豹" in query
    assert set(query) <= doc
    assert "黑豹" in EN_DE.terms("黑豹队")
    assert "豹队" in EN_DE.terms("黑豹队")
    assert EN_DE.terms("猫") == ["猫"]  # single-character run: the unigram
    assert "猫" in EN_DE.terms("小猫很可爱")  # ... which also matches inside longer runs


def test_script_boundaries() -> None:
    toks = EN_DE.tokens("2015年黑豹")
    assert toks[0] == Token("2015", 0, 4)
    assert {t.term for t in toks[1:]} == {"年", "年黑", "黑", "黑豹", "豹"}
    assert all(t.start >= 4 for t in toks[1:])
    # Latin / kana / Hangul / digits / Cyrillic runs do not merge.
    assert EN_DE.terms("abcДом") == ["abc", "дом"]
    assert EN_DE.terms("p53") == ["p53", "p", "53"]  # the whole code, then its parts
    assert "モ" in EN_DE.terms("ポケモンの") and "ンの" not in EN_DE.terms("ポケモンの")


def test_german_stemming_conflates() -> None:
    de = Analyzer(languages=("german",))
    assert de.terms("Häuser") == de.terms("Haus") == ["haus"]
    assert de.terms("Bücher") == de.terms("Buch")
    assert de.terms("Straße") == de.terms("Strasse")  # casefold ß -> ss, stemmer agrees
    # Snowball German does not conflate strong-verb forms: "läuft" -> "lauft", "laufen" -> "lauf".
    assert de.terms("läuft") != de.terms("laufen")
    # In a detected German text the default analyzer stems with the German stemmer.
    assert "haus" in EN_DE.terms("Die Häuser sind alt und der Hund bellt.")


def test_english_stemming_conflates() -> None:
    en = Analyzer(languages=("english",))
    assert en.terms("running runs") == ["run", "run"]
    assert en.terms("studies") == en.terms("studying")
    assert en.terms("The cats were running to the houses") == ["cat", "were", "run", "hous"]


def test_keyword_query_without_function_words_still_matches_german_doc() -> None:
    doc = set(EN_DE.terms("Die Verteidigung der Panthers gab nur 308 Punkte ab."))
    assert EN_DE.language("Die Verteidigung der Panthers gab nur 308 Punkte ab.") == "german"
    query = EN_DE.terms("Verteidigung Punkte")  # no evidence -> stems of all languages
    assert {"verteid", "punkt"} <= set(query) & doc


def test_language_vote() -> None:
    assert EN_DE.language("Wie viele Punkte gab die Verteidigung ab?") == "german"
    assert EN_DE.language("How many points did the defense give up?") == "english"
    assert EN_DE.language("Größe") is None  # one letter hint is not enough
    assert EN_DE.language("") is None  # no evidence, no language
    assert Analyzer(languages=("german", "english")).language("xyz") is None
    assert EN_DE.language("¿Cuántos puntos cedió la defensa en el partido?") == "spanish"
    assert EN_DE.language("Сколько очков отдала защита в этом матче?") == "russian"
    assert EN_DE.language("Combien de points la défense a-t-elle concédés dans ce match ?") == "french"


def test_stopwords_removed_and_configurable() -> None:
    assert EN_DE.terms("the cat and the dog in 2015") == ["cat", "dog", "2015"]
    assert "the" in Analyzer(stopwords=False).terms("the cat and the dog")
    custom = Analyzer(extra_stopwords=["Cat"])
    assert custom.terms("the cat and the dog") == ["dog"]
    # Extra stop words apply to alphabetic tokens only: numbers and CJK n-grams stay.
    assert Analyzer(extra_stopwords=["2015", "黑豹"]).terms("2015 黑豹") == [
        "2015",
        "黑",
        "黑豹",
        "豹",
    ]
    de = Analyzer(languages=("german",))
    assert de.terms("Die Kinder und das Haus") == ["kind", "haus"]


def test_korean_words_and_bigrams() -> None:
    terms = EN_DE.terms("한국어를 배우는 학생")
    assert {"한국어를", "한국", "국어", "학생", "배우"} <= set(terms)
    # Single syllables are terms only as words of their own: common ones (설, 정, 방, 법)
    # would otherwise outweigh the rest of the query.
    assert EN_DE.terms("CORS 설정 방법") == ["cor", "설정", "방법"]
    assert EN_DE.terms("집") == ["집"]
    # Conjoining jamo compose like precomposed syllables.
    assert EN_DE.terms("\u1112\u1161\u11ab\u1100\u116e\u11a8") == EN_DE.terms("한국")


def test_normalisation() -> None:
    assert EN_DE.terms("ＡＢＣ") == ["abc"]
    assert EN_DE.terms("Ha\u0308user") == EN_DE.terms("Häuser")
    assert EN_DE.terms("ｶﾞｷ") == EN_DE.terms("ガキ")
    assert EN_DE.terms("don’t") == EN_DE.terms("don't") == ["don't"]
    assert EN_DE.terms("e-mail") == ["e", "mail"]
    toks = EN_DE.tokens("x ＡＢＣ")
    assert toks == [Token("x", 0, 1), Token("abc", 2, 5)]


def test_long_runs_are_skipped() -> None:
    assert Analyzer(languages=("english",)).terms("a" * 300 + " fine") == ["fine"]


def test_fingerprint() -> None:
    base = Analyzer().fingerprint
    assert base == Analyzer(languages=["english", "german"]).fingerprint
    assert len(base) <= 20
    others = {
        Analyzer(languages=("german", "english")).fingerprint,
        Analyzer(languages=("english",)).fingerprint,
        Analyzer(stopwords=False).fingerprint,
        Analyzer(extra_stopwords=["foo"]).fingerprint,
    }
    assert base not in others and len(others) == 4


def test_unknown_language_rejected() -> None:
    with pytest.raises(ValueError):
        Analyzer(languages=("klingon",))
    with pytest.raises(ValueError):
        Analyzer(languages=())


_STEMMERS = [Stemmer.Stemmer(lang) for lang in Stemmer.algorithms()]
_ALPHABET = st.sampled_from(
    list("aZ9 ß'’-.,\n\t_①½ﬁ")
    + list("年黑豹队ひらがなカタカナｶﾞ한국어집\u1100\u1161\u11a8")
    + list("дом\u0301\u0308\u0903\u093e\u3099\u00a0\ufc5e")
    + list("ภาษาไทยລາວ")
)
_TEXT = st.one_of(st.text(max_size=60), st.text(_ALPHABET, max_size=60))


_INVISIBLE = frozenset("\u00ad\u200c\u200d\u2060\ufeff")


def _hebrew_point(c: str) -> bool:
    return "\u0591" <= c <= "\u05c7" and c not in "\u05be\u05c0\u05c3\u05c6"


def _candidates(surface: str) -> set[str]:
    """Every term the analyzer may derive from ``surface``."""
    nfkc = unicodedata.normalize("NFKC", surface)
    folded = unicodedata.normalize("NFKC", nfkc.replace("\u0130", "i").casefold()).replace("\u2019", "'")
    # soft hyphens and other joiners inside a word, and Hebrew points, are not part of its term
    folded = "".join(c for c in folded if c not in _INVISIBLE and not _hebrew_point(c))
    pieces = folded.split()
    from docshelf.analyze.compounds import split_compound

    # a German compound's two parts are indexed at the whole word's offsets too
    parts = [x for p in pieces for german in (True, False) for x in (split_compound(p, german) or ())]
    stems = {s.stemWord(p) for s in _STEMMERS for p in [*pieces, *parts]}
    return {nfkc, *pieces, *parts, *stems}


@settings(max_examples=400, deadline=None)
@given(_TEXT)
def test_offsets_point_at_surface_forms(text: str) -> None:
    tokens = EN_DE.tokens(text)
    assert [t.term for t in tokens] == EN_DE.terms(text)
    last = 0
    for tok in tokens:
        assert 0 <= tok.start < tok.end <= len(text)
        assert tok.start >= last  # text order
        last = tok.start
        assert tok.term and not any(c.isspace() for c in tok.term)
        assert tok.term in _candidates(text[tok.start : tok.end])
