"""What find_secrets returns: every secret-looking value of 8 characters or more (a URL's
password of exactly 8 too), longest first, so a secret holding another is masked whole; and
how redact masks: touching secrets as one mask, an empty known value as nothing; and which
variable names name a secret."""

from __future__ import annotations

from ollie_nb.redaction import MASK, find_secrets, is_secret_name, redact

KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd"


def test_secrets_come_longest_first() -> None:
    text = f"key {KEY} and https://bob:Zq8vLm2xQ@h.example/x and https://al:zz8vLm2xQ7@h2/x"
    assert find_secrets(text) == [KEY, "zz8vLm2xQ7", "Zq8vLm2xQ"]


def test_a_url_password_of_eight_characters_is_found() -> None:
    text = "connect to postgres://app:Zq8vLm2x@db.example/x now"
    assert find_secrets(text) == ["Zq8vLm2x"]
    assert "Zq8vLm2x" not in redact(text)


def test_touching_secrets_are_one_mask() -> None:
    assert redact("[first-one|second-two]", ["first-one|", "second-two"], detect=False) == (
        f"[{MASK}]"
    )


def test_no_known_secret_masks_nothing() -> None:
    assert redact("plain words", [None, ""], detect=False) == "plain words"


def test_a_secret_word_names_a_secret_as_a_whole_word_or_an_ending() -> None:
    assert is_secret_name("GITHUB_PAT") and is_secret_name("db_password")
    assert is_secret_name("MYTOKEN") and is_secret_name("apiKey")
    assert not is_secret_name("PATH") and not is_secret_name("HOME")
