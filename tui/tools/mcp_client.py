"""One stdio MCP server as a tool, through the official ``mcp`` SDK (extra moot[mcp]).

Started once per run and stopped at its end; its tools' names are the calls a
role may use, and a call's text content is the lookup's result.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from tui.engine.ports import ToolFailure

START_TIMEOUT_S = 30.0


class McpUnavailable(Exception):
    """The ``mcp`` extra is not installed."""


class McpTool:
    """A running stdio server: ``start`` lists its tools, ``run`` calls one."""

    def __init__(self, name: str, command: list[str], cwd: Path) -> None:
        self.name = name
        self.command = command
        self.cwd = cwd
        self.calls: tuple[str, ...] = ()
        self._client: Any = None

    async def start(self, stack: contextlib.AsyncExitStack) -> None:
        try:
            from mcp import Client, StdioServerParameters
        except ImportError:
            raise McpUnavailable(
                f"tool {self.name!r} is an MCP server; install moot[mcp] to use it"
            ) from None
        params = StdioServerParameters(
            command=self.command[0], args=self.command[1:], cwd=str(self.cwd)
        )
        self._client = await stack.enter_async_context(
            Client(params, read_timeout_seconds=START_TIMEOUT_S)
        )
        listed = await self._client.list_tools()
        self.calls = tuple(t.name for t in listed.tools)

    async def run(self, call: str, args: dict[str, Any]) -> str:
        try:
            result = await self._client.call_tool(call, args)
        except Exception as err:  # a dead server or garbage on its stdout
            raise ToolFailure(
                f"MCP server {self.name!r} failed: {type(err).__name__}: {err}"
            ) from None
        text = "\n".join(
            str(getattr(block, "text", "")) for block in getattr(result, "content", []) or []
        )
        if getattr(result, "is_error", False) or getattr(result, "isError", False):
            raise ToolFailure(f"{self.name}.{call} failed: {text[:500]}")
        return text
