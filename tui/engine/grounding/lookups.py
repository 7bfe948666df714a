"""Lookups: what a debater asked its tools, and what came back, all on record.

The model may look things up; code decides who may call which tool, how often
and how much of a result counts. Every lookup a turn asks for is recorded in the
turn, refused and failed ones included, with its result's hash and size, so
``moot verify`` can check each quote against the very text the tool returned.

A lookup is a read: a speaker is offered only the calls a tool marks read-only,
narrowed to the spec's ``calls``; a listed call that may write is offered only when
the person running moot says ``--allow-tool-writes``, and its lookups say
``writes = true``. Any other call is refused on record before it reaches the tool.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tui.engine.basics.safeio import FileRefused
from tui.engine.core.ports import ToolBox, ToolFailure
from tui.engine.grounding.readroots import ReadRoots
from tui.engine.grounding.roles import allowed_roles, holds, role_problems

if TYPE_CHECKING:
    from tui.engine.terms.spec import Spec, ToolEntry

MAX_ASKED = 32  # lookups one reply may ask for that are recorded; the rest are not read
CUT_MARK = "\n[… cut by moot at {kept} of {full} bytes]"
MAX_REASON = 500
MAX_TOOL_TEXT = 4000  # characters describing one MCP tool's calls to the model
MIN_CUT = 256  # a result cut to fewer bytes than this would be all mark: it is refused instead
FILES_CALLS = ("list", "read", "grep")  # the built-in files tool's calls, every one a read
# Every argument those calls take. Named in the schema, each at most once and no other: a
# grammar-bound small model otherwise repeats an open object's keys until its tokens run out.
FILES_ARGS = {
    "path": {"type": "string"},
    "pattern": {"type": "string"},
    "start_line": {"type": "integer"},
    "end_line": {"type": "integer"},
}
WRITES_FLAG = "--allow-tool-writes"


class LookupCaps(Protocol):
    """The debate's lookup caps as a lookup asks them (the run's budget keeps them)."""

    def lookup_refusal(self, speaker: str) -> str | None: ...
    def lookup_room(self, speaker: str) -> tuple[int, str] | None: ...
    def start_lookup(self, speaker: str) -> None: ...
    def keep_lookup_bytes(self, speaker: str, kept: int) -> None: ...


def tool_problems(raw: dict[str, Any], debater_keys: Iterable[str]) -> list[str]:
    """Unique tool names; ``roles`` naming debaters or the protocol's role keys."""
    tools = raw.get("tools")
    roles_ok = allowed_roles(raw, debater_keys)
    problems: list[str] = []
    seen: dict[str, int] = {}
    for i, entry in enumerate(tools if isinstance(tools, list) else []):
        if not isinstance(entry, dict):
            continue
        name = entry.get("name")
        if isinstance(name, str):
            if name in seen:
                problems.append(
                    f"tools[{i}].name: duplicate tool {name!r} (also tools[{seen[name]}])"
                )
            seen.setdefault(name, i)
        problems += role_problems(f"tools[{i}]", entry.get("roles"), roles_ok)
    return problems


def files_root(roots: ReadRoots, root: str) -> Path:
    """The real folder a files tool reads: inside the spec's folder or an ``--allow-read``
    path, symlinks resolved first; FileRefused says why not (``/``, ``..``, a link out)."""
    found = roots.resolve(roots.spec_folder / root)
    if not found.is_dir():
        raise FileRefused("not a folder")
    return found


def root_problems(spec: Spec, roots: ReadRoots) -> list[str]:
    """Each files tool's root :func:`files_root` refuses, by key path: what validate says
    and run refuses alike."""
    problems = []
    for i, tool in enumerate(spec.tools):
        if tool.builtin == "files" and tool.root is not None:
            try:
                files_root(roots, tool.root)
            except FileRefused as err:
                problems.append(f"tools[{i}].root: {tool.root!r} is {err}")
    return problems


def may_call(spec: Spec, tool: ToolEntry, speaker: str) -> bool:
    """Whether ``speaker`` is given ``tool``: by id, or by a [debate] role it holds."""
    return any(holds(spec, role, speaker) for role in tool.roles)


def tools_of(spec: Spec, speaker: str) -> list[ToolEntry]:
    return [t for t in spec.tools if may_call(spec, t, speaker)]


@dataclass(frozen=True)
class Offer:
    """What one running tool offers its speakers, and why each other call is withheld."""

    calls: tuple[str, ...]
    writes: frozenset[str]  # offered calls that may write (``--allow-tool-writes``)
    withheld: Mapping[str, str]


