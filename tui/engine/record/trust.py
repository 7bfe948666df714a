"""Who vouches for each record of a session file, and what that lets the file do.

The rules, in one place (the README's trust section states them in words):

- **A signature vouches only for the records its signer wrote.** A record is
  vouched for by the key that signed it. Records written before any key was
  declared (a 0.1/0.2 file, or one a stranger wrote unsigned) are vouched for by
  nobody, however many signatures follow them, until the user runs ``moot
  adopt``: it shows what the file holds, asks, and appends an ``adopt`` action,
  signed by the user, naming how many unsigned records it takes on and the hash
  they end at.
- **A file is trusted** (``moot verify --trusted``) when its chain and
  signatures hold and every record is vouched for by a key the user trusts.
- **A program or folder named by a file starts** only when the person running
  moot says ``--allow-tools``, or, for a session, when its chain and signatures
  hold and every record naming the tools (the header, which holds the spec and
  its folder) is vouched for by a trusted key. A spec carries no signature, so
  its ``mcp`` commands always need ``--allow-tools``.
"""

from __future__ import annotations

import shlex
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui.engine.basics.errors import MootInputError
from tui.engine.basics.vocab import OperatorAction
from tui.engine.record.chain import Record, tail
from tui.engine.record.keys import trusted_keys

if TYPE_CHECKING:
    from tui.engine.record.session import SessionData
    from tui.engine.specs.spec import Spec

NAMING_TOOLS = ("header",)  # the records that name a session's tools and their folder


def adopt_fields(records: Sequence[Record], unsigned: int) -> dict[str, Any]:
    """What an ``adopt`` action records: how many records from the start, and their tail hash."""
    return {"records": unsigned, "through": tail(records[:unsigned])}


def _adoption(data: SessionData) -> tuple[str, str] | None:
    """The first adopt action that holds for the file's unsigned records: (its record, signer)."""
    unsigned = data.signatures.unsigned
    if not unsigned:
        return None
    want = adopt_fields(data.records, unsigned)
    for record in data.records[unsigned:]:
        body: Mapping[str, Any] = record.body
        if body.get("action") != OperatorAction.ADOPT or not record.name.startswith("operator"):
            continue
        signer = data.signatures.signer_of.get(record.name)
        if signer is not None and all(body.get(k) == v for k, v in want.items()):
            return record.name, signer
    return None


def adopted_by(data: SessionData) -> str | None:
    """The fingerprint whose adopt action vouches for the file's unsigned records, if any."""
    found = _adoption(data)
    return found[1] if found is not None else None


def adoption_problem(data: SessionData, action: Mapping[str, Any]) -> str | None:
    """Why a recorded adopt action does not hold (for ``moot verify``); None when it does."""
    unsigned = data.signatures.unsigned
    if not unsigned:
        return "the file has no unsigned records to adopt"
    want = adopt_fields(data.records, unsigned)
    if action.get("records") != want["records"]:
        return f"names {action.get('records')!r} records; the file starts with {unsigned} unsigned"
    if action.get("through") != want["through"]:
        return "its hash is not the one the unsigned records end at (they were changed)"
    return None


def vouchers(data: SessionData) -> dict[str, str]:
    """Each record's name -> the fingerprint vouching for it; a record nobody vouches for is absent."""
    out = dict(data.signatures.signer_of)
    adopted = _adoption(data)
    if adopted is not None:
        for record in data.records[: data.signatures.unsigned]:
            out[record.name] = adopted[1]
    return out


def unvouched(
    data: SessionData, trusted: Collection[str], names: Collection[str] | None = None
) -> list[str]:
    """The records (of ``names``, default all) no trusted key vouches for, in file order."""
    by = vouchers(data)
    return [
        r.name
        for r in data.records
        if (names is None or r.name in names) and by.get(r.name) not in trusted
    ]


def _trusted() -> set[str]:
    try:
        keys, _ = trusted_keys()
    except MootInputError:  # the user's own key is unreadable: no key is known
        return set()
    return {k.fingerprint for k in keys}


def who_vouches(data: SessionData, names: Sequence[str]) -> str:
    """Who vouches for the records ``names``, none of them trusted: unsigned, or by whom."""
    by = vouchers(data)
    strangers = sorted({by[n] for n in names if n in by})
    unsigned = sum(1 for n in names if n not in by)
    parts = [f"{unsigned} unsigned"] if unsigned else []
    if strangers:
        parts.append(f"signed by {', '.join(strangers)}, not a key you trust")
    return " and ".join(parts) if len(names) > 1 or not unsigned else "unsigned"


def not_known_yours(data: SessionData, trusted: Collection[str] | None = None) -> str | None:
    """Why the records naming the file's tools are not known to be the user's; None if they are."""
    if data.chain or data.signatures.problems:
        return "its hash chain or signatures do not hold"
    keys = _trusted() if trusted is None else trusted
    missing = unvouched(data, keys, NAMING_TOOLS)
    if missing:
        verb = "is" if len(missing) == 1 else "are"
        return f"its {', '.join(missing)} {verb} {who_vouches(data, missing)}"
    return None


def recorded_tools(data: SessionData) -> list[str]:
    """Each tool the file would start, as what it does: the command it runs, the folder
    it reads. Empty when it starts none (no tools, or no recorded folder to root them)."""
    folder = data.meta.get("spec_folder")
    if not data.spec.tools or not isinstance(folder, str) or not Path(folder).is_absolute():
        return []
    return [
        f"{t.name} runs {shlex.join(t.mcp)}"
        if t.mcp is not None
        else f"{t.name} reads {Path(folder) / (t.root or '')}"
        for t in data.spec.tools
    ]


def session_tools_refusal(
    data: SessionData, *, allow_tools: bool, trusted: Collection[str] | None = None
) -> str | None:
    """Why the tools a session records may not start; None when they may (or it has none).

    ``trusted``: fingerprints of the keys the user trusts (default: read from their config).
    """
    tools = recorded_tools(data)
    if not tools or allow_tools:
        return None
    why = not_known_yours(data, trusted)
    if why is None:
        return None
    return (
        f"{why}, and going on with it would start its tools as it records them: "
        f"{'; '.join(tools)}. Say --allow-tools to start them, or `moot adopt` a file of "
        "your own written before signing, or trust its signer's key (moot keys trust)"
    )


def spec_commands(spec: Spec) -> list[str]:
    """The programs a spec's ``[[tools]]`` would start, as ``name runs command``."""
    return [f"{t.name} runs {shlex.join(t.mcp)}" for t in spec.tools if t.mcp is not None]


def spec_tools_refusal(spec: Spec, *, allow_tools: bool) -> str | None:
    """Why a spec's MCP commands may not start: a spec is a file, and names a program."""
    commands = spec_commands(spec)
    if not commands or allow_tools:
        return None
    return (
        f"the spec's [[tools]] would start {'; '.join(commands)}. A file never starts a "
        "program by itself: say --allow-tools if you mean to run it"
    )
