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

The decide page (``/decide/<session id>``, ``tui.commands.decide_web``) is the one
route the console's token does not open: a decide link carries a token of its own,
for that page only, and the Host and Origin rules hold for it all the same.

The port is bound before the URL is printed, so a port in use is said (exit 2)
instead of a URL that leads nowhere. The access log names each request with its
token masked and no header (a Referer holds the page's URL, a Cookie the token).
"""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import os
import secrets
import shlex
import signal
import socket
import sys
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any
from urllib.parse import unquote_plus, urlencode

from tui.commands import decide_web
from tui.engine.basics.errors import MootInputError
from tui.engine.record.session import sessions_dir as sessions_folder
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
NO_PORT_FOR_LINK = (
    "--decide-link needs the --port the server listens on (0 names none), "
    "or [links] base_url in your config"
)
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
        if request.match_info.route.name == decide_web.ROUTE:
            return await handler(request)  # the link's own token decides (decide_web)
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


def log_line(remote: str | None, method: str, raw_path: str, status: int) -> str:
    """One access log line: the request as sent, but a ``token`` parameter's value masked."""
    path, mark, query = raw_path.partition("?")
    parts = [
        f"{key}=[redacted]" if unquote_plus(key) == "token" else f"{key}{eq}{value}"
        for key, eq, value in (p.partition("=") for p in query.split("&"))
    ]
    return f"{remote or '-'} {method} {path}{mark}{'&'.join(parts)} {status}"


def access_log() -> type:
    """The aiohttp access logger writing :func:`log_line`, in place of aiohttp's own."""
    from aiohttp.abc import AbstractAccessLogger

    class AccessLog(AbstractAccessLogger):
        def log(self, request: Any, response: Any, time: float) -> None:
            line = log_line(request.remote, request.method, request.raw_path, response.status)
            self.logger.info("%s", line)

    return AccessLog


def listen(host: str, port: int) -> list[socket.socket]:
    """A bound socket for each address ``host`` names (as asyncio binds them), or why not."""
    try:
        found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as err:
        raise MootInputError("moot serve", [f"cannot listen on {host}: {err.strerror}"]) from None
    bound: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(found):
            if bound and port == 0:  # every address on the one port the system chose
                address = (address[0], bound[0].getsockname()[1], *address[2:])
            sock = socket.socket(family, kind, proto)
            if os.name == "posix":  # a port left in TIME_WAIT is free, as aiohttp has it
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind(address)
            except OSError as err:
                sock.close()
                if family == socket.AF_INET6 and err.errno == errno.EADDRNOTAVAIL:
                    continue  # IPv6 is off here: asyncio skips it too
                raise
            bound.append(sock)
    except OSError as err:
        for sock in bound:
            sock.close()
        if err.errno == errno.EADDRINUSE:
            why = f"port {port} is in use: stop what holds it, or choose another with --port"
        else:
            why = f"cannot listen on {host} port {port}: {err.strerror or err}"
        raise MootInputError("moot serve", [why]) from None
    if not bound:
        raise MootInputError("moot serve", [f"cannot listen on {host}: no address to bind"])
    return bound


def server(
    cmd: str,
    host: str,
    port: int,
    guard: Guard,
    printed_host: str | None = None,
    sockets: Sequence[socket.socket] = (),
    sessions_dir: str | None = None,
) -> Any:
    """A textual-serve Server behind ``guard``, whose pages name the host the browser used,
    with the decide page over ``sessions_dir``; it serves on ``sockets``, bound already
    (:func:`listen`)."""
    from aiohttp import web
    from textual_serve.server import Server

    class GuardedServer(Server):
        async def _make_app(self) -> web.Application:
            app: web.Application = await super()._make_app()
            app.add_routes(decide_web.DecidePages(sessions_folder(sessions_dir)).routes())
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

        def serve(self, debug: bool = False) -> None:
            """textual-serve's, on the sockets bound before the URL was printed."""
            self.debug = debug
            self.initialize_logging()
            loop = asyncio.new_event_loop()
            try:
                loop.add_signal_handler(signal.SIGINT, self.request_exit)
                loop.add_signal_handler(signal.SIGTERM, self.request_exit)
            except NotImplementedError:  # Windows: Ctrl+C still raises KeyboardInterrupt
                pass
            web.run_app(
                self._make_app(),
                sock=list(sockets),
                handle_signals=False,
                loop=loop,
                print=lambda *_: None,
                access_log_class=access_log(),
            )

    return GuardedServer(cmd, host=host, port=port, title="moot")


def base_url(host: str, port: int) -> str:
    """Where this server is reached: an IPv6 address in brackets."""
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    return f"http://{shown}:{port}"


def url(host: str, port: int, guard: Guard) -> str:
    """The URL to open: with the token."""
    return base_url(host, port) + (f"/?token={guard.token}" if guard.token else "/")


def shown_host(host: str) -> str:
    """The name to print for ``host``: this machine's, for an address meaning any."""
    unspecified = (ip_of(host) or ipaddress.ip_address("127.0.0.1")).is_unspecified
    return socket.gethostname() if unspecified else host


def links_base() -> str | None:
    """``[links] base_url`` from the person's config (where notify's links point), if set."""
    from tui.config import ConfigRefused, config_path, read_config
    from tui.notify.settings import from_config

    try:
        found, problems = from_config(read_config())
    except ConfigRefused as err:
        found, problems = None, [str(err)]
    if problems:
        print(f"moot serve: warning: {config_path()}: {'; '.join(problems)}", file=sys.stderr)
    return found.base_url if found is not None and not problems else None


def decide_link(session: str, host: str, port: int, sessions_dir: str | None) -> int:
    """Print a decide link for ``session``: at ``[links] base_url``, else at this server as
    these options start it."""
    folder = sessions_folder(sessions_dir)
    base = links_base()
    if base is None:
        if port == 0:
            raise MootInputError("moot serve", [NO_PORT_FOR_LINK])
        base = base_url(shown_host(host), port)
    print(decide_web.link_for(session, base, folder))
    return ExitCode.DECIDED


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
    sockets = listen(host, port)  # before the URL: a port in use is said, not a dead URL
    port = sockets[0].getsockname()[1]  # the one the system chose, for --port 0
    guard = Guard.for_server(host, port, public=public, token=token, allow=allow_hosts)
    server(
        command(sessions_dir), host, port, guard, shown_host(host), sockets, sessions_dir
    ).serve()
    return ExitCode.DECIDED
