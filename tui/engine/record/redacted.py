"""A loaded session with every known secret out of it, for the exports.

A file written before model text was redacted may still hold a key, so an export
redacts the whole loaded session, not only what a run writes today.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tui.engine.basics.redact import Redactor
from tui.engine.record.session import SessionData


def redacted_session(data: SessionData) -> SessionData:
    """A loaded session with every known secret replaced."""
    redact = Redactor.for_spec(data.spec)
    turns = [
        dataclasses.replace(
            t,
            content=redact.tree(t.content),
            raw=redact.tree(t.raw),
            error=redact.tree(t.error),
            derived=redact.tree(t.derived),
        )
        for t in data.turns
    ]
    return dataclasses.replace(
        data,
        path=Path(redact(str(data.path))),
        meta=redact.tree(data.meta),
        spec_raw=redact.tree(data.spec_raw),
        spec=_model(data.spec, redact),
        turns=turns,
        actions=redact.tree(data.actions),
        result=redact.tree(data.result),
        outcomes=redact.tree(data.outcomes),
    )


def _model(value: Any, redact: Redactor) -> Any:
    """A pydantic model (or a value in one) with every string redacted; private state kept."""
    if isinstance(value, BaseModel):
        fields = type(value).model_fields
        return value.model_copy(update={n: _model(getattr(value, n), redact) for n in fields})
    if type(value) is str:  # not an enum member, whose type must stay
        return redact(value)
    if isinstance(value, list | tuple):
        return type(value)(_model(v, redact) for v in value)
    if isinstance(value, Mapping):
        return redact.tree(value)
    return value
