"""Turns a table's human name into a URL name: Cyrillic to Latin by one fixed table, then a plain slug.

The scheme is a practical one for addresses (the one most Russian sites use for slugs), not a
library standard: a letter becomes one fixed Latin spelling, so the same title always gives the
same name. `Новости компании` → `novosti_kompanii`, `Ёжик` → `yozhik`, `Объявления` → `obyavleniya`.

    а a   б b   в v   г g   д d   е e   ё yo  ж zh  з z   и i   й y
    к k   л l   м m   н n   о o   п p   р r   с s   т t   у u   ф f
    х kh  ц ts  ч ch  ш sh  щ shch ъ -  ы y   ь -   э e   ю yu  я ya

plus Ukrainian (є ye, і i, ї yi, ґ g), Belarusian (ў u) and Serbian/Macedonian letters. Latin letters
with accents lose them (`Café` → `cafe`); anything else that is not a letter or digit separates words.
"""

from __future__ import annotations

import re
import unicodedata

MAX_LENGTH = 100  # an object name is at most 100 characters

CYRILLIC = {
    "а": "a",
    "б": "b",
    "в": "v",
    "г": "g",
    "д": "d",
    "е": "e",
    "ё": "yo",
    "ж": "zh",
    "з": "z",
    "и": "i",
    "й": "y",
    "к": "k",
    "л": "l",
    "м": "m",
    "н": "n",
    "о": "o",
    "п": "p",
    "р": "r",
    "с": "s",
    "т": "t",
    "у": "u",
    "ф": "f",
    "х": "kh",
    "ц": "ts",
    "ч": "ch",
    "ш": "sh",
    "щ": "shch",
    "ъ": "",
    "ы": "y",
    "ь": "",
    "э": "e",
    "ю": "yu",
    "я": "ya",
    # Ukrainian and Belarusian
    "є": "ye",
    "і": "i",
    "ї": "yi",
    "ґ": "g",
    "ў": "u",
    # Serbian and Macedonian
    "ђ": "dj",
    "ј": "j",
    "љ": "lj",
    "њ": "nj",
    "ћ": "c",
    "џ": "dz",
    "ѓ": "gj",
    "ќ": "kj",
    "ѕ": "dz",
}
# Latin letters that Unicode does not decompose into a base letter and an accent.
LATIN_EXTRA = {"ß": "ss", "æ": "ae", "œ": "oe", "ø": "o", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i"}

_LETTERS = {**CYRILLIC, **LATIN_EXTRA}
_SEPARATORS = re.compile(r"[^a-z0-9]+")


def transliterate(text: str) -> str:
    """The URL name for `text`: lower-case `[a-z0-9_]`, words joined by `_`; empty when nothing is left."""
    latin = "".join(_latin(char) for char in text.lower())
    slug = _SEPARATORS.sub("_", latin).strip("_")
    return slug[:MAX_LENGTH].rstrip("_")


def _latin(char: str) -> str:
    if char in _LETTERS:
        return _LETTERS[char]
    if char.isascii():
        return char
    # é → e + a combining accent; keep the base letter. A character with no ASCII base separates words.
    base = "".join(part for part in unicodedata.normalize("NFKD", char) if part.isascii())
    return base.lower() if base.isalnum() else " "
