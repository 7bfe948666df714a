"""LiteLLM, imported once and quietly, only when a call needs it (it takes seconds)."""

from __future__ import annotations

import logging
import os
from typing import Any

_litellm: Any = None


def litellm_lib() -> Any:
    """Import LiteLLM once, quietly, with the local cost map and no retries of its own."""
    global _litellm
    if _litellm is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        os.environ.setdefault("LITELLM_LOG", "CRITICAL")
        import litellm

        litellm.suppress_debug_info = True
        litellm.set_verbose = False  # set, though not exported
        litellm.telemetry = False
        litellm.num_retries = 0
        for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm", "httpx"):
            logging.getLogger(name).setLevel(logging.CRITICAL + 1)
        _litellm = litellm
    return _litellm