def offer(entry: ToolEntry, tools: ToolBox) -> Offer:
    """The calls the tool marks read-only, narrowed to the spec's ``calls``; a listed
    call that may write only when the person running moot allowed writes."""
    read_only = tools.read_only(entry.name)
    listed = entry.calls
    calls: list[str] = []
    writes: set[str] = set()
    withheld: dict[str, str] = {}
    for call in tools.calls(entry.name):
        if listed is not None and call not in listed:
            withheld[call] = f"the calls of tool {entry.name!r} in the spec do not list it"
        elif call in read_only:
            calls.append(call)
        elif listed is not None and tools.allow_writes:
            calls.append(call)
            writes.add(call)
        else:
            how = (
                f"moot {WRITES_FLAG} offers it"
                if listed is not None
                else f"list it in the tool's calls and run moot with {WRITES_FLAG} to offer it"
            )
            withheld[call] = f"its server does not mark it read-only ({how})"
    return Offer(tuple(calls), frozenset(writes), withheld)


def offered(tools: ToolBox, spec: Spec) -> Callable[[str], tuple[str, ...]]:
    """Each tool's offered calls by name (none for a tool not in the spec)."""
    entries = {t.name: t for t in spec.tools}

    def calls(name: str) -> tuple[str, ...]:
        entry = entries.get(name)
        return offer(entry, tools).calls if entry is not None else ()

    return calls


def lookup_schema(
    spec: Spec,
    speaker: str,
    calls: Callable[[str], Sequence[str]],
    hints: Callable[[str], Mapping[str, str]] = lambda _: {},
) -> dict[str, Any]:
    """The ``lookups`` property for a speaker's schema: its tools and their calls as enums,
    each MCP call described with its arguments (``hints``, from the server's schemas)."""
    tools = tools_of(spec, speaker)
    names = sorted({c for t in tools for c in calls(t.name)})
    return {
        "type": "array",
        "description": (
            "Optional. Lookups to run before you answer: you will be asked again with "
            "their results. Quote a result as evidence of kind tool_quote, with source "
            "its id (L1, L2, ...); a challenge's evidence may quote one too, with source "
            "its id."
            + "".join(
                f" Tool {t.name}: list {{path}}, read {{path}}, grep {{pattern, path}};"
                " paths are relative to its root."
                for t in tools
                if t.builtin == "files"
            )
            + "".join(_described(t.name, calls(t.name), hints(t.name)) for t in tools if t.mcp)
        ),
        "maxItems": sum(t.max_calls_per_turn for t in tools),
        "items": {
            "type": "object",
            "properties": {
                "tool": {"type": "string", "enum": [t.name for t in tools]},
                "call": {"type": "string", "enum": names},
                "args": _args_schema(tools),
            },
            "required": ["tool", "call", "args"],
        },
    }


def _args_schema(tools: Sequence[ToolEntry]) -> dict[str, Any]:
    """The files tool's arguments, closed, when it is the only kind offered; an MCP call's
    arguments are its server's to define, so a mix stays an open object."""
    if tools and all(t.builtin == "files" for t in tools):
        named = {k: dict(v) for k, v in FILES_ARGS.items()}  # a copy: a provider may edit it
        return {"type": "object", "properties": named, "additionalProperties": False}
    return {"type": "object"}


def _described(tool: str, calls: Sequence[str], hints: Mapping[str, str]) -> str:
    """`` Tool fs: read(path: string); list(); ...`` bounded to MAX_TOOL_TEXT characters."""
    if not calls:
        return ""
    text = f" Tool {tool}: " + "; ".join(f"{c}({hints.get(c, '')})" for c in calls) + "."
    return text if len(text) <= MAX_TOOL_TEXT else text[: MAX_TOOL_TEXT - 1] + "…"


def with_lookups(
    schema: dict[str, Any], lookups: dict[str, Any], *, required: bool = False
) -> dict[str, Any]:
    """A copy of a turn schema whose every shape may carry ``lookups`` (must, ``required``)."""
    out = dict(schema)
    if "anyOf" in out:
        out["anyOf"] = [with_lookups(s, lookups, required=required) for s in out["anyOf"]]
    if isinstance(out.get("properties"), dict):
        if required:
            lookups = {**lookups, "minItems": 1}
            out["required"] = ["lookups", *[k for k in out.get("required", []) if k != "lookups"]]
        out["properties"] = (
            {"lookups": lookups, **out["properties"]}
            if required
            else {
                **out["properties"],
                "lookups": lookups,
            }
        )
    return out


