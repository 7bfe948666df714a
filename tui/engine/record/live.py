"""A live session: one engine bound to one session file.

Every decision the engine reaches (by rule or by the operator) is written to the
file as its ``[result]`` the moment it happens, so quitting never loses it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tui.engine.basics.errors import SessionError, SessionExistsError
from tui.engine.basics.redact import redact
from tui.engine.basics.safeio import describe
from tui.engine.basics.vocab import OperatorAction
from tui.engine.core.ports import Provider, ToolBox
from tui.engine.protocols import protocol_class
from tui.engine.record.session import SessionData, SessionStore, new_session_path, sessions_dir
from tui.engine.run.events import DecisionReached, Event, OperatorActed
from tui.engine.run.runner import Engine
from tui.engine.run.turns import FailureHandler, escalate_on_failure
from tui.engine.specs.spec import Debater, Spec

NAME_TRIES = 16  # new names tried when the one chosen is taken before it is created


def session_target(
    title: str, *, out: str | Path | None = None, directory: str | Path | None = None
) -> Path:
    """The file a new session will be written to, checked before anything is written.

    ``--out`` must not be a folder or an existing file; the sessions folder must
    be a folder (or creatable) this process can write in. Each refusal names
    the path and the reason (exit 2), never an internal error.
    """
    try:
        if out:
            path = Path(out)
            if path.is_dir():
                raise SessionError(str(path), ["is a folder; --out names the session file"])
            if path.exists() or path.is_symlink():
                raise SessionError(str(path), ["already exists; not overwriting it"])
            _writable_folder(path.parent, "the folder of --out")
            return path
        folder = sessions_dir(directory)
        _writable_folder(folder, "the sessions folder")
        return new_session_path(folder, redact(title))  # a file's name is shown everywhere
    except OSError as err:
        raise SessionError(str(out or sessions_dir(directory)), [describe(err)]) from None


def _writable_folder(folder: Path, what: str) -> None:
    """``folder`` is, or can be created as, a folder this process can write in."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        if existing.is_symlink():  # mkdir would fail on it, as if the name were taken
            target = os.readlink(existing)
            raise SessionError(
                str(existing), [f"{what} is a symlink to a missing folder ({target})"]
            )
        existing = existing.parent
    if not existing.is_dir():
        raise SessionError(str(folder), [f"{what} cannot be created: {existing} is not a folder"])
    if not os.access(existing, os.W_OK | os.X_OK):
        raise SessionError(str(folder), [f"{what} is not writable: {existing} is read-only"])


def _spec_folder(spec: Spec, spec_source: str | None) -> str | None:
    """The spec's folder, recorded when it has tools, so a resume roots them there again."""
    if not spec.tools or spec_source is None or not os.path.isfile(spec_source):
        return None
    return os.path.dirname(os.path.realpath(spec_source))


class LiveSession:
    """Owns the engine and the store; ``close()`` releases the session's lock."""

    def __init__(
        self,
        spec: Spec,
        store: SessionStore,
        provider_for: Callable[[Debater], Provider],
        *,
        data: SessionData | None = None,
        on_failure: FailureHandler = escalate_on_failure,
        tools: ToolBox | None = None,
    ) -> None:
        self.spec = spec
        self.store = store
        self.resumed_from = data
        self.tools = tools  # started and closed by the front end that runs the session
        self.engine = Engine(
            spec,
            provider_for,
            sink=store,
            recorded_turns=data.turns if data else (),
            recorded_actions=data.actions if data else (),
            on_failure=on_failure,
            tools=tools,
        )
        self.engine.subscribe(self._on_event)

    @property
    def path(self) -> Path:
        return self.store.path

    def _on_event(self, event: Event) -> None:
        if isinstance(event, DecisionReached):
            self.store.set_result(dict(event.result))
        elif isinstance(event, OperatorActed) and event.action.get("action") in (
            OperatorAction.EXTEND,
            OperatorAction.RAISE_BUDGET,
        ):
            self.store.clear_result()

    @classmethod
    def start(
        cls,
        spec: Spec,
        spec_raw: dict[str, Any],
        provider_for: Callable[[Debater], Provider],
        *,
        out: str | Path | None = None,
        directory: str | Path | None = None,
        spec_source: str | None = None,
        on_failure: FailureHandler = escalate_on_failure,
        tools: ToolBox | None = None,
    ) -> LiveSession:
        drawn = protocol_class(spec).drawn_at_start(spec)  # recorded, so a replay draws alike
        if drawn:
            spec_raw = {**spec_raw, "debate": {**spec_raw["debate"], **drawn}}
            spec = spec.model_copy(update={"debate": spec.debate.model_copy(update=drawn)})
        for _ in range(NAME_TRIES):
            path = session_target(spec.debate.title, out=out, directory=directory)
            try:
                store = SessionStore.create(
                    path,
                    spec_raw,
                    spec_source,
                    documents=spec.documents,
                    spec_folder=_spec_folder(spec, spec_source),
                )
            except SessionExistsError:
                if out:  # the name the person gave: never another
                    raise
                continue  # taken since it was chosen (planted, or a run in the same second)
            return cls(spec, store, provider_for, on_failure=on_failure, tools=tools)
        raise SessionError(str(sessions_dir(directory)), ["no free session file name; try again"])

    @classmethod
    def resume(
        cls,
        path: str | Path,
        provider_for: Callable[[Debater], Provider],
        *,
        on_failure: FailureHandler = escalate_on_failure,
        force: bool = False,
        tools: ToolBox | None = None,
        tools_for: Callable[[SessionData], ToolBox | None] | None = None,
    ) -> LiveSession:
        """Continue a saved session; a broken hash chain is refused unless ``force``.

        ``tools_for`` builds the run's tools from the file (its spec and recorded folder).
        """
        store, data = SessionStore.open_existing(path, force=force)
        if tools is None and tools_for is not None:
            try:
                tools = tools_for(data)
            except BaseException:  # refused: the file is left as it was, and unlocked
                store.close()
                raise
        return cls(data.spec, store, provider_for, data=data, on_failure=on_failure, tools=tools)

    def close(self) -> None:
        self.store.close()
