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
    ],
)
def test_inflected_forms_share_their_root(root: str, words: str) -> None:
    assert {stem(w) for w in words.split()} == {root}


def test_short_words_keep_their_letters() -> None:
    # a root of under four letters would remain: these are left alone
    for word in ("bayan", "daan", "umaga", "tao", "inom", "ang", "sa"):
        assert stem(word) == word


def test_enclitics_and_spelling_variants() -> None:
    assert stem("siya'y") == stem("siya")  # 'y: a contracted "ay"
    assert stem("sapagka't") == stem("sapagkat") == "sapagkat"
    assert stem("nguni't") == "ngunit"
    assert stem("dios") == stem("diyos")
    assert stem("mg\u0303a") == "mga"  # 19th-century ng̃


def test_other_letters_pass_through_and_stemwords_maps() -> None:
    assert stem("señor") == "señor" and stem("2018") == "2018"
    assert TagalogStemmer().stemWords(["sinabi", "bayan"]) == ["sabi", "bayan"]
