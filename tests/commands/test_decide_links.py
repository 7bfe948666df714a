"""Decide links: a token good for one session until it expires, keyed by a private secret."""

from __future__ import annotations

import os
import stat
from urllib.parse import parse_qs, urlsplit

import pytest

from tui.commands.decide_links import (
    DEFAULT_TTL_S,
    decide_url,
    mint_token,
    secret_path,
    token_valid,
)
from tui.engine.basics.errors import MootInputError


def test_a_link_names_the_session_and_its_token_is_good_for_it_alone() -> None:
    url = decide_url("https://moot.example:8000/", "20250101-120000-release")
    parts = urlsplit(url)
    assert parts.netloc == "moot.example:8000"
    assert parts.path == "/decide/20250101-120000-release"
    token = parse_qs(parts.query)["token"][0]
    assert token_valid("20250101-120000-release", token)
    assert not token_valid("20250101-120000-other", token)
    expiry, _, mac = token.partition(".")
    assert not token_valid("20250101-120000-release", f"{int(expiry) + 1}.{mac}")  # stretched
    assert not token_valid("20250101-120000-release", "garbage")
    assert stat.S_IMODE(os.stat(secret_path()).st_mode) == 0o600


def test_a_token_expires() -> None:
    token = mint_token("s1", now=1_000_000)
    assert token_valid("s1", token, now=1_000_000 + DEFAULT_TTL_S - 1)
    assert not token_valid("s1", token, now=1_000_000 + DEFAULT_TTL_S)


def test_a_secret_others_can_read_is_refused_by_name() -> None:
    mint_token("s1")
    os.chmod(secret_path(), 0o644)
    with pytest.raises(MootInputError, match="chmod 600"):
        mint_token("s1")
