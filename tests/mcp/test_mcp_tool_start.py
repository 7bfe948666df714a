"""An MCP server that cannot start is one clear line and exit 2: never a traceback,
never asyncio's "Future exception was never retrieved", within the start timeout.

Each server is a tiny Python script; moot runs in a subprocess (its real stderr) with
the start timeout cut to a few seconds so the hanging server is given up on soon.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import tomli_w

from tests.engine.test_lookups import challenge_raw, reviewer_turn

MOOT_WITH_SHORT_START = (
    "import sys; import tui.tools.mcp_client as m; m.START_TIMEOUT_S = 3\n"
    "from tui.cli import main; sys.exit(main(sys.argv[1:]))"
)
SERVERS = {
    # Reads its stdin to the end and never answers initialize.
    "hangs": "import sys\nsys.stdin.read()\n",
    # Two thousand lines of prose where JSON-RPC belongs, then waits.
    "garbage": "import sys\nfor i in range(2000):\n    print('not json', i, flush=True)\n"
    "sys.stdin.read()\n",
}


@pytest.mark.parametrize(
    ("server", "why"),
    [
        ("hangs", "it did not answer within 3 s"),
        ("garbage", "it wrote a line on stdout that is not JSON-RPC"),
    ],
)
def test_a_server_that_cannot_start_is_one_line(tmp_path: Path, server: str, why: str) -> None:
    script = tmp_path / f"{server}.py"
    script.write_text(SERVERS[server])
    raw = challenge_raw(reviewer_turn("x", []))
    raw["tools"] = [{"name": "notes", "mcp": [sys.executable, str(script)], "roles": ["reviewer"]}]
    spec = tmp_path / "spec.toml"
    spec.write_text(tomli_w.dumps(raw))
    done = subprocess.run(
        [sys.executable, "-c", MOOT_WITH_SHORT_START, "run", str(spec), "--headless"]
        + ["--allow-tools", "--no-preflight", "--out", str(tmp_path / "s.toml")],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "never retrieved" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if not line.startswith("moot: tool notes:")]
    assert lines[0].endswith(": tools: 1 problem")
    assert lines[1:] == [
        f"  - tool 'notes': the MCP server {sys.executable!r} did not start: {why}"
    ]
