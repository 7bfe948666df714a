"""Decide links: a URL whose token lets its holder decide one session until it expires.

A token is ``<expiry>.<hex HMAC-SHA256>`` over the session id and the expiry (unix
seconds), keyed by a secret kept in the config folder (``decide-links.key``, mode
0600, made on first use). ``moot serve`` checks a link moot minted with no list of
them; that a token works only once is the server's to record (``used_links``). The
same secret keys the page's form token, bound to the link it was served for.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import time
from pathlib import Path
from urllib.parse import quote

from tui.engine.basics.errors import MootInputError
from tui.engine.basics.safeio import describe
from tui.engine.record.keys import create_private, read_private
from tui.paths import config_dir

SECRET_FILE = "decide-links.key"
DEFAULT_TTL_S = 7 * 24 * 3600
_SECRET_BYTES = 32


def secret_path() -> Path:
    return config_dir() / SECRET_FILE


def _refused(path: Path, why: str) -> MootInputError:
    return MootInputError(str(path), [why])


def _secret() -> bytes:
    """The links' secret, made on first use; refused when others may read it."""
    path = secret_path()
    try:
        if not os.path.lexists(path):
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            create_private(path, secrets.token_hex(_SECRET_BYTES).encode())
    except OSError as err:
        raise _refused(path, f"cannot make the decide links' secret: {describe(err)}") from None
    data = read_private(path, "the decide links' secret", 4 * _SECRET_BYTES).strip()
    if len(data) < _SECRET_BYTES:
        raise _refused(path, "the decide links' secret is too short; delete the file to make one")
    return data


def _mac(session_id: str, expiry: int) -> str:
    message = f"decide\n{session_id}\n{expiry}".encode()
    return hmac.new(_secret(), message, hashlib.sha256).hexdigest()


def mint_token(session_id: str, *, ttl_s: int = DEFAULT_TTL_S, now: float | None = None) -> str:
    expiry = int(now if now is not None else time.time()) + ttl_s
    return f"{expiry}.{_mac(session_id, expiry)}"


def token_valid(session_id: str, token: str, *, now: float | None = None) -> bool:
    """Minted here for this very session, and not expired."""
    expiry, mac = expiry_of(token), token.partition(".")[2]
    if expiry is None or expiry <= (now if now is not None else time.time()):
        return False
    return hmac.compare_digest(mac.encode(), _mac(session_id, expiry).encode())


def page_token(session_id: str, link_token: str, *, nonce: str | None = None) -> str:
    """The decide page's form token (``<nonce>.<HMAC>``): made for one page, good only with
    the link it was served for, so another site cannot forge a post even knowing the link."""
    nonce = nonce if nonce is not None else secrets.token_hex(8)
    message = f"page\n{session_id}\n{link_token}\n{nonce}".encode()
    return f"{nonce}.{hmac.new(_secret(), message, hashlib.sha256).hexdigest()}"


def page_token_valid(session_id: str, link_token: str, given: str) -> bool:
    nonce, _, mac = given.partition(".")
    if not (nonce.isascii() and nonce.isalnum()) or len(nonce) > 64 or not mac:
        return False
    expected = page_token(session_id, link_token, nonce=nonce)
    return hmac.compare_digest(given.encode(), expected.encode())


def expiry_of(token: str) -> int | None:
    """When a well-formed token stops working (unix seconds), else None."""
    expiry_text = token.partition(".")[0]
    return int(expiry_text) if expiry_text.isdigit() and len(expiry_text) <= 12 else None


def decide_url(base_url: str, session_id: str) -> str:
    """``{base_url}/decide/<session id>?token=…``: where ``moot serve`` takes the decision."""
    token = mint_token(session_id)
    return f"{base_url.rstrip('/')}/decide/{quote(session_id, safe='')}?token={token}"
