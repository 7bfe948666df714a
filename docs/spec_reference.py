"""The spec reference page, written from the spec's own pydantic models at every build:
each table and key with its type, default and bounds, so it says what `moot validate`
accepts and cannot drift from it."""

from __future__ import annotations

import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from annotated_types import Ge, Gt, Le, Lt, MaxLen, MinLen
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from tui.engine.specs.spec import Spec

SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean", Any: "any"}


def _members(annotation: Any) -> list[Any]:
    """The alternatives of a union (``X | None`` included), or the annotation alone."""
    if get_origin(annotation) in (Union, types.UnionType):
        return list(get_args(annotation))
    return [annotation]


def _table(annotation: Any) -> tuple[type[BaseModel], bool] | None:
    """The model a key holds as a table, and whether it is an array of tables."""
    for member in _members(annotation):
        if isinstance(member, type) and issubclass(member, BaseModel):
            return member, False
        if get_origin(member) is list:
            (item,) = get_args(member)
            if isinstance(item, type) and issubclass(item, BaseModel):
                return item, True
    return None


def _type(annotation: Any) -> str:
    """A TOML reader's name for an annotation: ``"open"``, list of string, one of …"""
    origin = get_origin(annotation)
    if origin is Annotated:
        inner, *meta = get_args(annotation)
        limits = [limit for info in meta if isinstance(info, FieldInfo) for limit in _limits(info)]
        return _type(inner) + (f" ({', '.join(limits)})" if limits else "")
    if origin is Literal:
        return " or ".join(f'`"{value}"`' for value in get_args(annotation))
    if origin in (Union, types.UnionType):
        shown = [_type(m) for m in get_args(annotation) if m is not type(None)]
        return "number" if shown == ["integer", "number"] else " or ".join(shown)
    if origin is list:
        return f"list of {_type(get_args(annotation)[0])}"
    if origin is dict:
        return "table"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "table"
    return SCALARS.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _limits(info: FieldInfo) -> list[str]:
    """A field's bounds in words, from its pydantic metadata."""
    limits: list[str] = []
    for meta in info.metadata:
        if isinstance(meta, Ge):
            limits.append(f"≥ {meta.ge}")
        if isinstance(meta, Gt):
            limits.append(f"> {meta.gt}")
        if isinstance(meta, Le):
            limits.append(f"≤ {meta.le}")
        if isinstance(meta, Lt):
            limits.append(f"< {meta.lt}")
        if isinstance(meta, MinLen):
            limits.append(f"length ≥ {meta.min_length}")
        if isinstance(meta, MaxLen):
            limits.append(f"length ≤ {meta.max_length}")
        pattern = getattr(meta, "pattern", None)
        if pattern:
            limits.append(f"matches `{pattern}`")
    return limits


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return str(value)


def _default(info: FieldInfo) -> str:
    if info.default_factory is not None:
        return f"default `{_toml(info.default_factory())}`"  # type: ignore[call-arg]
    if info.default is PydanticUndefined:
        return "**required**"
    if info.default is None:
        return "unset by default"
    return f"default `{_toml(info.default)}`"


def _key(name: str, info: FieldInfo) -> str:
    table = _table(info.annotation)
    kind = "table" if table is None or not table[1] else "array of tables"
    shown = kind if table else _type(info.annotation)
    parts = [shown, _default(info), *_limits(info)]
    line = f"- **`{name}`**: {'; '.join(parts)}"
    return line + (f". {info.description}" if info.description else "")


def _sections(model: type[BaseModel], path: str, array: bool) -> list[str]:
    """``model``'s section (heading, its docstring, its keys), then each table it holds."""
    heading = f"[[{path}]]" if array else f"[{path}]"
    lines = [f"## `{heading}`", "", (model.__doc__ or "").strip().split("\n\n")[0], ""]
    lines += [_key(name, info) for name, info in model.model_fields.items()]
    lines.append("")
    for name, info in model.model_fields.items():
        table = _table(info.annotation)
        if table is not None:
            lines += _sections(table[0], f"{path}.{name}", table[1])
    return lines


def spec_reference() -> str:
    """The whole page, in Markdown."""
    lines = [
        "# Spec reference",
        "",
        "Every table and key a spec may hold, with its type, default and bounds. This",
        "page is written from the spec's own models (`tui/engine/specs/spec.py`) each time the",
        "site is built, so it is what `moot validate` accepts. A key not listed is refused.",
        "How the keys work together, with examples, is in [The spec](../spec.md); the keys",
        "each protocol reads are on its page.",
        "",
    ]
    for name, info in Spec.model_fields.items():
        table = _table(info.annotation)
        assert table is not None, f"{name}: a spec's top-level key is a table"
        lines += _sections(table[0], name, table[1])
    return "\n".join(lines)
