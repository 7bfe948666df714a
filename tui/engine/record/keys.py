"""The user's signing key and the keys they trust, in moot's config folder.

``<config>/signing-key.pem`` holds the private Ed25519 key (PKCS #8, mode 0600),
made the first time moot writes a session; it is never printed, and a key file
others can read is refused, as OpenSSH refuses one. ``<config>/trusted-keys``
lists other people's public keys, one ``ssh-ed25519 AAAA… name`` a line, added
by ``moot keys trust FILE``. The config folder is ``$MOOT_CONFIG_DIR`` or the
platform's (``tui.paths.config_dir``).

``<config>/own-keys`` lists the public keys moot has signed with for this user,
oldest first: a lost key file made again is said once on stderr, and
``moot verify --trusted`` can tell an earlier key of yours from a stranger's.

Whoever can write the trust file chooses whose sessions pass as yours, so one
that group or others can write is not used (as a readable key is refused). Your
own key is known by its fingerprint, never by a name: a name that reads as
yours ("you", "your key", your user@host ...) is refused for any other key.
"""

from __future__ import annotations

import getpass
import os
import socket
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from tui.engine.basics.errors import MootInputError
from tui.engine.basics.safeio import (
    FileRefused,
    describe,
    fsync_dir,
    read_fd,
    read_regular,
    replace_file,
    temp_beside,
    write_all,
)
from tui.engine.record.signing import KeyProblem, Signer, fingerprint, parse_public, public_text
from tui.paths import config_dir

KEY_FILE = "signing-key.pem"
TRUST_FILE = "trusted-keys"
OWN_KEYS_FILE = "own-keys"
_KEY_BYTES = 4096
_TRUST_BYTES = 1 << 20
YOU = "you"
_OWN_WORDS = frozenset({"you", "your key", "yours", "your own key", "me", "mine", "my key", "own"})


@dataclass(frozen=True, slots=True)
class TrustedKey:
    """A public key the user trusts, and the name they know it by."""

    public: str
    name: str
    own: bool = False  # the user's own signing key (not a name anyone can give)

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.public)


