"""Commented starting specs for ``moot new``: one per registered protocol, from its module."""

from __future__ import annotations

from tui.engine.protocols import PROTOCOLS

TEMPLATES: dict[str, str] = {name: protocol.template for name, protocol in PROTOCOLS.items()}
