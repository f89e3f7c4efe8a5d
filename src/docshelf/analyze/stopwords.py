"""Stop-word lists for removal, and letter hints for language identification.

Removal lists are deliberately short: BM25's idf already discounts frequent words, and
every removed word is one a phrase-like query can no longer match. Languages without a
list here keep all their words. Identification uses the long stopwords-iso lists
(``docshelf.analyze.languages``): there they are evidence, not deletions. All entries are
casefolded, the form the analyzer compares against.
"""

from __future__ import annotations

__all__ = [
    "CJK_STOPWORDS",
    "ENGLISH_STOPWORDS",
    "GERMAN_STOPWORDS",
    "HINT_CHARS",
    "QUESTION_WORDS",
    "STOPWORDS",
]


def _words(text: str) -> frozenset[str]:
    """The words of a space-separated list."""
    return frozenset(text.split())


# Lucene's EnglishAnalyzer default set (33 words).
ENGLISH_STOPWORDS: frozenset[str] = _words(
    "a an and are as at be but by for if in into is it no not of on or such that the their"
    " then there these they this to was will with"
)

# German: articles, conjunctions, the common prepositions and forms of "sein", as short as the
# English list. Snowball's 230-word list (pronouns, modal verbs, "machen", "gegen", ...) cost
# 0.019 nDCG@10 on our German Bible paraphrase questions (bible-de test 0.9655 -> 0.9825 with
# this list, dev 0.9685 -> 0.9764) and nothing on the XQuAD-de questions (0.9524 -> 0.9517).
GERMAN_STOPWORDS: frozenset[str] = _words(
    "der die das den dem des ein eine einer eines einem einen und oder aber in im an am auf aus"
    " bei mit nach von vom zu zum zur für ist sind war"
)

# Chinese function characters and question words, removed as CJK unigrams or bigrams (the
# bigrams that cross them stay): "什么", "哪", "谁" fill questions and say nothing of the answer.
CJK_STOPWORDS: frozenset[str] = _words(
    "的 了 是 在 和 与 及 之 也 都 就 而 被 把 这 那 吗 呢 吧 啊 么 什 哪 谁 何"
    " 什么 哪个 哪些 哪里 哪位 哪一 多少 如何 为何 怎么 怎样 为什 何时 这个 那个 是什"
)

# Default removal lists by Snowball algorithm name; languages without an entry keep all words.
STOPWORDS: dict[str, frozenset[str]] = {
    "english": ENGLISH_STOPWORDS,
    "german": GERMAN_STOPWORDS,
}

# The words a question is made of besides its subject (question words, pronouns, auxiliaries and
# modals, "please", "tell"): kept in the index (a phrase may need them), but a hit that matched
# only these ("how do I bake bread?" -> "do") is no sign the documents cover the question. Only
# for the configured defaults: the long stopwords-iso lists also hold content words ("computer",
# "information", "problem").
QUESTION_WORDS: dict[str, frozenset[str]] = {
    "english": ENGLISH_STOPWORDS | _words(
        "how what why when where who whom whose which do does did doing done can could should would"
        " shall may might must i me my mine we us our you your he him his she her its they them"
        " am were been being have has had having get gets got there here about any some all"
        " please tell show find give explain much many most more very so just also"
    ),
    "german": GERMAN_STOPWORDS | _words(
        "wie was warum wieso weshalb wann wo wohin woher wer wen wem wessen welche welcher welches"
        " welchen ich mich mir mein meine du dich dir dein wir uns unser ihr euch sie er es ihm ihn"
        " man kann können konnte soll sollte sollen muss müssen darf dürfen will wollen würde werde"
        " wird werden habe hat haben hatte gibt bin bist seid sein nicht auch noch nur so sehr bitte"
        " zeige erkläre gibt's"
    ),
}  # fmt: skip

# Letters that (among the usual Latin-script languages) point to one language: a weak vote
# for words no stop list holds ("Größe"), keyed by ISO 639-1 code.
HINT_CHARS: dict[str, str] = {
    "de": "äöüß",
    "fr": "éèêàçœùû",
    "es": "ñáíóú¿¡",
    "pt": "ãõçâêô",
    "sv": "åäö",
    "da": "æøå",
    "no": "æøå",
}
