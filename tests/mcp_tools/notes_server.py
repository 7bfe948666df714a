"""A small stdio MCP server, written with the official SDK, that the lookup tests start.

``note`` returns a fixed design note; ``search`` takes optional arguments; ``fail`` is a tool error; ``crash`` ends
the process mid-call, as a dying server would.
"""

from __future__ import annotations

import os

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

NOTE = "Captures are keyed on the event id and deduplicated for 24 hours."

server = MCPServer("notes", log_level="ERROR")


@server.tool()
def note(topic: str) -> str:
    """The design note on a topic."""
    return f"{topic}: {NOTE}"


@server.tool()
def search(query: str, limit: int = 5, tags: list[str] | None = None) -> str:
    """Notes holding ``query`` (the argument hints' test: a default, an optional list)."""
    return f"{query}: {NOTE}"[: limit * 20]


@server.tool()
def fail(reason: str) -> str:
    """Always fails with ``reason``."""
    raise ToolError(reason)


@server.tool()
def crash() -> str:
    """Ends the server process at once."""
    os._exit(3)


if __name__ == "__main__":
    server.run("stdio")
