"""The decide page on ``moot serve``: ``GET``/``POST /decide/<session id>?token=…``.

A decide link's token stands in for the console's: it opens the page of the one
session it was minted for, until it expires or its decision is made (then it is
spent, ``used_links``), and nothing else. The console's Host and Origin rules
still hold (``serve``'s middleware runs first); a post also needs the page's own
form token, bound to the link, so another site's page cannot decide with a link it
learnt. The decision follows ``moot decide``'s rules (a refusal is shown on the page
and nothing is written) and is recorded as the operator's, ``via = "web"``, signed
with the key of whoever runs ``moot serve``.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path
from typing import Any

from tui.commands.decide import decide_session, not_awaiting
from tui.commands.decide_links import decide_url, page_token, page_token_valid, token_valid
from tui.commands.decide_page import Form, decide_page, decided_page, message_page
from tui.commands.inbox import peek
from tui.commands.used_links import LinkUsed, is_used, spend
from tui.engine.basics.errors import MootInputError
from tui.engine.basics.vocab import DecisionChannel
from tui.engine.record.session import SessionData, load_session
from tui.render.textsafe import clean_line

ROUTE = "decide"  # the route's name: serve's middleware lets it through on the link's token
SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,254}")  # a session file's stem

HEADERS = {
    "Cache-Control": "no-store",
    # The address holds the token: no other site sees it. (With no-referrer a browser
    # posts the form with Origin: null, which the Origin rule refuses.)
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
}
NOT_VALID = (
    "This decide link is not valid here: it is for another session, it has expired, or it was "
    "changed. Ask for a new one."
)
USED = "This decide link was already used: its decision is made."
NOT_FROM_PAGE = "This post did not come from the decide page. Open the link again."


def _page(text: str, status: int = 200) -> Any:
    from aiohttp import web

    return web.Response(text=text, status=status, content_type="text/html", headers=HEADERS)


def _refused(heading: str, text: str, status: int = 403) -> Any:
    return _page(message_page(heading, text), status)


def _signer(data: SessionData) -> str:
    """The key that signed the result, by the name this machine trusts it as, if any."""
    from tui.engine.record.keys import trusted_keys

    fingerprint = data.signatures.signer_of.get("result")
    if fingerprint is None:
        return "no key (unsigned)"
    names = {k.fingerprint: k.name for k in trusted_keys()[0]}
    name = names.get(fingerprint)
    return f"key {fingerprint}" + (f" ({name})" if name else "")


class DecidePages:
    """The page's two handlers, over the sessions folder ``moot serve`` reads."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def routes(self) -> list[Any]:
        from aiohttp import web

        return [
            web.get("/decide/{session}", self.show, name=ROUTE),
            web.post("/decide/{session}", self.post, name=ROUTE),  # one resource, one name
        ]

    def _link(self, request: Any) -> tuple[str, str] | Any:
        """The session id and the link's token, or the 403 page refusing them."""
        session, token = request.match_info["session"], request.query.get("token", "")
        try:
            valid = SESSION_ID.fullmatch(session) is not None and token_valid(session, token)
            used = valid and is_used(token)
        except MootInputError as err:  # the secret or the used list cannot be read
            print(
                clean_line(f"moot serve: {err.source}: {'; '.join(err.problems)}"), file=sys.stderr
            )
            return _refused("Decide link", "This server cannot check decide links now.", 500)
        if not valid:
            return _refused("Decide link", NOT_VALID)
        if used:
            return _refused("Decide link", USED)
        return session, token

    async def _load(self, session: str) -> SessionData | Any:
        path = self.folder / f"{session}.toml"
        if not os.path.isfile(path):
            return _refused("No such session", f"No session {session} here.", 404)
        try:
            return await asyncio.to_thread(load_session, path)
        except MootInputError as err:
            return _refused("Session unreadable", "; ".join(err.problems), 409)

    async def _awaiting(self, data: SessionData, form: Form, status: int = 200) -> Any:
        if not_awaiting(data) is None:
            return _page(decide_page(data, form), status)
        if data.result is None:
            return _refused("Not awaiting a decision", str(not_awaiting(data)), 409)
        return _page(decided_page(data, await asyncio.to_thread(_signer, data)), status)

    async def show(self, request: Any) -> Any:
        link = self._link(request)
        if not isinstance(link, tuple):
            return link
        session, token = link
        data = await self._load(session)
        if not isinstance(data, SessionData):
            return data
        return await self._awaiting(data, Form(request.path_qs, page_token(session, token)))

    async def post(self, request: Any) -> Any:
        link = self._link(request)
        if not isinstance(link, tuple):
            return link
        session, token = link
        posted = await request.post()
        given = posted.get("csrf")
        if not isinstance(given, str) or not page_token_valid(session, token, given):
            return _refused("Decide link", NOT_FROM_PAGE)
        data = await self._load(session)
        if not isinstance(data, SessionData):
            return data
        value, vote = posted.get("value"), posted.get("vote")
        chosen = value if isinstance(value, str) and value else vote
        rationale = posted.get("rationale")
        form = Form(
            request.path_qs,
            page_token(session, token),
            vote=chosen if isinstance(chosen, str) else "",
            rationale=rationale if isinstance(rationale, str) else "",
        )
        if not form.vote.strip():
            why = "choose a vote (or type the value) first"
            return await self._awaiting(data, _refusal(form, why), 422)
        try:
            await asyncio.to_thread(
                spend,
                token,
                lambda: decide_session(
                    data.path, form.vote, form.rationale, via=DecisionChannel.WEB, flag=""
                ),
            )
        except LinkUsed:
            return _refused("Decide link", USED)
        except MootInputError as err:
            again = await self._load(session)
            if not isinstance(again, SessionData):
                return again
            return await self._awaiting(again, _refusal(form, "; ".join(err.problems)), 422)
        done = await asyncio.to_thread(load_session, data.path)
        signer = await asyncio.to_thread(_signer, done)
        return _page(decided_page(done, signer, just_now=True))


def _refusal(form: Form, why: str) -> Form:
    return Form(form.action, form.page_token, why, form.vote, form.rationale)


def link_for(session: str, base_url: str, folder: Path) -> str:
    """A decide link for a session in ``folder`` awaiting a person (by id, or by its path)."""
    named = Path(session)
    if named.suffix == ".toml" or os.sep in session:
        if not named.is_file():
            raise MootInputError(session, ["no session file there"])
        if os.path.realpath(named.parent) != os.path.realpath(folder):
            raise MootInputError(
                session,
                [
                    f"not in the sessions folder moot serve reads ({folder}); "
                    "serve that folder with --sessions-dir"
                ],
            )
        session = named.stem
    path = folder / f"{session}.toml"
    if SESSION_ID.fullmatch(session) is None or not path.is_file():
        raise MootInputError(session, [f"no session of that name in {folder}"])
    if peek(path) is None:
        raise MootInputError(str(path), ["does not await a decision: no link to mint"])
    return decide_url(base_url, session)
