"""The light Tagalog stemmer: affixes, reduplication, enclitics and spelling variants."""

from __future__ import annotations

import pytest

from docshelf.analyze.tagalog import TagalogStemmer, stem


@pytest.mark.parametrize(
    ("root", "words"),
    [
        ("sabi", "sinabi sinasabi nagsabi nagsasabi sabihin nangagsabi"),
        ("bigay", "ibinigay ibibigay nagbigay magbigay nagbibigay"),
        ("alis", "umalis inalis"),  # -um-/-in- before a vowel-initial root
        ("sigaw", "sumigaw sumisigaw nagsisigawan"),
        ("balik", "bumalik nagbalik nangagbalik ibinalik"),
        ("lagay", "inilagay ilagay naglagay"),
        ("dakila", "dakila dakilang"),  # the linker -ng
    ],
)
def test_inflected_forms_share_their_root(root: str, words: str) -> None:
    assert {stem(w) for w in words.split()} == {root}


def test_short_words_keep_their_letters() -> None:
    # a root of under four letters would remain: these are left alone
    for word in ("bayan", "daan", "umaga", "tao", "taong", "inom", "ang", "sa"):
        assert stem(word) == word


@pytest.mark.parametrize(
    "spellings",
    [
        "siya'y siya sya",  # 'y: a contracted "ay"; the glide written or not
        "kanya kaniya",
        "pwede puwede",
        "dios diyos",
        "sapagka't sapagkat",  # the old spelling of a joined -t
        "cristo kristo",  # Spanish letters respelled in the Abakada
        "justicia hustisya",
        "cruz krus",
        "mg\u0303a mga",  # 19th-century ng̃
    ],
)
def test_spelling_variants_meet(spellings: str) -> None:
    assert len({stem(w) for w in spellings.split()}) == 1


def test_other_letters_pass_through_and_stemwords_maps() -> None:
    assert stem("ελλάδα") == "ελλάδα" and stem("2018") == "2018"
    assert TagalogStemmer().stemWords(["sinabi", "bayan"]) == ["sabi", "bayan"]