def asked(data: Any) -> list[dict[str, Any]]:
    """The lookups a reply's JSON object asks for (at most MAX_ASKED), as plain data."""
    items = data.get("lookups") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return []
    out = []
    for item in items[:MAX_ASKED]:
        item = item if isinstance(item, dict) else {}
        args = item.get("args")
        out.append(
            {
                "tool": str(item.get("tool", ""))[:100],
                "call": str(item.get("call", ""))[:100],
                "args": _plain(args) if isinstance(args, dict) else {},
            }
        )
    return out


def _plain(value: Any) -> Any:
    """JSON args as TOML can hold them: no nulls, bounded strings."""
    if isinstance(value, dict):
        return {str(k)[:100]: _plain(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_plain(v) for v in value if v is not None]
    if isinstance(value, str):
        return value[:2000]
    return value


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cut(text: str, limit: int) -> tuple[str, bool]:
    """``text`` cut to ``limit`` UTF-8 bytes, the mark included, on a character boundary."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text, False
    mark = CUT_MARK.format(kept="{kept}", full=len(data))
    room = limit - len(mark.encode("utf-8")) - 16
    head = data[: max(room, 0)].decode("utf-8", errors="ignore")
    return head + mark.format(kept=len(head.encode("utf-8"))), True


async def run_lookups(
    spec: Spec,
    speaker: str,
    requests: list[dict[str, Any]],
    tools: ToolBox | None,
    redact: Callable[[str], str],
    first_id: int = 1,
    budget: LookupCaps | None = None,
) -> list[dict[str, Any]]:
    """Each request checked, run when allowed, and recorded whatever happens to it.

    ``budget`` holds the debate's lookup caps: asked before each lookup, and a result
    is cut to the bytes the caps leave.
    """
    used: dict[str, int] = {}
    records = []
    for n, req in enumerate(requests, start=first_id):
        record: dict[str, Any] = {"id": f"L{n}", **req}
        entry = next((t for t in spec.tools if t.name == req["tool"]), None)
        reason = _refusal(spec, speaker, entry, req, tools, used)
        if reason is None and budget is not None:
            reason = budget.lookup_refusal(speaker)
        if reason is None and entry is not None and tools is not None:
            if req["call"] in offer(entry, tools).writes:
                record["writes"] = True  # the person running moot allowed it to write
            used[entry.name] = used.get(entry.name, 0) + 1
            if budget is not None:
                budget.start_lookup(speaker)
            t0 = time.perf_counter()
            try:
                # In the turn's own task: a cancellation that meets the result is never lost
                # (wait_for on Python 3.11 could return the result and drop it).
                async with asyncio.timeout(entry.timeout_s):
                    text = await tools.run(entry.name, req["call"], req["args"])
                full = redact(str(text))
                limit, over = entry.max_result_bytes, None
                room = budget.lookup_room(speaker) if budget is not None else None
                if room is not None and room[0] < limit:
                    limit, over = room
                if over is not None and limit < MIN_CUT and len(full.encode("utf-8")) > limit:
                    raise ToolFailure(f"its result would pass the budget of {over}")
                result, was_cut = cut(full, limit)
                record.update(ok=True, result=result)
                if was_cut:
                    record["cut"] = True
                if budget is not None:
                    budget.keep_lookup_bytes(speaker, len(result.encode("utf-8")))
            except TimeoutError:
                reason = f"timed out after {entry.timeout_s:g} s"
            except ToolFailure as err:
                reason = err.message
            except Exception as err:  # a tool's bug is its failure, never the debate's
                reason = f"{type(err).__name__}: {err}"
            record["ms"] = round((time.perf_counter() - t0) * 1000, 3)
        if reason is not None:
            record.update(ok=False, reason=redact(reason)[:MAX_REASON], result="")
        record["sha256"] = digest(record["result"])
        record["bytes"] = len(record["result"].encode("utf-8"))
        records.append(record)
    return records


def _refusal(
    spec: Spec,
    speaker: str,
    entry: ToolEntry | None,
    req: dict[str, Any],
    tools: ToolBox | None,
    used: dict[str, int],
) -> str | None:
    if entry is None:
        return f"no tool {req['tool']!r} in this spec"
    if not may_call(spec, entry, speaker):
        return f"tool {entry.name!r} is not given to {speaker}"
    if tools is None:
        return f"tool {entry.name!r} is not running in this run"
    given = offer(entry, tools)
    if req["call"] in given.withheld:
        return f"{req['call']} is not offered: {given.withheld[req['call']]}"
    if req["call"] not in given.calls:
        return f"tool {entry.name!r} has no call {req['call']!r}"
    if used.get(entry.name, 0) >= entry.max_calls_per_turn:
        return f"over the budget of {entry.max_calls_per_turn} calls of {entry.name!r} per turn"
    return None


def results_message(records: list[dict[str, Any]]) -> dict[str, str]:
    """The user message that gives a model its lookups' results and asks for the answer."""
    parts = []
    for r in records:
        head = f"{r['id']}: {r['tool']}.{r['call']} {json.dumps(r['args'], ensure_ascii=False)}"
        body = r["result"] if r["ok"] else f"(refused or failed: {r['reason']})"
        parts.append(f"=== {head}\n{body}\n=== end of {r['id']}")
    return {
        "role": "user",
        "content": (
            "The results of your lookups:\n\n"
            + "\n\n".join(parts)
            + "\n\nNow give your whole answer in the required JSON. Further lookups are not "
            "run in this turn. Quote a result verbatim as evidence of kind tool_quote with "
            "source its id."
        ),
    }


def results(records: Iterable[dict[str, Any]] | None) -> dict[str, str]:
    """Id to result text of the lookups that succeeded: where a tool_quote must be found."""
    return {str(r.get("id")): str(r.get("result", "")) for r in records or () if r.get("ok")}


def lookup_problems(spec: Spec, speaker: str, records: Sequence[Any]) -> list[str]:
    """What ``moot verify`` finds wrong with a turn's recorded lookups (empty: all hold)."""
    problems: list[str] = []
    used: dict[str, int] = {}
    if len(records) > MAX_ASKED:
        problems.append(f"{len(records)} lookups, more than the {MAX_ASKED} a turn may record")
    for n, r in enumerate(records, start=1):
        if not isinstance(r, dict):
            problems.append(f"lookup {n} is not a table")
            continue
        rid = r.get("id")
        where = f"lookup {rid}"
        if rid != f"L{n}":
            problems.append(f"{where}: ids run L1, L2, ... in order; expected L{n}")
        result = r.get("result", "")
        if not isinstance(result, str):
            problems.append(f"{where}: result is not text")
            continue
        problems += [f"{where}: {p}" for p in _offer_problems(spec, r)]
        if r.get("sha256") != digest(result):
            problems.append(f"{where}: the result does not hash to its sha256")
        if r.get("bytes") != len(result.encode("utf-8")):
            problems.append(f"{where}: bytes is not the result's size")
        if not r.get("ok"):
            if result:
                problems.append(f"{where}: a refused or failed lookup has no result")
            continue
        entry = next((t for t in spec.tools if t.name == r.get("tool")), None)
        if entry is None:
            problems.append(f"{where}: no tool {r.get('tool')!r} in the spec")
            continue
        if not may_call(spec, entry, speaker):
            problems.append(f"{where}: tool {entry.name!r} was not given to {speaker}")
        used[entry.name] = used.get(entry.name, 0) + 1
        if used[entry.name] > entry.max_calls_per_turn:
            problems.append(
                f"{where}: over the budget of {entry.max_calls_per_turn} calls of "
                f"{entry.name!r} per turn"
            )
        if len(result.encode("utf-8")) > entry.max_result_bytes:
            problems.append(f"{where}: result over the bound of {entry.max_result_bytes} bytes")
    return problems


def _offer_problems(spec: Spec, record: dict[str, Any]) -> list[str]:
    """What the file shows against the lookup's call having been offered: a files call
    is a read, an MCP call within the spec's ``calls``, and a write listed there."""
    entry = next((t for t in spec.tools if t.name == record.get("tool")), None)
    call, writes = record.get("call"), record.get("writes")
    if entry is None:
        return []
    problems = []
    if writes is not None and writes is not True:
        problems.append("writes is only ever true")
    if writes is True and entry.builtin == "files":
        problems.append("the files tool never writes")
    elif writes is True and (entry.calls is None or call not in entry.calls):
        problems.append(f"{call} may write, but the calls of tool {entry.name!r} do not list it")
    if record.get("ok"):
        if entry.builtin == "files" and call not in FILES_CALLS:
            problems.append(f"the files tool has no call {call!r}")
        elif entry.calls is not None and call not in entry.calls:
            problems.append(f"{call} was not offered: the calls of tool {entry.name!r} omit it")
    return problems
