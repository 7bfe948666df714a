"""Keep secrets out of anything stored or shown: key shapes and env-var values."""

from __future__ import annotations

import os
import re

from tui.engine.spec import SECRET_SHAPES

_ENV_HINT = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.IGNORECASE)
_URL_USERINFO = re.compile(r"(//)[^/@\s]+@")
_URL_SECRET_PARAM = re.compile(
    r"([?&](?:api[_-]?key|key|token|access_token|secret|password)=)[^&\s]+", re.IGNORECASE
)


def redact(text: str) -> str:
    """Replace key shapes, URL credentials, and the value of any secret-named env var."""
    out = SECRET_SHAPES.sub("[redacted]", text)
    out = _URL_USERINFO.sub(r"\1[redacted]@", out)
    out = _URL_SECRET_PARAM.sub(r"\1[redacted]", out)
    for name, value in os.environ.items():
        if len(value) >= 8 and _ENV_HINT.search(name) and value in out:
            out = out.replace(value, "[redacted]")
    return out
