"""``moot mcp --http``: the same tools over MCP's streamable HTTP transport, guarded as
``moot serve`` is.

A port is reachable by every page a browser on this machine opens, and by names a
DNS server rebinds to it, so every request must carry the token printed at start
(``Authorization: Bearer``, or ``?token=`` in the URL), a ``Host`` naming this
machine, and no ``Origin`` but the server's own (``tui.httpguard``, the rules
``moot serve`` keeps). The SDK's own Host check is off: one rule, not two that
could disagree.

A debate a ``run`` starts belongs to the server, not to the connection: it goes on
when the client leaves, and any client with the token can follow it with
``status`` and ``decide`` it. The SDK has no task support to lean on, so ``run``
without ``wait`` returning at once is how a client that will not stay connected
uses it.
"""

from __future__ import annotations

import contextlib
import errno
import secrets
import signal
import socket
from collections.abc import Callable, Iterator
from urllib.parse import parse_qs

import uvicorn
from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from tui.engine.basics.errors import MootInputError
from tui.httpguard import Guard, ip_of, is_loopback
from tui.mcp_server import MootServer, stop

PATH = "/mcp"
NEED_PUBLIC = (
    "{host} is not a loopback address: anyone who can reach it could run debates and "
    "decide sessions; add --public to serve it there (the token stays required)"
)
BAD_HOST = b"moot mcp: that Host is not a name this server answers to\n"
BAD_ORIGIN = b"moot mcp: requests from another site are refused\n"
NO_TOKEN = (
    b"moot mcp: send the token moot mcp --http printed "
    b"(Authorization: Bearer TOKEN, or ?token=TOKEN in the URL)\n"
)


def listening(host: str, port: int) -> socket.socket:
    """The bound, listening socket, before anything is printed; a port taken is bad input."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as err:
        raise MootInputError("moot mcp", [f"cannot serve on {host}: {err.strerror}"]) from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # no wait after a restart
        sock.bind(address)
        sock.listen()
    except OSError as err:
        sock.close()
        why = f"port {port} is in use" if err.errno == errno.EADDRINUSE else err.strerror
        raise MootInputError("moot mcp", [f"cannot serve on {host}:{port}: {why}"]) from None
    return sock


class Guarded:
    """The ASGI app behind the guard: a request it does not allow gets 403 and one line."""

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            refused = self._refusal(scope)
            if refused is not None:
                await send(
                    {
                        "type": "http.response.start",
                        "status": 403,
                        "headers": [(b"content-type", b"text/plain; charset=utf-8")],
                    }
                )
                await send({"type": "http.response.body", "body": refused})
                return
        await self.app(scope, receive, send)

    def _refusal(self, scope: Scope) -> bytes | None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host = headers.get("host")
        if not self.guard.host_allowed(host):
            return BAD_HOST  # never echoes what was sent
        if not self.guard.origin_allowed(headers.get("origin"), host or ""):
            return BAD_ORIGIN
        scheme, _, bearer = headers.get("authorization", "").partition(" ")
        given = bearer.strip() if scheme.lower() == "bearer" else None
        if given is None:
            query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
            given = (query.get("token") or [None])[0]
        return None if self.guard.token_matches(given) else NO_TOKEN


class _Uvicorn(uvicorn.Server):
    """uvicorn that says where it serves once it accepts requests and catches Ctrl+C (a
    Ctrl+C right after the URL stops it cleanly), and does not raise Ctrl+C or SIGTERM
    again once stopped: moot's own stop (the runs still going, the providers) comes after."""

    def __init__(self, config: uvicorn.Config, ready: Callable[[], None]) -> None:
        super().__init__(config)
        self.ready = ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if not self.should_exit:
            self.ready()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        caught = (signal.SIGINT, signal.SIGTERM)
        before = {sig: signal.signal(sig, self.handle_exit) for sig in caught}
        try:
            yield
        finally:
            for sig, handler in before.items():
                signal.signal(sig, handler)


def url(host: str, port: int, token: str) -> str:
    """The endpoint to give a client, token included: this machine's name for an address
    that means every interface, an IPv6 address in brackets."""
    ip = ip_of(host)
    if ip is not None and ip.is_unspecified:
        host = socket.gethostname()
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{shown}:{port}{PATH}?token={token}"


async def serve_http(
    server: MootServer, host: str, port: int, *, public: bool, say: Callable[[str], None]
) -> None:
    """Bind (a port taken is refused before anything is said), serve, say where and with
    which token, until interrupted; runs still going are stopped then, their turns kept
    (``moot resume`` continues them)."""
    if not is_loopback(host) and not public:
        raise MootInputError("moot mcp", [NEED_PUBLIC.format(host=host)])
    sock = listening(host, port)
    port = sock.getsockname()[1]  # the one the system chose, for --port 0
    token = secrets.token_urlsafe(32)
    guard = Guard.for_server(host, port, public=public, token=token)
    app = server.mcp.streamable_http_app(
        streamable_http_path=PATH,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        host=host,
    )
    config = uvicorn.Config(
        Guarded(app, guard),
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=5,  # a client's open event stream never ends by itself
    )

    def ready() -> None:
        say(f"moot mcp: serving MCP (streamable HTTP) at {url(host, port, token)}")
        say(f"moot mcp: or send the header  Authorization: Bearer {token}")
        say("Anyone with the token can start debates, read the sessions here and decide them.")

    try:
        await _Uvicorn(config, ready).serve(sockets=[sock])
    finally:
        sock.close()
        await stop(server)
