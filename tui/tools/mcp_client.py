"""One stdio MCP server as a tool, through the official ``mcp`` SDK (extra moot[mcp]).

Started once per run and stopped at its end; its tools' names are the calls a
role may use, and a call's text content is the lookup's result. The SDK's client
lives in one task of its own, so turns in any task may call it and the run may
stop it from any other.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
from pathlib import Path
from typing import Any

from tui.engine.ports import ToolFailure

START_TIMEOUT_S = 30.0


class McpTool:
    """A stdio server: ``start`` launches it and lists its tools, ``run`` calls one."""

    def __init__(self, name: str, command: list[str], cwd: Path) -> None:
        self.name = name
        self.command = command
        self.cwd = cwd
        self.calls: tuple[str, ...] = ()
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

        async def own() -> None:
            try:
                transport = stdio_client(params, errlog=self._errlog)
                async with Client(transport, read_timeout_seconds=START_TIMEOUT_S) as client:
                    listed = await client.list_tools()
                    self.calls = tuple(t.name for t in listed.tools)
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
            await self._stop_owner()  # waits for the process, so its last words are in the log
            said = self._said()
            self._errlog.close()
            raise ToolFailure(
                f"tool {self.name!r}: the MCP server {self.command[0]!r} did not start: "
                f"{_why(err)}{said}"
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

    async def _stop_owner(self) -> None:
        self._stop.set()
        if self._owner is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(self._owner, 10)


def _why(err: BaseException) -> str:
    """One line for an error, the first of a group's (the SDK raises ExceptionGroups)."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    text = str(err).strip().splitlines()
    return f"{type(err).__name__}: {text[0] if text else ''}".rstrip(": ")
