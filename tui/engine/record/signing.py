"""Who wrote a session: an Ed25519 signature on every record's chain hash.

The hash chain (:mod:`tui.engine.record.chain`) proves order: no record was edited,
dropped or reordered *unless the whole chain after it was recomputed*, which
anyone can do, since the chain holds no secret. A signature proves who: only
the holder of the private key can sign the recomputed hashes, so a forger who
rewrites the chain must either leave signatures that no longer hold, drop them
(the file then reads as unsigned), or sign with a key of their own (whose
fingerprint is not the one the reader trusts).

Each record stores, beside its ``hash``, ``signature = base64(Ed25519(key,
"moot.session/1 record\\n" + hash))``. Since every hash covers all records
before it, one signature vouches for the file up to its record, and a run
killed after any commit leaves every committed record signed. The signing key
is declared, inside the hashed fields, by ``[session].signer`` in the header and
by a record's ``signer`` field where another key takes over (a session resumed
by someone else). Keys are written in OpenSSH's public key format and named by
OpenSSH's fingerprint (``SHA256:…``), so ``ssh-keygen -lf`` shows the same name.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from tui.engine.record.chain import HASH, SIGNATURE, Record

SIGNER = "signer"  # the public key that signs this record and the ones after it
_DOMAIN = b"moot.session/1 record\n"
_KIND = "ssh-ed25519"


class KeyProblem(ValueError):
    """A public key text that is not one Ed25519 key in OpenSSH's format."""


def public_text(key: Ed25519PublicKey) -> str:
    """``ssh-ed25519 AAAA…``: the key as OpenSSH writes it, with no comment."""
    raw = key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    return raw.decode("ascii")


@lru_cache(maxsize=64)  # a file names one or two keys; each record is checked against one
def parse_public(text: str) -> Ed25519PublicKey:
    """The key in ``ssh-ed25519 AAAA… [comment]``; KeyProblem for anything else."""
    parts = text.strip().split()
    if len(parts) < 2 or parts[0] != _KIND:
        raise KeyProblem(f"expected one {_KIND} public key (`{_KIND} AAAA… [comment]`)")
    try:
        key = serialization.load_ssh_public_key(f"{parts[0]} {parts[1]}".encode("ascii"))
    except (ValueError, UnsupportedAlgorithm, UnicodeEncodeError):
        raise KeyProblem(f"not a valid {_KIND} public key") from None
    if not isinstance(key, Ed25519PublicKey):
        raise KeyProblem(f"expected an {_KIND} key")
    return key


def fingerprint(text: str) -> str:
    """OpenSSH's name for a key: ``SHA256:`` and the unpadded base64 of its blob's digest."""
    blob = base64.b64decode(public_text(parse_public(text)).split()[1])
    return "SHA256:" + base64.b64encode(hashlib.sha256(blob).digest()).decode().rstrip("=")


def _message(chain_hash: str) -> bytes:
    return _DOMAIN + chain_hash.encode("utf-8", errors="surrogatepass")


class Signer:
    """A private key that signs chain hashes; it is never printed or stored in a session."""

    def __init__(self, key: Ed25519PrivateKey) -> None:
        self._key = key
        self.public = public_text(key.public_key())
        self.fingerprint = fingerprint(self.public)

    def __repr__(self) -> str:  # never the private key, even in a traceback
        return f"Signer({self.fingerprint})"

    def sign(self, chain_hash: str) -> str:
        return base64.b64encode(self._key.sign(_message(chain_hash))).decode("ascii")


def holds(public: str, chain_hash: str, signature: object) -> bool:
    """Whether ``signature`` is ``public``'s signature of ``chain_hash``."""
    if not isinstance(signature, str):
        return False
    try:
        raw = base64.b64decode(signature, validate=True)
        parse_public(public).verify(raw, _message(chain_hash))
    except (binascii.Error, ValueError, InvalidSignature):
        return False
    return True


