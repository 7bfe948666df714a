"""moot serve: the console for a browser audience, behind the optional serve extra.

The guard is tested over real HTTP and websockets on loopback: a token in the
printed URL, Host and Origin checked (no DNS rebinding, no cross-site
websocket), and loopback only unless --public.
"""

from __future__ import annotations

import re
import shlex
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.serving import guarded_app, serve_process
from tui.cli import main
from tui.commands.serve import MISSING, command, listen, log_line
from tui.httpguard import Guard

EVIL = "http://evil.example"


def test_each_browser_session_runs_the_console_on_the_same_sessions() -> None:
    parts = shlex.split(command("/srv/moot sessions"))
    assert parts == [sys.executable, "-m", "tui", "--sessions-dir", "/srv/moot sessions"]


def test_without_the_extra_a_clear_message_and_exit_2() -> None:
    hide = (
        "import sys; sys.modules['textual_serve'] = None; "  # as if the extra were not installed
        "from tui.cli import main; raise SystemExit(main(['serve', '--port', '8765']))"
    )
    done = subprocess.run([sys.executable, "-c", hide], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert MISSING in done.stderr and "Traceback" not in done.stderr


# ------------------------------------------------------- the server moot really starts
def _browser() -> aiohttp.ClientSession:
    """A client that keeps cookies for an IP address, as a browser does."""
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, int]]:
    """``moot serve`` in its own process; yields the URL it printed and its port."""
    with serve_process(tmp_path / "serve.log", COLUMNS="40") as found:
        yield found


async def test_the_printed_url_holds_a_token_and_nothing_works_without_it(
    served: tuple[str, int],
) -> None:
    url, port = served
    token = re.fullmatch(rf"http://127\.0\.0\.1:{port}/\?token=([\w-]+)", url)
    assert token is not None and len(token.group(1)) >= 32, url
    base = f"http://127.0.0.1:{port}"
    async with _browser() as http:
        for path in ("/", "/?token=wrong", "/static/js/textual.js"):
            async with http.get(base + path) as r:
                assert r.status == 403, path
                assert "printed" in await r.text()
        async with http.get(url) as r:  # the first visit trades the token for a cookie
            assert r.status == 200
            assert "token=" not in str(r.url)  # and leaves it out of the address bar
            assert "data-session-websocket-url" in await r.text()
        async with http.get(base + "/static/js/textual.js") as r:
            assert r.status == 200


async def test_no_log_line_carries_the_token_or_the_cookie(
    served: tuple[str, int], tmp_path: Path
) -> None:
    url, port = served
    token = url.split("token=")[1]
    wrong = "not-the-token-but-close-to-it-0123456789"
    base = f"http://127.0.0.1:{port}"
    async with _browser() as http:
        async with http.get(f"{base}/?token={wrong}") as r:
            assert r.status == 403
        async with http.get(f"{base}/?fontsize=20&token={token}") as r:  # then the cookie
            assert r.status == 200
        async with http.get(f"{base}/?token={token}", allow_redirects=False) as r:
            assert r.status == 200  # the cookie was sent: no trade, the token is just there
        headers = {"Referer": url}  # as a browser sends from the page it opened
        async with http.get(f"{base}/static/js/textual.js?last=1", headers=headers) as r:
            assert r.status == 200
    log = tmp_path / "serve.log"
    banner = "Anyone with this URL can drive the console."
    deadline = time.monotonic() + 30
    while True:  # the access log is written after each response: wait for the last one
        after = "".join(log.read_text().partition(banner)[2].split())  # wrapped lines joined
        if "textual.js" in after:
            break
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.05)
    assert "fontsize=20" in after and "403" in after  # the requests are logged
    assert token not in after and wrong not in after, log.read_text()


def test_a_log_line_masks_the_token_however_its_name_is_spelled() -> None:
    for raw in ("/ws?token=s3cret&x=1", "/ws?x=1&%74oken=s3cret", "/ws?to%6Ben=s3cret&token"):
        line = log_line("127.0.0.1", "GET", raw, 403)
        assert "s3cret" not in line and line.startswith("127.0.0.1 GET /ws?"), line
        assert line.endswith(" 403") and ("x=1" in line) is ("x=1" in raw)


async def test_dns_rebinding_gets_no_page_even_with_the_token(served: tuple[str, int]) -> None:
    url, port = served
    async with _browser() as http:
        for host in ("evil.example", f"evil.example:{port}", f"127.0.0.1.evil.example:{port}"):
            async with http.get(url, headers={"Host": host}, allow_redirects=False) as r:
                assert r.status == 403, host
                assert "not a name this server answers to" in await r.text()
        async with http.get(url, headers={"Host": f"localhost:{port}"}) as r:
            assert r.status == 200


