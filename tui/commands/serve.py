"""``moot serve``: the console in a browser, for an audience, through textual-serve.

textual-serve is an optional extra (``pip install 'moot[serve]'``): each browser
tab gets its own ``moot`` console process, so the audience can open sessions
and replays without touching the operator's terminal.

Whoever reaches the port drives a console that can read saved sessions and
start runs that cost money, so the server guards itself as Jupyter does:

- a random token in the URL printed at start; the first visit trades it for a
  cookie (HttpOnly, SameSite=Strict) and every request needs one or the other;
- the ``Host`` header must name this machine (an IP address, ``localhost``, the
  bound name, or one given with ``--allow-host``), so DNS rebinding gets 403;
- a request carrying ``Origin`` (every browser websocket does) must come from
  the page's own origin, so another site's page cannot open the websocket;
- it binds loopback only, unless ``--public`` says otherwise, and a public
  server always has a token.
"""

from __future__ import annotations

import ipaddress
import secrets
import shlex
import socket
import sys
from collections.abc import Awaitable, Callable, Iterable
from typing import Any
from urllib.parse import urlencode

from tui.engine.errors import MootInputError
from tui.exitcodes import ExitCode
from tui.httpguard import Guard, ip_of, is_loopback

MISSING = (
    "moot serve needs the optional extra textual-serve: "
    "pip install 'moot[serve]' (or pip install textual-serve)"
)
NEED_PUBLIC = (
    "{host} is not a loopback address: anyone who can reach it could drive the console; "
    "add --public to serve it there (the token stays required)"
)
PUBLIC_NEEDS_TOKEN = "--public needs the token: drop --no-token"
BAD_HOST = "moot serve: that Host is not a name this server answers to\n"
BAD_ORIGIN = "moot serve: requests from another site are refused\n"
NO_TOKEN = "moot serve: open the URL moot serve printed when it started (it holds the token)\n"

Handler = Callable[[Any], Awaitable[Any]]


def command(sessions_dir: str | None) -> str:
    """The console command each browser session runs."""
    parts = [sys.executable, "-m", "tui"]
    if sessions_dir:
        parts += ["--sessions-dir", sessions_dir]
    return shlex.join(parts)


def middleware(guard: Guard) -> Any:
    """The aiohttp middleware that refuses every request the guard does not allow."""
    from aiohttp import web

    @web.middleware
    async def check(request: web.Request, handler: Handler) -> Any:
        host = request.headers.get("Host")
        if not guard.host_allowed(host):
            return web.Response(status=403, text=BAD_HOST)  # never echoes what was sent
        origin = request.headers.get("Origin")
        if not guard.origin_allowed(origin, host or ""):
            return web.Response(status=403, text=BAD_ORIGIN)
        if guard.token is None or guard.token_matches(request.cookies.get(guard.cookie)):
            return await handler(request)
        if not guard.token_matches(request.query.get("token")):
            return web.Response(status=403, text=NO_TOKEN)
        if request.method != "GET" or request.headers.get("Upgrade"):
            return await handler(request)  # a script's request: the token is enough
        # A browser's first visit: keep the token in a cookie, out of the address bar.
        rest = [(k, v) for k, v in request.query.items() if k != "token"]
        response = web.HTTPSeeOther(request.path + (f"?{urlencode(rest)}" if rest else ""))
        response.set_cookie(guard.cookie, guard.token, httponly=True, samesite="Strict")
        raise response

    return check


def server(cmd: str, host: str, port: int, guard: Guard, printed_host: str | None = None) -> Any:
    """A textual-serve Server behind ``guard``, whose pages name the host the browser used."""
    from aiohttp import web
    from textual_serve.server import Server

    class GuardedServer(Server):
        async def _make_app(self) -> web.Application:
            app: web.Application = await super()._make_app()
            app.middlewares.append(middleware(guard))
            return app

        async def handle_index(self, request: web.Request) -> Any:
            # Links and the websocket go back to the Host the guard just allowed
            # (the cookie belongs to that name), not to the bind address.
            self.public_url = f"{request.scheme}://{request.host}"
            return await super().handle_index(request)

        async def on_startup(self, app: web.Application) -> None:
            shown = url(printed_host or host, port, guard)
            for line in (
                f"moot serve: open {shown}",
                "Anyone with this URL can drive the console.",
            ):
                self.console.print(line, markup=False, highlight=False, soft_wrap=True)

    return GuardedServer(cmd, host=host, port=port, title="moot")


def url(host: str, port: int, guard: Guard) -> str:
    """The URL to open: with the token, and an IPv6 address in brackets."""
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    query = f"/?token={guard.token}" if guard.token else "/"
    return f"http://{shown}:{port}{query}"


def serve(
    host: str,
    port: int,
    sessions_dir: str | None = None,
    *,
    public: bool = False,
    no_token: bool = False,
    allow_hosts: Iterable[str] = (),
) -> int:
    problems = []
    if not is_loopback(host) and not public:
        problems.append(NEED_PUBLIC.format(host=host))
    if public and no_token:
        problems.append(PUBLIC_NEEDS_TOKEN)
    if problems:
        raise MootInputError("moot serve", problems)
    try:
        import textual_serve.server  # noqa: F401
    except ImportError:
        raise MootInputError("moot serve", [MISSING]) from None
    token = None if no_token else secrets.token_urlsafe(32)
    guard = Guard.for_server(host, port, public=public, token=token, allow=allow_hosts)
    unspecified = (ip_of(host) or ipaddress.ip_address("127.0.0.1")).is_unspecified
    printed = socket.gethostname() if unspecified else None
    server(command(sessions_dir), host, port, guard, printed).serve()
    return ExitCode.DECIDED