def owner() -> str:
    """The name ``moot keys show`` suggests for the key, as ssh-keygen does: user@host."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "moot"
    return "".join(f"{user}@{socket.gethostname()}".split()) or "moot"


def reads_as_own(name: str) -> bool:
    """Whether ``name`` would pass for the user's own key beside a key's fingerprint."""
    plain = " ".join(name.strip().strip("()[]\"'").casefold().split())
    return plain in _OWN_WORDS or plain == owner().casefold()


def _own_name_refused(path: str | Path, name: str) -> MootInputError:
    return MootInputError(
        str(path),
        [f"the name {name!r} reads as your own key; trust it under another with --name NAME"],
    )


def key_path() -> Path:
    return config_dir() / KEY_FILE


def trust_path() -> Path:
    return config_dir() / TRUST_FILE


def own_keys_path() -> Path:
    return config_dir() / OWN_KEYS_FILE


def _refused(path: Path, why: str) -> MootInputError:
    return MootInputError(str(path), [why])


def read_private(path: Path, what: str, limit: int) -> bytes:
    """A secret file's bytes, refused (naming ``what``) unless a regular file only its owner
    may read, as OpenSSH refuses a private key others can read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        raise _refused(path, f"cannot read {what}: {describe(err)}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _refused(path, f"{what} is not a regular file")
        if info.st_mode & 0o077:
            raise _refused(
                path,
                f"{what} can be read by others (mode {stat.S_IMODE(info.st_mode):04o}); "
                f"make it private with `chmod 600 {path}`",
            )
        return os.read(fd, limit)
    finally:
        os.close(fd)


def _read_key(path: Path) -> Signer:
    data = read_private(path, "your signing key", _KEY_BYTES + 1)
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise _refused(path, "not an unencrypted PEM private key (moot's signing key)") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise _refused(path, "not an Ed25519 key")
    return Signer(key)


def create_private(path: Path, data: bytes) -> None:
    """``data`` as a whole new file only its owner may read, or leave the one already there
    (another process made it meanwhile): written beside, then linked, never replacing."""
    fd, tmp = temp_beside(path, 0o600)
    try:
        write_all(fd, data)
        os.fsync(fd)
        os.link(tmp, path)  # never replaces: what another run made meanwhile wins
    except FileExistsError:
        pass
    finally:
        os.close(fd)
        tmp.unlink(missing_ok=True)
    fsync_dir(path.parent)


def _create_key(path: Path) -> None:
    """A new Ed25519 key, unless one is already there."""
    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    create_private(path, pem)


def user_signer() -> Signer:
    """The user's signing key, made on first use; MootInputError (exit 2) says what is wrong."""
    path = key_path()
    made = not os.path.lexists(path)
    if made:
        try:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            _create_key(path)
        except OSError as err:
            raise _refused(
                path,
                f"cannot create your signing key: {describe(err)}; moot signs every session "
                "it writes: set MOOT_CONFIG_DIR to a folder you can write",
            ) from None
    signer = _read_key(path)
    earlier = earlier_keys()
    if signer.public not in earlier:
        _remember(signer.public)
        if made and earlier:  # a lost key made again: sessions the old one signed lose trust
            print(
                f"moot: made a new signing key {signer.fingerprint} in {path}: your earlier key "
                f"{fingerprint(earlier[-1])} is gone, so sessions it signed fail "
                "`moot verify --trusted` until you trust it (verify shows its public key)",
                file=sys.stderr,
            )
    return signer


def earlier_keys() -> list[str]:
    """Every public key moot has signed with for this user, oldest first."""
    path = own_keys_path()
    if not os.path.lexists(path):
        return []
    try:
        text = read_regular(path, _TRUST_BYTES).decode("utf-8", "replace")
    except FileRefused:
        return []
    keys = []
    for line in text.splitlines():
        try:
            keys.append(public_text(parse_public(line)))
        except KeyProblem:
            continue
    return keys


def _remember(public: str) -> None:
    """Append a public key to the own-keys list (best effort: it only words a hint)."""
    try:
        fd = os.open(
            own_keys_path(),
            os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
        )
    except OSError:
        return
    try:
        write_all(fd, f"{public} {owner()}\n".encode())
    except OSError:
        pass
    finally:
        os.close(fd)


def own_public() -> str | None:
    """The user's public key, if they have a signing key (never makes one)."""
    path = key_path()
    return _read_key(path).public if os.path.lexists(path) else None


def _parse_line(line: str, where: str) -> TrustedKey:
    parts = line.split(maxsplit=2)
    public = public_text(parse_public(line))
    name = parts[2].strip() if len(parts) > 2 else where
    return TrustedKey(public, name)


def _file_keys() -> tuple[list[TrustedKey], list[str]]:
    """The keys in the trust file, and the lines that are not keys."""
    path = trust_path()
    if not os.path.lexists(path):
        return [], []
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a link: its target's mode
    except OSError as err:
        return [], [f"{path}: cannot read: {describe(err)}"]
    try:
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
        if mode & 0o022:
            return [], [
                f"{path}: others can change the keys you trust (mode {mode:04o}), so none "
                f"of them is trusted; make it writable by you alone with `chmod 644 {path}`"
            ]
        text = read_fd(fd, _TRUST_BYTES).decode("utf-8", "replace")
    except FileRefused as err:
        return [], [f"{path}: {err}"]
    finally:
        os.close(fd)
    keys: list[TrustedKey] = []
    problems: list[str] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            keys.append(key := _parse_line(line, f"line {n}"))
        except KeyProblem as err:
            problems.append(f"{path} line {n}: {err}")
            continue
        if reads_as_own(key.name):
            problems.append(
                f"{path} line {n}: the name {key.name!r} reads as your own key, which it is "
                "not; rename it"
            )
    return keys, problems


def trusted_keys() -> tuple[list[TrustedKey], list[str]]:
    """Every key the user trusts (their own first, as "you"), and the lines that are not keys."""
    own = own_public()
    keys, problems = _file_keys()
    return ([TrustedKey(own, YOU, own=True)] if own is not None else []) + keys, problems


def read_public_file(path: str | Path) -> TrustedKey:
    """The one public key in a file (``moot keys show`` output, or an OpenSSH ``.pub``)."""
    try:
        text = read_regular(path, _TRUST_BYTES).decode("utf-8", "replace")
    except FileRefused as err:
        raise MootInputError(str(path), [str(err)]) from None
    lines = [x for x in text.splitlines() if x.strip() and not x.lstrip().startswith("#")]
    if len(lines) != 1:
        raise MootInputError(
            str(path),
            [f"expected one public key line (ssh-ed25519 AAAA… name), found {len(lines)}"],
        )
    try:
        return _parse_line(lines[0], Path(path).stem)
    except KeyProblem as err:
        raise MootInputError(str(path), [str(err)]) from None


def _write_trusted(keys: list[TrustedKey]) -> None:
    path = trust_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    body = "".join(f"{k.public} {k.name}\n" for k in keys)
    header = "# keys whose session signatures you trust (moot keys trust FILE)\n"
    try:
        replace_file(path, (header + body).encode("utf-8"))
    except OSError as err:
        raise _refused(path, f"cannot write: {describe(err)}") from None


def _listed() -> list[TrustedKey]:
    """The trust file's keys, refusing to rewrite a file with lines it cannot read."""
    keys, problems = _file_keys()
    if problems:
        raise MootInputError(str(trust_path()), problems)
    return keys


def trust(path: str | Path, name: str | None = None) -> tuple[TrustedKey, str | None]:
    """Add the key in ``path`` to the trusted keys (once); returns it as listed, and the
    name it was listed under before (None if new). A key trusted already is renamed by
    ``name``; without one it keeps its name."""
    new = read_public_file(path)
    keys = _listed()
    old = next((k for k in keys if k.public == new.public), None)
    if old is not None and (not name or " ".join(name.split()) == old.name):
        return old, old.name
    if name:
        new = TrustedKey(new.public, " ".join(name.split()))
    if reads_as_own(new.name):
        raise _own_name_refused(path, new.name)
    _write_trusted([new if k is old else k for k in keys] if old else [*keys, new])
    return new, old.name if old else None


def untrust(which: str) -> list[TrustedKey]:
    """Remove the trusted keys named by fingerprint or name; returns those removed."""
    keys = _listed()
    gone = [k for k in keys if which in (k.fingerprint, k.name)]
    if not gone:
        raise MootInputError(which, ["no trusted key has this fingerprint or name"])
    _write_trusted([k for k in keys if k not in gone])
    return gone
