"""Forking a session: its first N turns in a new file, to go on differently from there.

The new session holds the source's spec (changed by ``--set KEY=VALUE``), its
documents, turns 1..N and the operator actions taken before turn N finished,
and ``[session].forked_from`` (the source's id, path and N). Its hash chain
starts fresh. A model changed by ``--set debaters.ID.model=…`` is recorded as a
``replace_model`` operator action after turn N, so the first N turns keep the
model they were played with and ``moot verify`` checks them as it would a swap.
``moot resume`` continues the fork like any interrupted session.
"""

from __future__ import annotations

import copy
import os
import tomllib
from pathlib import Path
from typing import Any

from tui.engine.basics.errors import MootInputError, SessionError, SpecError
from tui.engine.basics.vocab import OperatorAction
from tui.engine.core.records import Turn
from tui.engine.grounding.lookups import lookup_problems
from tui.engine.record.session import SessionData, SessionStore, load_session
from tui.engine.record.trust import not_known_yours, recorded_tools
from tui.engine.run.budget import lookup_budget_problems
from tui.engine.run.operator import now
from tui.engine.specs.spec import Spec, redacted_problems, validate_spec


def parse_value(text: str) -> Any:
    """A TOML value (``4``, ``true``, ``"x"``, ``[1, 2]``); anything else is a bare string."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def apply_set(raw: dict[str, Any], key: str, value: Any) -> None:
    """Set ``key`` (dotted; a debater is addressed by id: ``debaters.critic.model``) in ``raw``."""
    parts = key.split(".")
    if len(parts) < 2 or not all(parts):
        raise ValueError(f"{key}: expected a dotted key such as debate.max_rounds")
    node: Any = raw
    for i, part in enumerate(parts[:-1]):
        if isinstance(node, list):
            found = [d for d in node if isinstance(d, dict) and d.get("id") == part]
            if not found:
                raise ValueError(f"{key}: no debater {part!r}")
            node = found[0]
        else:
            child = node.setdefault(part, [] if part == "debaters" else {})
            if not isinstance(child, dict | list) or (part == "debaters" and i != 0):
                raise ValueError(f"{key}: {'.'.join(parts[: i + 1])} is not a table")
            node = child
    if isinstance(node, list):
        raise ValueError(f"{key}: address a debater by its id (debaters.ID.KEY)")
    node[parts[-1]] = value


def _model_swap(key: str) -> str | None:
    """The debater whose model ``key`` sets, if that is what it sets."""
    parts = key.split(".")
    return parts[1] if len(parts) == 3 and parts[0] == "debaters" and parts[2] == "model" else None


def fork(
    source: str | Path,
    at: int,
    out: str | Path | None,
    sets: list[str],
    *,
    allow_tools: bool = False,
) -> Path:
    """Write the fork (``out`` None: beside the source); MootInputError (exit 2) for a bad
    N, key or file, nothing written.

    The fork is signed by you, so it keeps a stranger's tools (which its resume would
    start as yours) only with ``allow_tools`` (``--allow-tools``).
    """
    data = load_session(source)  # first: a folder or a missing file is named as such
    if changed := data.changed:  # the fork is signed by you: never over a changed file
        raise SessionError(str(source), [f"{changed}; not forking it"])
    tools = recorded_tools(data)
    if tools and not allow_tools and (stranger := not_known_yours(data)):
        raise SessionError(
            str(source),
            [
                f"{stranger}; a fork is signed by you, and its resume would start the tools it "
                f"records: {'; '.join(tools)}. Fork with --allow-tools to keep them"
            ],
        )
    if not 0 <= at <= len(data.turns):
        raise MootInputError("--at", [f"{at}: the session has turns 1 to {len(data.turns)}"])
    spec_raw = copy.deepcopy(data.spec_raw)
    swaps: list[dict[str, Any]] = []
    problems: list[str] = []
    for item in sets:
        key, eq, text = item.partition("=")
        if not eq:
            problems.append(f"{item}: expected KEY=VALUE")
            continue
        if key.split(".")[0] == "context" or key in ("debate.artifact", "debate.artifact_file"):
            problems.append(f"{key}: the documents are the source's; a fork keeps them")
            continue
        value = parse_value(text)
        speaker = _model_swap(key)
        try:
            if speaker is not None and at > 0:  # the first N turns keep the model they had
                apply_set(copy.deepcopy(spec_raw), key, value)  # the debater must exist
                swaps.append({"speaker": speaker, "model": str(value)})
            else:
                apply_set(spec_raw, key, value)
        except ValueError as err:
            problems.append(str(err))
    if problems:  # a message quotes what was given, which may hold a key
        raise MootInputError("--set", redacted_problems(spec_raw, problems))
    try:
        forked = validate_spec(spec_raw, "--set")
    except SpecError as err:
        raise MootInputError("--set", err.problems) from None
    kept = _lookups_kept(forked, data.turns[:at])
    if kept:  # a fork verify would fail is not written
        raise MootInputError("--set", redacted_problems(spec_raw, kept))
    target = Path(out) if out is not None else default_out(source, at)
    return _write(data, at, target, spec_raw, swaps, sets)


def _lookups_kept(spec: Spec, turns: list[Turn]) -> list[str]:
    """Why the kept turns' lookups would not hold under the fork's spec (empty: they do)."""
    problems = [
        f"turn {t.index}: {p}; the fork keeps this lookup"
        for t in turns
        for p in lookup_problems(spec, t.speaker, t.lookups or [])
    ]
    problems += [f"{p} in the kept turns" for p in lookup_budget_problems(spec, turns)]
    return problems


def _write(
    data: SessionData,
    at: int,
    out: Path,
    spec_raw: dict[str, Any],
    swaps: list[dict[str, Any]],
    sets: list[str],
) -> Path:
    forked_from: dict[str, Any] = {
        "id": str(data.meta.get("id", data.path.stem)),
        "path": str(data.path),
        "at": at,
    }
    if sets:
        forked_from["set"] = list(sets)
    store = SessionStore.create(
        out,
        spec_raw,
        data.meta.get("spec_source"),
        documents=data.spec.documents,
        forked_from=forked_from,
        spec_folder=data.meta.get("spec_folder"),
    )
    try:
        kept = [a for a in data.actions if a.get("after_turn", 0) < at]
        for turn in data.turns[:at]:  # in the chain's order: actions after the turn they followed
            while kept and kept[0].get("after_turn", 0) < turn.index:
                store.append_action(dict(kept.pop(0)))
            store.append_turn(turn)
        for action in kept:
            store.append_action(dict(action))
        for swap in swaps:
            store.append_action(
                {
                    "at": now(),
                    "action": OperatorAction.REPLACE_MODEL,
                    "after_turn": at,
                    **swap,
                    "fork": True,
                }
            )
    finally:
        store.close()
    return store.path


def default_out(source: str | Path, at: int) -> Path:
    """``<source>-fork<N>.toml`` beside the source, numbered if taken."""
    src = Path(source)
    path = src.with_name(f"{src.stem}-fork{at}.toml")
    n = 2
    while os.path.lexists(path):  # a dangling link is taken too: never written through
        path = src.with_name(f"{src.stem}-fork{at}-{n}.toml")
        n += 1
    return path
