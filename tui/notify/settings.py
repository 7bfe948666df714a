"""Who hears of a debate awaiting a person: ``[[notify]]`` and ``[links]`` in config.toml.

Only the person's own config file turns notify on (a spec or a session never can)::

    [[notify]]
    name = "team"
    url = "https://hooks.example.com/T0/B0/xyz"  # POSTed to; https (http only to this machine)
    format = "json"                              # json (default), slack, teams, discord
    secret_env = "MOOT_NOTIFY_SECRET"            # signs the body: X-Moot-Signature-256
    [[notify]]
    name = "on-call"
    email = "oncall@example.com"                 # or a list of addresses
    smtp = "smtp.example.com:587"                # STARTTLS always; port 587 by default
    from = "moot@example.com"
    user_env = "SMTP_USER"                       # with password_env, or neither
    password_env = "SMTP_PASSWORD"
    [links]
    base_url = "https://moot.internal.example:8000"  # where `moot serve` is reached

``include_text = true`` on a target adds the motion and each debater's latest
stance; without it no turn text leaves the machine. Every problem is reported by
key path; a URL is never echoed (a chat webhook's URL is its password).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from tui.httpguard import is_loopback

TABLE = "notify"
LINKS = "links"
FORMATS = ("json", "slack", "teams", "discord")
WEBHOOK_KEYS = ("name", "url", "format", "secret_env", "include_text")
MAIL_KEYS = ("name", "email", "smtp", "from", "user_env", "password_env", "include_text")
LINKS_KEYS = ("base_url",)
SMTP_PORT = 587
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._@-]{0,63}$")
_ADDRESS = re.compile(r"^[^\s@<>,;\"]{1,64}@[^\s@<>,;\"]{1,255}$")


@dataclass(frozen=True, slots=True)
class Webhook:
    """A URL that takes one POST per debate awaiting a person."""

    name: str
    url: str = field(repr=False)  # may hold the hook's own secret
    format: str = "json"
    secret_env: str | None = None
    include_text: bool = False


@dataclass(frozen=True, slots=True)
class Mail:
    """Addresses that get one mail per debate awaiting a person, through SMTP with STARTTLS."""

    name: str
    to: tuple[str, ...]
    host: str
    port: int
    sender: str
    user_env: str | None = None
    password_env: str | None = None
    include_text: bool = False


Target = Webhook | Mail


@dataclass(frozen=True, slots=True)
class NotifySettings:
    targets: tuple[Target, ...] = ()
    base_url: str | None = None  # decide links point there; none without it


def _http_url(value: Any, where: str, problems: list[str]) -> str | None:
    """https, or http to this machine: a decide link's token must not cross a network in clear."""
    if not isinstance(value, str):
        problems.append(f"{where}: must be a string (an https:// URL)")
        return None
    try:
        parts = urlsplit(value.strip())
        host = parts.hostname
    except ValueError:
        host, parts = None, None
    if parts is None or parts.scheme not in ("http", "https") or not host:
        problems.append(f"{where}: must be an https:// URL with a host")
        return None
    if parts.scheme == "http" and not is_loopback(host):
        problems.append(f"{where}: must be https:// (http:// only to this machine)")
        return None
    return value.strip()


def _env(table: dict[str, Any], key: str, where: str, problems: list[str]) -> str | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not _ENV_NAME.match(value):
        problems.append(f"{where}.{key}: must name an environment variable (letters, digits, _)")
        return None
    return value


def _smtp(value: Any, where: str, problems: list[str]) -> tuple[str, int] | None:
    if not isinstance(value, str) or not value.strip():
        problems.append(f"{where}.smtp: must be a string, host or host:port")
        return None
    host, colon, port = value.strip().rpartition(":")
    if not colon or "]" in port:
        host, port = value.strip(), str(SMTP_PORT)
    host = host.strip("[]")
    if not host or any(c.isspace() for c in host) or not port.isdigit():
        problems.append(f"{where}.smtp: must be host or host:port")
        return None
    if not 1 <= int(port) <= 65535:
        problems.append(f"{where}.smtp: the port must be 1 to 65535")
        return None
    return host, int(port)


