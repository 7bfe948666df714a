"""The provider interface every model backend implements.

A provider receives a fully built prompt and returns raw text. Parsing,
validation, re-asking and recording stay in the engine, so a provider cannot
decide anything about the debate.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from tui.engine.core.schedule import Slot
    from tui.engine.terms.spec import Debater

TokenSink = Callable[[str], None]


@dataclass(slots=True)
class TurnRequest:
    """Everything a provider needs for one call, built fresh for every call."""

    debater: Debater
    slot: Slot
    messages: list[dict[str, str]]
    schema_name: str
    json_schema: dict[str, Any]
    votes: list[str]
    attempt: int = 1
    speaker_turn: int = 1  # 1-based count of this speaker's turns, replayed ones included


@dataclass(slots=True)
class TurnReply:
    text: str
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


class ProviderError(Exception):
    """A model call that failed after the provider's own retries.

    ``kind`` is one of: timeout, rate_limit, server, connection, auth,
    not_found, bad_request, internal. The message is safe to show and store.
    """

    def __init__(self, kind: str, message: str) -> None:
        self.kind = kind
        self.message = message
        super().__init__(f"{kind}: {message}")


class Provider(Protocol):
    async def complete(self, request: TurnRequest, on_token: TokenSink | None) -> TurnReply:
        """Return the model's raw text for one turn, streaming tokens to on_token."""
        ...

    async def aclose(self) -> None:
        """Release anything held (servers, clients)."""
        ...


class ToolFailure(Exception):
    """A lookup that failed in its tool (a server error, a refused path); safe to store."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class ToolBox(Protocol):
    """The tools of one run, started before its first turn (``[[tools]]``).

    The engine decides who may call what and records every lookup; a tool box
    only runs the calls it is given and returns their text.
    """

    async def start(self) -> None:
        """Open every tool (idempotent); ToolFailure names one that cannot be opened."""
        ...

    # Whether the person running moot let listed calls that may write be offered
    # (``--allow-tool-writes``); never from a spec or a session file.
    allow_writes: bool

    def calls(self, tool: str) -> tuple[str, ...]:
        """Every call name ``tool`` has (empty for a tool that is not running)."""
        ...

    def read_only(self, tool: str) -> frozenset[str]:
        """The calls ``tool`` marks read-only (MCP's ``readOnlyHint``; all of the files tool)."""
        ...

    def hints(self, tool: str) -> Mapping[str, str]:
        """Each call's arguments as plain text (``topic: string``), bounded; may be empty."""
        ...

    async def run(self, tool: str, call: str, args: dict[str, Any]) -> str:
        """The text one call returns; ToolFailure when the tool says it failed."""
        ...

    async def aclose(self) -> None:
        """Stop every server the box started."""
        ...
