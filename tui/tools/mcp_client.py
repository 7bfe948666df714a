"""One stdio MCP server as a tool, through the official ``mcp`` SDK (extra moot[mcp]).

Started once per run and stopped at its end; its tools' names are the calls a
role may use, and a call's text content is the lookup's result. The SDK's client
lives in one task of its own, so turns in any task may call it and the run may
stop it from any other.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import tempfile
from pathlib import Path
from typing import Any

from tui.engine.core.ports import ToolFailure

START_TIMEOUT_S = 30.0
MAX_ARGS = 16  # arguments named in one call's hint; the rest are counted
MAX_HINT = 600  # characters of one call's hint
PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
TYPES = frozenset({"string", "integer", "number", "boolean", "array", "object", "null"})
# The SDK logs a traceback for each line a server writes that is not JSON-RPC; the
# failure is said once, in moot's own words, so its client's logs are kept off stderr.
logging.getLogger("mcp.client").addHandler(logging.NullHandler())


def signature(schema: Any) -> str:
    """A call's arguments as the debater is told them (``topic: string, limit?: integer``).

    From the server's input schema, names and types only: a name that is not plain
    (letters, digits, ``_.-``) is left out, an unknown type is ``any``, and the hint is
    bounded, so a server cannot put markup or a long text into the turn's schema.
    """
    if hasattr(schema, "model_dump"):  # some protocol versions give the schema as a model
        schema = schema.model_dump(by_alias=True, exclude_none=True)
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return ""
    required = schema.get("required")
    required = set(required) if isinstance(required, list) else set()
    shown = [
        f"{name}{'' if name in required else '?'}: {_type(prop)}"
        for name, prop in props.items()
        if isinstance(name, str) and PLAIN_NAME.fullmatch(name)
    ][:MAX_ARGS]
    hint = ", ".join(shown)
    if len(props) > len(shown):
        hint += f", (+{len(props) - len(shown)} more)"
    return hint if len(hint) <= MAX_HINT else hint[: MAX_HINT - 1] + "…"


def _type(prop: Any, depth: int = 0) -> str:
    """One argument's JSON type in words: ``string``, ``array of string | null``, else ``any``."""
    if not isinstance(prop, dict) or depth > 2:
        return "any"
    kind = prop.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k in TYPES]
        return " | ".join(kinds) if kinds else "any"
    if kind == "array":
        items = prop.get("items")
        return f"array of {_type(items, depth + 1)}" if isinstance(items, dict) else "array"
    if isinstance(kind, str):
        return kind if kind in TYPES else "any"
    options = prop.get("anyOf")
    if isinstance(options, list) and options:
        return " | ".join(_type(o, depth + 1) for o in options[:4])
    return "any"


class McpTool:
    """A stdio server: ``start`` launches it and lists its tools, ``run`` calls one."""

    def __init__(self, name: str, command: list[str], cwd: Path) -> None:
        self.name = name
        self.command = command
        self.cwd = cwd
        self.calls: tuple[str, ...] = ()
        self.read_only: frozenset[str] = frozenset()  # the calls it marks readOnlyHint
        self.hints: dict[str, str] = {}  # each call's arguments, from the server's schemas
        self._client: Any = None
        self._stop = asyncio.Event()
        self._owner: asyncio.Task[None] | None = None
        # The server's stderr: kept off the screen, its last line named when it fails.
        self._errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")

    async def start(self) -> None:
        """Launch the server and list its tools; ToolFailure naming the tool if it cannot."""
        try:
            from mcp import Client, StdioServerParameters
            from mcp.client.stdio import stdio_client
        except ImportError:
            raise ToolFailure(
                f"tool {self.name!r} is an MCP server; install moot[mcp] to use it"
            ) from None
        params = StdioServerParameters(
            command=self.command[0], args=self.command[1:], cwd=str(self.cwd)
        )
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        async def noticed(message: Any) -> None:
            """A line on stdout that is not JSON-RPC fails the start at once."""
            if isinstance(message, Exception) and not ready.done():
                ready.set_exception(ToolFailure("it wrote a line on stdout that is not JSON-RPC"))

        async def own() -> None:
            try:
                transport = stdio_client(params, errlog=self._errlog)
                async with Client(transport, message_handler=noticed) as client:
                    listed = await client.list_tools()
                    self.calls = tuple(t.name for t in listed.tools)
                    self.read_only = frozenset(t.name for t in listed.tools if _reads_only(t))
                    self.hints = {
                        t.name: signature(getattr(t, "input_schema", None)) for t in listed.tools
                    }
                    self._client = client
                    ready.set_result(None)
                    await self._stop.wait()
            except BaseException as err:
                if not ready.done():
                    ready.set_exception(err)
            finally:
                self._client = None

        self._owner = asyncio.create_task(own(), name=f"mcp tool {self.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), START_TIMEOUT_S)
        except Exception as err:
            if not ready.cancel():  # done: its failure is the one told below, so retrieved
                ready.exception()
            await self._stop_owner(cancel=True)  # waits for the process: its last words
            said = self._said()
            self._errlog.close()
            if isinstance(err, TimeoutError):
                why = f"it did not answer within {START_TIMEOUT_S:g} s"
            else:
                why = err.message if isinstance(err, ToolFailure) else _why(err)
            raise ToolFailure(
                f"tool {self.name!r}: the MCP server {self.command[0]!r} did not start: {why}{said}"
            ) from None

    def _said(self) -> str:
        """The last line the server wrote to stderr, if any."""
        try:
            self._errlog.seek(0)
            lines = [line.strip() for line in self._errlog.read()[-4000:].splitlines()]
        except (OSError, ValueError):
            return ""
        last = next((line for line in reversed(lines) if line), "")
        return f" (it said: {last[:300]})" if last else ""

    async def run(self, call: str, args: dict[str, Any]) -> str:
        client = self._client
        if client is None:
            raise ToolFailure(f"the MCP server of tool {self.name!r} is not running")
        try:
            result = await client.call_tool(call, args)
        except Exception as err:  # a dead server, or garbage on its stdout
            raise ToolFailure(
                f"the MCP server of tool {self.name!r} failed: {_why(err)}{self._said()}"
            ) from None
        text = "\n".join(
            str(getattr(block, "text", "")) for block in getattr(result, "content", None) or []
        )
        if getattr(result, "is_error", False):
            raise ToolFailure(f"{self.name}.{call} failed: {text[:500]}")
        return text

    async def aclose(self) -> None:
        await self._stop_owner()
        self._errlog.close()

    async def _stop_owner(self, *, cancel: bool = False) -> None:
        """End the client's task: let it leave its ``async with``, or ``cancel`` it
        (a server that never started leaves it waiting on the server)."""
        self._stop.set()
        if cancel and self._owner is not None:
            self._owner.cancel()
        if self._owner is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(self._owner, 10)


def _reads_only(tool: Any) -> bool:
    """Whether the server marks a tool read-only; unmarked is taken to write."""
    marks = getattr(tool, "annotations", None)
    hint = getattr(marks, "read_only_hint", getattr(marks, "readOnlyHint", None))
    return hint is True


def _why(err: BaseException) -> str:
    """One line for an error, the first of a group's (the SDK raises ExceptionGroups)."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}".rstrip(": ")
