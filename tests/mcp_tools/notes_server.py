"""A small stdio MCP server, written with the official SDK, that the lookup tests start.

``note`` returns a fixed design note; ``search`` takes optional arguments; ``fail`` is a tool error; ``crash`` ends
the process mid-call, as a dying server would. Those four are marked read-only. ``append`` writes a file in the
server's folder and says so (``readOnlyHint = false``); ``tidy`` removes that file and says nothing about itself.
"""

from __future__ import annotations

import os
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

NOTE = "Captures are keyed on the event id and deduplicated for 24 hours."
APPENDED = "appended.txt"  # in the server's working folder: the spec's

server = MCPServer("notes", log_level="ERROR")
READS = ToolAnnotations(read_only_hint=True)


@server.tool(annotations=READS)
def note(topic: str) -> str:
    """The design note on a topic."""
    return f"{topic}: {NOTE}"


@server.tool(annotations=READS)
def search(query: str, limit: int = 5, tags: list[str] | None = None) -> str:
    """Notes holding ``query`` (the argument hints' test: a default, an optional list)."""
    return f"{query}: {NOTE}"[: limit * 20]


@server.tool(annotations=READS)
def fail(reason: str) -> str:
    """Always fails with ``reason``."""
    raise ToolError(reason)


@server.tool(annotations=READS)
def crash() -> str:
    """Ends the server process at once."""
    os._exit(3)


@server.tool(annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False))
def append(text: str) -> str:
    """Appends ``text`` to a file in the server's folder: a call that writes."""
    with Path(APPENDED).open("a", encoding="utf-8") as f:
        f.write(text + "\n")
    return f"appended to {APPENDED}"


@server.tool()
def tidy() -> str:
    """Removes the appended file; unmarked, so taken to write."""
    Path(APPENDED).unlink(missing_ok=True)
    return "tidied"


if __name__ == "__main__":
    server.run("stdio")