def _addresses(value: Any, where: str, problems: list[str]) -> tuple[str, ...]:
    given = [value] if isinstance(value, str) else value
    if not isinstance(given, list) or not given:
        problems.append(f"{where}: must be an address or a list of addresses")
        return ()
    bad = [a for a in given if not isinstance(a, str) or not _ADDRESS.match(a)]
    if bad:
        problems.append(f"{where}: not a mail address: {', '.join(repr(str(a)) for a in bad)}")
        return ()
    return tuple(given)


def _target(table: Any, where: str, problems: list[str]) -> Target | None:
    if not isinstance(table, dict):
        problems.append(f"{where}: must be a table ([[{TABLE}]])")
        return None
    is_mail = "email" in table
    if is_mail == ("url" in table):
        problems.append(f"{where}: give url (a webhook) or email (mail), one of them")
        return None
    known = MAIL_KEYS if is_mail else WEBHOOK_KEYS
    before = len(problems)
    problems += [
        f"{where}.{key}: unknown key (known: {', '.join(known)})"
        for key in table
        if key not in known
    ]
    name = table.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        problems.append(
            f"{where}.name: missing or not a short name (letters, digits, space . _ @ -)"
        )
    include_text = table.get("include_text", False)
    if not isinstance(include_text, bool):
        problems.append(f"{where}.include_text: must be true or false")
    if is_mail:
        to = _addresses(table["email"], f"{where}.email", problems)
        server = _smtp(table.get("smtp"), where, problems)
        sender = _addresses(table.get("from"), f"{where}.from", problems)
        user_env = _env(table, "user_env", where, problems)
        password_env = _env(table, "password_env", where, problems)
        if ("user_env" in table) != ("password_env" in table):
            problems.append(f"{where}: give user_env and password_env together, or neither")
        if len(problems) > before or server is None:
            return None
        return Mail(
            str(name), to, server[0], server[1], sender[0], user_env, password_env, include_text
        )
    url = _http_url(table["url"], f"{where}.url", problems)
    fmt = table.get("format", "json")
    if fmt not in FORMATS:
        problems.append(f"{where}.format: must be one of {', '.join(FORMATS)}")
    secret_env = _env(table, "secret_env", where, problems)
    if len(problems) > before or url is None:
        return None
    return Webhook(str(name), url, str(fmt), secret_env, include_text)


def _links(table: Any, problems: list[str]) -> str | None:
    if not isinstance(table, dict):
        problems.append(f"{LINKS}: must be a table ([{LINKS}])")
        return None
    problems += [
        f"{LINKS}.{key}: unknown key (known: {', '.join(LINKS_KEYS)})"
        for key in table
        if key not in LINKS_KEYS
    ]
    if "base_url" not in table:
        return None
    url = _http_url(table["base_url"], f"{LINKS}.base_url", problems)
    if url is not None and (urlsplit(url).query or urlsplit(url).fragment):
        problems.append(f"{LINKS}.base_url: must not hold a query or a fragment")
        return None
    return url


def from_config(config: dict[str, Any]) -> tuple[NotifySettings, list[str]]:
    """The targets and the links' base (none when there are problems) and every problem."""
    problems: list[str] = []
    listed = config.get(TABLE, [])
    if not isinstance(listed, list):
        return NotifySettings(), [f"{TABLE}: must be a list of tables ([[{TABLE}]])"]
    targets = [_target(table, f"{TABLE}[{i}]", problems) for i, table in enumerate(listed)]
    names = [str(t["name"]) for t in listed if isinstance(t, dict) and "name" in t]
    for name in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"{TABLE}: the name {name!r} is given to more than one target")
    base_url = _links(config[LINKS], problems) if LINKS in config else None
    if problems:
        return NotifySettings(), problems
    return NotifySettings(tuple(t for t in targets if t is not None), base_url), []
