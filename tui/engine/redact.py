"""Keep secrets out of anything stored or shown: key shapes and env-var values."""

from __future__ import annotations

import os
import re

from tui.engine.spec import SECRET_SHAPES

_ENV_HINT = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE)


def redact(text: str) -> str:
    """Replace anything shaped like a key, and the value of any secret-named env var."""
    out = SECRET_SHAPES.sub("[redacted]", text)
    for name, value in os.environ.items():
        if len(value) >= 8 and _ENV_HINT.search(name) and value in out:
            out = out.replace(value, "[redacted]")
    return out
