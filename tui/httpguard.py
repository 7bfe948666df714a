"""Who may talk to a server moot runs on a local port (``moot serve``, ``moot mcp --http``).

A browser page on another site, or a name rebound by DNS to this machine, can
reach a loopback port as easily as its owner can, so each request must carry the
token printed at start, name this machine in ``Host``, and, when it carries an
``Origin`` (every browser's cross-site request does), come from the server's own.
"""

from __future__ import annotations

import hmac
import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit


def ip_of(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address ``host`` spells, brackets allowed; None for a name."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def is_loopback(host: str) -> bool:
    """``localhost`` or a loopback address; a name is never resolved (it could point anywhere)."""
    ip = ip_of(host)
    return host.lower() == "localhost" if ip is None else ip.is_loopback


@dataclass(frozen=True)
class Guard:
    """Who may talk to the server: the token, and the host names it answers to."""

    token: str | None
    names: frozenset[str]  # lowercase host names; IP addresses are always allowed
    cookie: str

    @classmethod
    def for_server(
        cls, host: str, port: int, *, public: bool, token: str | None, allow: Iterable[str] = ()
    ) -> Guard:
        names = {"localhost", host.lower(), *(a.lower() for a in allow)}
        if public:  # the names this machine goes by on the network
            names |= {socket.gethostname().lower(), socket.getfqdn().lower()}
        return cls(token, frozenset(names), f"moot-serve-token-{port}")

    def host_allowed(self, header: str | None) -> bool:
        """An IP address cannot be rebound by DNS; a name must be one of ours."""
        if not header:
            return False
        try:
            name = urlsplit(f"//{header}").hostname
        except ValueError:
            return False
        return bool(name) and (ip_of(name or "") is not None or name in self.names)

    def origin_allowed(self, origin: str | None, host: str) -> bool:
        """No Origin (not a browser's cross-site request), or this very server's."""
        if origin is None:
            return True
        try:
            url = urlsplit(origin)
        except ValueError:
            return False
        return url.scheme in ("http", "https") and url.netloc.lower() == host.lower()

    def token_matches(self, given: str | None) -> bool:
        return self.token is None or (
            given is not None and hmac.compare_digest(given.encode(), self.token.encode())
        )
