"""Keep secrets out of anything stored or shown: key shapes, URL credentials, key values.

A run knows its secrets: the value of each debater's ``api_key_env`` variable,
and of any secret-named variable in the environment. Model text is redacted
like everything else, since a model can echo whatever reached it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "[redacted]"
MIN_SECRET = 8  # shorter values would mangle text; a key this short is never sent (keyvars.py)
SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE)
_URL_USERINFO = re.compile(r"(//)[^/@\s]+@")
_URL_SECRET_PARAM = re.compile(
    r"([?&#;](?:api[_-]?key|key|token|access_token|secret|password|sig|signature)=)[^&#\s]+",
    re.IGNORECASE,
)

# Shapes of real provider keys; a spec holding one is refused outright. A shape
# starts a word, so "risk-management-and-mitigation" is prose, not an "sk-" key.
SECRET_SHAPES = re.compile(
    r"(?<![A-Za-z0-9_-])"
    r"(sk-[A-Za-z0-9_-]{16,}|sk-ant-[A-Za-z0-9_-]{10,}|sk_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|AIza[0-9A-Za-z_-]{20,}"
    r"|gsk_[A-Za-z0-9]{20,}|xai-[A-Za-z0-9]{20,}|hf_[A-Za-z0-9]{20,}|pplx-[A-Za-z0-9]{20,}"
    r"|nvapi-[A-Za-z0-9_-]{20,}|r8_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|glpat-[A-Za-z0-9_-]{20,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,})"
)


# A JSON string escape: a surrogate pair, one \uXXXX, or a backslash and one character
# (matched too, so ``\\u0041`` is read as an escaped backslash, then text).
_JSON_ESCAPE = re.compile(
    r"\\(?:u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|(.))",
    re.DOTALL,
)


def _unescaped(match: re.Match[str]) -> str:
    """The character a ``\\u`` escape stands for, where writing it plainly means the same JSON.

    Quotes, backslashes, control characters and lone surrogates keep their escape,
    so a reply that parsed before still parses to the same value (secrets aside).
    """
    high, low, one, _other = match.groups()
    if high is not None:
        char = chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + (int(low, 16) - 0xDC00))
    elif one is not None:
        char = chr(int(one, 16))
    else:
        return match.group(0)
    if char in '"\\' or ord(char) < 0x20 or 0xD800 <= ord(char) <= 0xDFFF:
        return match.group(0)
    return char


class Redactor:
    """Replaces every known secret value and every key-shaped string in text."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        found = {s for s in secrets if len(s) >= MIN_SECRET}
        # Longest first, so a secret that contains another is replaced whole.
        self._secrets = sorted(found, key=len, reverse=True)

    @classmethod
    def from_env(cls, names: Iterable[str] = ()) -> Redactor:
        """The named variables' values, plus every secret-named variable's value."""
        env = os.environ
        values = [env.get(name, "") for name in names]
        values += [value for name, value in env.items() if SECRET_NAME.search(name)]
        return cls(values)

    @classmethod
    def for_spec(cls, spec: Any) -> Redactor:
        """Secrets for a run of ``spec`` (a Spec or its raw table): its ``api_key_env`` values."""
        return cls.from_env(key_env_names(spec))

    def __call__(self, text: str) -> str:
        if len(text) < MIN_SECRET:  # shorter than any secret or key shape: the common case
            return text
        if "\\" in text:  # a reply may spell a key in JSON escapes: look at what it decodes to
            decoded = _JSON_ESCAPE.sub(_unescaped, text)
            if decoded != text and (out := self._plain(decoded)) != decoded:
                return out
        return self._plain(text)

    def _plain(self, text: str) -> str:
        out = SECRET_SHAPES.sub(REDACTED, text)
        if "@" in out:
            out = _URL_USERINFO.sub(r"\1" + REDACTED + "@", out)
        if "=" in out:
            out = _URL_SECRET_PARAM.sub(r"\1" + REDACTED, out)
        for secret in self._secrets:
            if secret in out:
                out = out.replace(secret, REDACTED)
        return out

    def tree(self, value: Any) -> Any:
        """``value`` with every string in it (keys included) redacted; other values kept."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, Mapping):
            return {self(k) if isinstance(k, str) else k: self.tree(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.tree(v) for v in value)
        return value


def key_env_names(spec: Any) -> list[str]:
    """The ``api_key_env`` names of a Spec or of a raw spec table (malformed parts skipped)."""
    debaters = spec.get("debaters") if isinstance(spec, Mapping) else getattr(spec, "debaters", ())
    names: list[str] = []
    for d in debaters if isinstance(debaters, list) else []:
        name = d.get("api_key_env") if isinstance(d, Mapping) else getattr(d, "api_key_env", None)
        if isinstance(name, str) and name:
            names.append(name)
    return names


def redact(text: str) -> str:
    """Redact with what the environment alone tells (for errors raised outside a run)."""
    return Redactor.from_env()(text)
