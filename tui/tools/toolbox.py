"""The tools of one run, as the engine's ``ToolBox`` port: started before the first turn.

A spec's files root must lie inside the spec's folder (or a ``--allow-read``
path); an MCP server that will not start is a clear error naming its tool.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tui.engine.ports import ToolFailure
from tui.engine.readroots import ReadRoots
from tui.engine.safeio import FileRefused
from tui.engine.spec import Spec
from tui.tools.files import CALLS, FilesTool
from tui.tools.mcp_client import McpTool, McpUnavailable


class ToolStartError(Exception):
    """A tool that could not be started; the message names it and says why."""


class RunTools:
    """Implements ``tui.engine.ports.ToolBox`` for the ``[[tools]]`` of one spec."""

    def __init__(self) -> None:
        self._files: dict[str, FilesTool] = {}
        self._mcp: dict[str, McpTool] = {}
        self._stack = contextlib.AsyncExitStack()

    @classmethod
    async def start(
        cls, spec: Spec, spec_folder: str | Path, allow_read: Iterable[str | Path] = ()
    ) -> RunTools:
        box = cls()
        roots = ReadRoots.of(spec_folder, allow_read)
        try:
            for tool in spec.tools:
                if tool.builtin == "files" and tool.root is not None:
                    box._files[tool.name] = FilesTool(_files_root(roots, tool.name, tool.root))
                elif tool.mcp is not None:
                    server = McpTool(tool.name, tool.mcp, roots.spec_folder)
                    try:
                        await asyncio.wait_for(server.start(box._stack), tool.timeout_s + 30)
                    except McpUnavailable as err:
                        raise ToolStartError(str(err)) from None
                    except Exception as err:
                        raise ToolStartError(
                            f"tool {tool.name!r}: the MCP server {tool.mcp[0]!r} did not start: "
                            f"{type(err).__name__}: {err}"
                        ) from None
                    box._mcp[tool.name] = server
        except BaseException:
            await box.aclose()
            raise
        return box

    def calls(self, tool: str) -> tuple[str, ...]:
        if tool in self._files:
            return CALLS
        server = self._mcp.get(tool)
        return server.calls if server is not None else ()

    async def run(self, tool: str, call: str, args: dict[str, Any]) -> str:
        if tool in self._files:
            return await asyncio.to_thread(self._files[tool].run, call, args)
        server = self._mcp.get(tool)
        if server is None:
            raise ToolFailure(f"tool {tool!r} is not running")
        return await server.run(call, args)

    async def aclose(self) -> None:
        with contextlib.suppress(Exception):
            await self._stack.aclose()


def _files_root(roots: ReadRoots, name: str, root: str) -> Path:
    try:
        real = roots.resolve(roots.spec_folder / root)
    except FileRefused as err:
        raise ToolStartError(f"tool {name!r}: root {root!r} is {err}") from None
    if not real.is_dir():
        raise ToolStartError(f"tool {name!r}: root {root!r} is not a folder")
    return real


def missing_commands(spec: Spec) -> list[str]:
    """Preflight: each MCP tool whose command is not found on PATH, named."""
    return [
        f"tool {t.name!r}: command {t.mcp[0]!r} not found"
        for t in spec.tools
        if t.mcp is not None and shutil.which(t.mcp[0]) is None
    ]
