"""The tools of one run, as the engine's ``ToolBox`` port.

A files root must lie inside the spec's folder (or a ``--allow-read`` path); an
MCP server is launched on ``start`` (before the first turn) and stopped on
``aclose``; one that will not start is a clear error naming its tool.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tui.engine.basics.errors import SessionError, SpecError
from tui.engine.basics.safeio import FileRefused
from tui.engine.core.ports import ToolFailure
from tui.engine.grounding.lookups import FILES_CALLS, files_root
from tui.engine.grounding.readroots import ReadRoots
from tui.engine.record.session import SessionData
from tui.engine.record.trust import recorded_tools, session_tools_refusal, spec_tools_refusal
from tui.engine.specs.spec import Spec
from tui.tools.files import FilesTool
from tui.tools.mcp_client import McpTool


class RunTools:
    """Implements ``tui.engine.core.ports.ToolBox`` for the ``[[tools]]`` of one spec."""

    def __init__(
        self,
        spec: Spec,
        spec_folder: str | Path,
        allow_read: Iterable[str | Path] = (),
        *,
        writes: bool = False,
    ) -> None:
        self._spec = spec
        self.allow_writes = writes  # --allow-tool-writes: listed calls that may write
        self._roots = ReadRoots.of(spec_folder, allow_read)
        self._files: dict[str, FilesTool] = {}
        self._mcp: dict[str, McpTool] = {}
        self._lock = asyncio.Lock()
        self._started = False

    async def start(self) -> None:
        """Open every tool once; ToolFailure names the first that cannot be opened."""
        async with self._lock:
            if self._started:
                return
            self._started = True
            for tool in self._spec.tools:
                if tool.builtin == "files" and tool.root is not None:
                    self._files[tool.name] = FilesTool(
                        _files_root(self._roots, tool.name, tool.root)
                    )
                elif tool.mcp is not None:
                    server = McpTool(tool.name, tool.mcp, self._roots.spec_folder)
                    await server.start()
                    self._mcp[tool.name] = server

    def calls(self, tool: str) -> tuple[str, ...]:
        if tool in self._files:
            return FILES_CALLS
        server = self._mcp.get(tool)
        return server.calls if server is not None else ()

    def read_only(self, tool: str) -> frozenset[str]:
        if tool in self._files:
            return frozenset(FILES_CALLS)
        server = self._mcp.get(tool)
        return server.read_only if server is not None else frozenset()

    def hints(self, tool: str) -> dict[str, str]:
        server = self._mcp.get(tool)
        return server.hints if server is not None else {}  # the files tool is described apart

    async def run(self, tool: str, call: str, args: dict[str, Any]) -> str:
        if tool in self._files:
            return await asyncio.to_thread(self._files[tool].run, call, args)
        server = self._mcp.get(tool)
        if server is None:
            raise ToolFailure(f"tool {tool!r} is not running")
        return await server.run(call, args)

    async def aclose(self) -> None:
        for server in self._mcp.values():
            await server.aclose()
        self._mcp.clear()


def _files_root(roots: ReadRoots, name: str, root: str) -> Path:
    """As ``moot validate`` checks it (:func:`files_root`), again when the tools start:
    a resumed session's spec was not read from a file, and a folder may have changed."""
    try:
        return files_root(roots, root)
    except FileRefused as err:
        raise ToolFailure(f"tool {name!r}: root {root!r} is {err}") from None


def run_tools(
    spec: Spec,
    spec_source: str | Path | None,
    allow_read: Iterable[str | Path] = (),
    *,
    allow_tools: bool = False,
    writes: bool = False,
) -> RunTools | None:
    """The tools for a run of ``spec`` read from ``spec_source``; None when it names none.

    Without the spec's path (a spec given as text) there is no folder to root the
    files tool in, so no tool runs and every lookup is refused on record. A spec
    naming an MCP command is refused (SpecError naming each) unless the person
    running moot said ``--allow-tools`` (:mod:`tui.engine.record.trust`).
    """
    if not spec.tools or spec_source is None or not Path(spec_source).is_file():
        return None
    if why := spec_tools_refusal(spec, allow_tools=allow_tools):
        raise SpecError(str(spec_source), [why])
    return RunTools(spec, Path(spec_source).resolve().parent, allow_read, writes=writes)


def session_tools(
    data: SessionData,
    allow_read: Iterable[str | Path] = (),
    *,
    allow_tools: bool = False,
    writes: bool = False,
) -> RunTools | None:
    """The tools to go on with a saved session, rooted in the spec folder its run recorded.

    A session that recorded no folder (a spec given as text, or a file written before
    moot recorded it) runs no tool: its lookups are refused on record. The commands
    and folders come from the file, so they start only when trusted keys vouch for
    the records naming them (:mod:`tui.engine.record.trust`) or with ``--allow-tools``: a
    session sent by someone else must not run a program or read a folder by being
    resumed.
    """
    if not recorded_tools(data):
        return None
    if why := session_tools_refusal(data, allow_tools=allow_tools):
        raise SessionError(str(data.path), [why])
    return RunTools(data.spec, str(data.meta["spec_folder"]), allow_read, writes=writes)