async def test_a_websocket_from_another_site_is_refused(served: tuple[str, int]) -> None:
    url, port = served
    token = url.split("token=")[1]
    ws = f"ws://127.0.0.1:{port}/ws?token={token}"
    async with _browser() as http:
        for origin in (EVIL, f"http://127.0.0.1:{port + 1}", "null"):
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await http.ws_connect(ws, origin=origin)
            assert refused.value.status == 403, origin
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(f"ws://127.0.0.1:{port}/ws")  # no token, no cookie
        assert refused.value.status == 403


# ------------------------------------------ the accepted path, with a cheap console
@asynccontextmanager
async def _guarded(token: str | None) -> AsyncIterator[tuple[str, Guard]]:
    """The guarded server in this process, running a command that exits at once."""
    async with guarded_app(shlex.join([sys.executable, "-c", "pass"]), token) as (port, guard):
        yield f"127.0.0.1:{port}", guard


@pytest.fixture
async def guarded() -> AsyncIterator[tuple[str, Guard]]:
    async with _guarded("t" * 40) as served_here:
        yield served_here


async def test_no_token_on_loopback_still_checks_host_and_origin() -> None:
    async with _guarded(None) as (host, _), _browser() as http:
        async with http.get(f"http://{host}/") as page:
            assert page.status == 200
        async with http.get(f"http://{host}/", headers={"Host": "evil.example"}) as page:
            assert page.status == 403
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(f"ws://{host}/ws", origin=EVIL)
        assert refused.value.status == 403


async def test_the_page_own_websocket_with_the_cookie_is_accepted(
    guarded: tuple[str, Guard],
) -> None:
    host, guard = guarded
    async with _browser() as http:
        async with http.get(f"http://{host}/?token={guard.token}&fontsize=20") as page:
            assert page.status == 200
            assert str(page.url).endswith("/?fontsize=20")  # other parameters are kept
            html = await page.text()
        assert f'data-session-websocket-url="ws://{host}/ws"' in html  # the name the browser used
        socket_ = await http.ws_connect(f"ws://{host}/ws", origin=f"http://{host}")
        await socket_.close()


def test_ip_addresses_and_our_names_pass_the_host_check_other_names_do_not() -> None:
    guard = Guard.for_server("127.0.0.1", 8000, public=False, token="x", allow=["Moot.Lan"])
    for ok in ("127.0.0.1:8000", "localhost:8000", "[::1]:8000", "10.0.0.5:8000", "moot.lan"):
        assert guard.host_allowed(ok), ok
    for bad in ("evil.example", "localhost.evil.example:8000", "", None, "[broken:8000"):
        assert not guard.host_allowed(bad), bad


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--host", "0.0.0.0"], "0.0.0.0 is not a loopback address"),
        (["--host", "192.168.1.20"], "add --public"),
        (["--host", "moot.example"], "moot.example is not a loopback address"),
        (["--public", "--no-token"], "--public needs the token"),
    ],
)
def test_a_host_beyond_loopback_needs_public_and_a_token(
    args: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--port", "8765", *args]) == 2
    assert said in capsys.readouterr().err


@pytest.mark.parametrize("port", ["99999", "-1", "65536"])
def test_a_port_out_of_range_is_refused_before_anything_starts(port: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tui", "serve", "--port", port],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert port in done.stderr and "0 (any free one) to 65535" in done.stderr
    assert "http://" not in done.stdout + done.stderr


def test_port_0_binds_every_address_of_the_host_on_one_free_port(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--port 0``: the system chooses, and every address the host name resolves to
    listens on that one port, the one the URL names (here a name with two loopback
    addresses, as localhost has 127.0.0.1 and ::1 on many machines)."""
    resolve = socket.getaddrinfo

    def two_addresses(host: str, port: int, *args: Any, **kwargs: Any) -> Any:
        assert host == "twice.test"
        return [
            *resolve("127.0.0.1", port, *args, **kwargs),
            *resolve("127.0.0.2", port, *args, **kwargs),
        ]

    monkeypatch.setattr(socket, "getaddrinfo", two_addresses)
    sockets = listen("twice.test", 0)
    assert len(sockets) == 2
    try:
        ports = {sock.getsockname()[1] for sock in sockets}
        assert len(ports) == 1 and 0 not in ports, [s.getsockname() for s in sockets]
    finally:
        for sock in sockets:
            sock.close()


def test_a_port_in_use_is_said_before_any_url_is_printed() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "tui", "serve", "--port", str(port), "--host", "127.0.0.1"],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"port {port} is in use" in done.stderr
    assert "http://" not in done.stdout + done.stderr and "internal error" not in done.stderr
