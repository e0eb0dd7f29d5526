import hashlib
import re

from pb_headless.tokens.format import display_prefix, generate, hash_token, is_well_formed


def test_a_new_token_is_pb_then_forty_random_and_six_checksum_characters():
    token = generate()
    assert re.fullmatch(r"pb_[0-9A-Za-z]{46}", token)
    assert is_well_formed(token)


def test_tokens_are_not_repeated():
    assert len({generate() for _ in range(200)}) == 200


def test_a_changed_character_breaks_the_checksum():
    token = generate()
    flipped = token[:10] + ("a" if token[10] != "a" else "b") + token[11:]
    assert not is_well_formed(flipped)


def test_noise_is_not_a_token():
    for value in ["", "pb_", "pb_short", "xx_" + generate()[3:], generate() + "x", generate()[:-1] + "!"]:
        assert not is_well_formed(value)


def test_only_the_sha256_of_the_whole_value_is_used_for_storage():
    token = generate()
    assert hash_token(token) == hashlib.sha256(token.encode()).hexdigest()


def test_the_displayed_prefix_is_the_first_eight_characters():
    token = generate()
    assert display_prefix(token) == token[:8]
    assert display_prefix(token).startswith("pb_")
