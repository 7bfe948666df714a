"""Prices from LiteLLM's bundled cost map, read as data: pricing a call made through the
openai SDK must not import LiteLLM (seconds of start-up, on the event loop, mid-call)."""

from __future__ import annotations

import functools
import importlib.util
import json
from pathlib import Path
from typing import Any

COST_MAP = "model_prices_and_context_window_backup.json"  # the map LiteLLM reads offline
OPENAI_PREFIX = "openai/"


@functools.cache
def _cost_map() -> dict[str, Any]:
    """The map shipped inside the installed LiteLLM, found without importing it."""
    spec = importlib.util.find_spec("litellm")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    for folder in folders:
        try:
            data = json.loads((Path(folder) / COST_MAP).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            return data
    return {}


def map_cost(model: str, tokens_in: int, tokens_out: int) -> float:
    """What the map charges for the tokens (by the model's name, then without ``openai/``);
    0.0 for a model it has no price for, as LiteLLM's own pricing gives."""
    for name in (model, model.removeprefix(OPENAI_PREFIX)):
        entry = _cost_map().get(name)
        if not isinstance(entry, dict):
            continue
        per_in, per_out = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
        if isinstance(per_in, int | float) and isinstance(per_out, int | float):
            cost = float(per_in) * tokens_in + float(per_out) * tokens_out
            return cost if cost >= 0 else 0.0
    return 0.0
