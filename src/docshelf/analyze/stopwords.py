"""Stop-word lists for removal, and letter hints for language identification.

Removal lists are deliberately short: BM25's idf already discounts frequent words, and
every removed word is one a phrase-like query can no longer match. Languages without a
list here keep all their words. Identification uses the long stopwords-iso lists
(``docshelf.analyze.languages``): there they are evidence, not deletions. All entries are
casefolded, the form the analyzer compares against.
"""

from __future__ import annotations

__all__ = ["CJK_STOPWORDS", "ENGLISH_STOPWORDS", "GERMAN_STOPWORDS", "HINT_CHARS", "STOPWORDS"]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Lucene's EnglishAnalyzer default set (33 words).
ENGLISH_STOPWORDS: frozenset[str] = _words(
    "a an and are as at be but by for if in into is it no not of on or such that the their"
    " then there these they this to was will with"
)

# Snowball's German list (snowballstem.org/algorithms/german/stop.txt), casefolded
# ("daß" -> "dass", which is also the post-1996 spelling), with the truncated "unse*"
# entries replaced by the real forms of "unser".
GERMAN_STOPWORDS: frozenset[str] = _words(
    "aber alle allem allen aller alles als also am an ander andere anderem anderen anderer"
    " anderes anderm andern anderr anders auch auf aus bei bin bis bist da damit dann der"
    " den des dem die das dass derselbe derselben denselben desselben demselben dieselbe"
    " dieselben dasselbe dazu dein deine deinem deinen deiner deines denn derer dessen dich"
    " dir du dies diese diesem diesen dieser dieses doch dort durch ein eine einem einen"
    " einer eines einig einige einigem einigen einiger einiges einmal er ihn ihm es etwas"
    " euer eure eurem euren eurer eures für gegen gewesen hab habe haben hat hatte hatten"
    " hier hin hinter ich mich mir ihr ihre ihrem ihren ihrer ihres euch im in indem ins ist"
    " jede jedem jeden jeder jedes jene jenem jenen jener jenes jetzt kann kein keine keinem"
    " keinen keiner keines können könnte machen man manche manchem manchen mancher manches"
    " mein meine meinem meinen meiner meines mit muss musste nach nicht nichts noch nun nur"
    " ob oder ohne sehr sein seine seinem seinen seiner seines selbst sich sie ihnen sind so"
    " solche solchem solchen solcher solches soll sollte sondern sonst über um und uns unser"
    " unsere unserem unseren unserer unseres unter viel vom von vor während war waren warst was weg"
    " weil weiter welche welchem welchen welcher welches wenn werde werden wie wieder will"
    " wir wird wirst wo wollen wollte würde würden zu zum zur zwar zwischen"
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