def declared(record: Record) -> str | None:
    """The signer a record declares: ``[session].signer`` in the header, else ``signer``."""
    body: Mapping[str, Any] = record.body
    if record.name == "header":
        meta = body.get("session")
        body = meta if isinstance(meta, Mapping) else {}
    value = body.get(SIGNER)
    return value if isinstance(value, str) else None


def current_signer(records: Sequence[Record]) -> str | None:
    """The key that signs the next record, as the records declared it."""
    found = None
    for record in records:
        found = declared(record) or found
    return found


@dataclass
class Span:
    """One key and the records it signed, first to last."""

    public: str
    fingerprint: str
    first: str
    last: str
    records: int = 0


@dataclass
class SignatureCheck:
    """Each record's signature against the key declared for it, and who signed what."""

    spans: list[Span] = field(default_factory=list)
    unsigned: int = 0  # records before any key was declared (a file from before signing)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (record, why)
    good: list[str] = field(default_factory=list)  # records whose signature holds
    signer_of: dict[str, str] = field(default_factory=dict)  # record -> fingerprint that signed it
    every: bool = True  # each signature was checked itself, not only each span's last

    @property
    def signed(self) -> bool:
        return bool(self.spans)


_SIGNATURE_BYTES = 64


def _well_formed(signature: object) -> bool:
    """A string that could be a signature: base64 of 64 bytes (the cryptography left out)."""
    if not isinstance(signature, str):
        return False
    try:
        return len(base64.b64decode(signature, validate=True)) == _SIGNATURE_BYTES
    except (binascii.Error, ValueError):
        return False


def check(records: Sequence[Record], *, every: bool = True) -> SignatureCheck:
    """Walk the records: once a key is declared, every record must be signed by it.

    ``every=False`` is for a chain known to hold: each span's last signature is
    checked and the ones before it only for their form. That is as sound for who
    wrote the file, since a hash chained over every record before it is what the
    last one signs; ``moot verify`` still checks each. Any problem found that way
    is looked at again with every signature checked, so the first one is named.
    """
    out = _walk(records, every=every)
    if not every and out.problems:
        return _walk(records, every=True)
    return out


def _walk(records: Sequence[Record], *, every: bool) -> SignatureCheck:
    out = SignatureCheck(every=every)
    key: str | None = None
    last: dict[int, tuple[Record, str]] = {}  # span -> its last record and key (every=False)
    for record in records:
        named = declared(record)
        if named is not None:
            try:
                fingerprint(named)
            except KeyProblem as err:
                out.problems.append((record.name, f"declares signer {named[:60]!r}: {err}"))
                key = None
                continue
            if key != named:
                out.spans.append(Span(named, fingerprint(named), record.name, record.name))
            key = named
        signature = record.body.get(SIGNATURE)
        if key is None:
            if signature is not None:
                out.problems.append((record.name, "signed, but no signer is declared before it"))
            else:
                out.unsigned += 1
            continue
        stored = record.body.get(HASH)
        if signature is None:
            out.problems.append((record.name, "no signature, but the file is signed from before"))
        elif not isinstance(stored, str) or not (
            holds(key, stored, signature) if every else _well_formed(signature)
        ):
            out.problems.append((record.name, _not_holding(key)))
        else:
            out.good.append(record.name)
            span = out.spans[-1]
            out.signer_of[record.name] = span.fingerprint
            span.last = record.name
            span.records += 1
            if not every:
                last[len(out.spans)] = (record, key)
    for record, signer in last.values():  # every=False: the signatures that vouch for the rest
        if not holds(signer, record.body[HASH], record.body[SIGNATURE]):
            out.problems.append((record.name, _not_holding(signer)))
    return out


def _not_holding(key: str) -> str:
    return (
        f"the signature does not hold for this record's hash under the key "
        f"{fingerprint(key)} (edited, re-chained, or signed by another key)"
    )
