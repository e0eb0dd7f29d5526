"""The URL name a table's title transliterates to."""

from __future__ import annotations

import pytest

from pb_headless.constructor import transliterate
from pb_headless.constructor.transliteration import CYRILLIC, MAX_LENGTH
from pb_headless.registry.declaration import OBJECT_NAME


def test_the_spec_example_transliterates_to_novosti_kompanii():
    assert transliterate("Новости компании") == "novosti_kompanii"


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Ёжик", "yozhik"),
        ("Щука и ёж", "shchuka_i_yozh"),
        ("Объявления", "obyavleniya"),
        ("Цены Хабаровска", "tseny_khabarovska"),
        ("Чай, кофе и т.д.", "chay_kofe_i_t_d"),
        ("Юбилейная Ярмарка", "yubileynaya_yarmarka"),
        ("Подъезд Эльфа", "podezd_elfa"),
    ],
)
def test_russian_letters_follow_the_documented_table(title, expected):
    assert transliterate(title) == expected


def test_every_russian_letter_has_a_latin_spelling():
    russian = "абвгдеёжзийклмнопрстуфхцчшщъыьэюя"
    assert set(russian) <= set(CYRILLIC)
    assert all(CYRILLIC[letter].isascii() for letter in russian)


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Київ і Одеса", "kiyiv_i_odesa"),
        ("Ґанок", "ganok"),
        ("Café crème", "cafe_creme"),
        ("Straße 2024", "strasse_2024"),
    ],
)
def test_other_scripts_lose_their_accents_rather_than_their_letters(title, expected):
    assert transliterate(title) == expected


def test_latin_titles_are_lower_cased_and_joined_by_underscores():
    assert transliterate("  Company News -- 2024!  ") == "company_news_2024"


def test_characters_without_a_latin_spelling_separate_words():
    assert transliterate("中文 abc") == "abc"


def test_a_title_of_nothing_but_punctuation_gives_an_empty_name():
    assert transliterate("!!! ...") == ""
    assert transliterate("") == ""


def test_a_long_title_is_cut_to_the_longest_object_name_without_a_trailing_underscore():
    name = transliterate("слово " * 40)
    assert len(name) <= MAX_LENGTH
    assert not name.endswith("_")


@pytest.mark.parametrize(
    "title",
    [
        "Новости компании",
        "Ёлки-палки",
        "__init__",
        "2024 год",
        "a" * 300,
        "Ǆemal",
        "ﬁnance",
        "①②",
        "١٢٣",
    ],
)
def test_every_non_empty_result_is_a_valid_object_name(title):
    name = transliterate(title)
    assert name == "" or OBJECT_NAME.fullmatch(name)
    assert name == name.lower()
