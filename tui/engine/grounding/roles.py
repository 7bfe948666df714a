"""Whom a ``roles`` list names: debater ids, or the [debate] role keys of the protocol.

``[[context]]`` documents and ``[[tools]]`` entries both say who may see or call
them this way, so one reading serves both: checked in the raw spec, by key path,
and asked of a validated spec for each speaker.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tui.engine.terms.spec import Spec


def allowed_roles(raw: Mapping[str, Any], debater_keys: Iterable[str]) -> set[Any]:
    """What a raw spec's ``roles`` may name: its debaters' ids and the protocol's role keys."""
    debaters = raw.get("debaters")
    ids = (
        {d.get("id") for d in debaters if isinstance(d, dict)}
        if isinstance(debaters, list)
        else set()
    )
    return ids | set(debater_keys)


def role_problems(where: str, roles: Any, allowed: set[Any]) -> list[str]:
    """Each entry of ``roles`` (at key path ``where``) that names no one, in words."""
    return [
        f"{where}.roles[{j}]: {role!r} is neither a debater id nor a role "
        f"of this protocol ({', '.join(sorted(map(str, allowed)))})"
        for j, role in enumerate(roles if isinstance(roles, list) else [])
        if isinstance(role, str) and role not in allowed
    ]


def holds(spec: Spec, role: str, speaker: str) -> bool:
    """Whether ``role`` names ``speaker``: its id, or a [debate] role key it holds."""
    if role == speaker:
        return True
    held = getattr(spec.debate, role, None) if role in spec.terms.debater_keys else None
    return held == speaker or (isinstance(held, list) and speaker in held)
