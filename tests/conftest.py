"""Suite-wide guards (no network beyond loopback, user folders redirected to tmp) and the
fake OpenAI-compatible server fixture."""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import tui.render.export
from tests.export_schema import checked
from tests.fake_openai import FakeOpenAI
from tests.llama_server import LlamaServer
from tui.app.gc_policy import tune_for_console
from tui.providers import litellm_lib
from tui.providers.local import usable_cpus

# Every JSON export a test makes is validated against the published schema. Wrapped
# here, before any test module imports the name, so direct imports get it too.
tui.render.export.to_json = checked(tui.render.export.to_json)


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    """Note when the first test starts, for bench/setup_time.py (only when it asks)."""
    stamp = os.environ.get("MOOT_FIRST_TEST_STAMP")
    if stamp and not os.path.exists(stamp):
        Path(stamp).write_text(f"{time.time()}\n")


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    """Each test process collects garbage as the console does (tui/app/gc_policy.py): with
    Python's defaults, full collections were a quarter of the console tests' CPU."""
    tune_for_console()


class _Watched:
    """LiteLLM as ``litellm_lib()`` hands it out, noting that a test used it."""

    def __init__(self, real: Any, used: list[str]) -> None:
        self._real, self._used = real, used

    def __getattr__(self, name: str) -> Any:
        self._used.append(name)
        return getattr(self._real, name)


@pytest.fixture(autouse=True)
def _litellm_stays_in_its_group(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """A test that uses LiteLLM in its process belongs to xdist group ``litellm``: the
    import costs each worker 7 s of CPU, so one worker runs every such test. Whichever
    test of a process comes first, one outside the group fails: if LiteLLM is not loaded
    yet, by loading it; if it is, by using it (moot reaches it only through
    ``litellm_lib()``, which hands out a watched module here)."""
    groups = {m.args[0] for m in request.node.iter_markers("xdist_group") if m.args}
    if "litellm" in groups:
        yield
        return
    loaded = "litellm" in sys.modules
    used: list[str] = []
    if litellm_lib._litellm is not None:
        monkeypatch.setattr(litellm_lib, "_litellm", _Watched(litellm_lib._litellm, used))
    yield
    assert not used and (loaded or "litellm" not in sys.modules), (
        f"{request.node.nodeid} uses LiteLLM: mark its module "
        'pytestmark = pytest.mark.xdist_group("litellm")'
    )


@pytest.fixture(autouse=True)
def _drop_textual_style_caches() -> Iterator[None]:
    """Textual 8 caches a method on each widget's styles cache with ``lru_cache``, which
    keeps the last 1,024 of them, and every line they drew, alive after their apps close:
    in one process running many apps that was hundreds of thousands of objects for every
    later collection to walk."""
    yield
    styles_cache = sys.modules.get("textual._styles_cache")
    if styles_cache is not None:
        styles_cache.StylesCache.get_inner_outer.cache_clear()


_real_connect = socket.socket.connect
_LOOPBACK = ("127.", "::1", "localhost")


def _guarded_connect(self: socket.socket, address: tuple[Any, ...] | str | bytes) -> None:
    host = address[0] if isinstance(address, tuple) else str(address)
    if self.family in (socket.AF_INET, socket.AF_INET6) and not str(host).startswith(_LOOPBACK):
        raise OSError(f"tests must not reach the network (tried {host})")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)


# Under pytest-xdist another worker always holds a core, so a model spread over every core
# waits at each step for the thread that worker holds: beside one busy core a debate on the
# embedded model took 69-71 s and 85-86 s of CPU on two threads, 49-62 s and as much CPU on one.
PARALLEL = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1
LLAMA_THREADS = 1 if PARALLEL else usable_cpus()


@pytest.fixture(autouse=True, scope="session")
def _no_real_user_config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Module-scoped fixtures run before the per-test redirect below: they too must never
    reach the real config folder (moot makes a signing key there on first use) or the
    repository's sessions/ folder, which every worker of a parallel run would share.
    (Under xdist each worker is a session, with a temporary folder of its own.)"""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MOOT_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))
        patch.setenv("MOOT_SESSIONS_DIR", str(tmp_path_factory.mktemp("sessions")))
        if PARALLEL:
            patch.setenv("MOOT_LOCAL_THREADS", str(LLAMA_THREADS))  # runs it starts, too
        yield


@pytest.fixture(autouse=True)
def _user_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MOOT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("MOOT_SESSIONS_DIR", str(tmp_path / "sessions"))
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")


@pytest.fixture
def refused_base() -> Iterator[str]:
    """``http://127.0.0.1:PORT`` where a connection is refused: the port is bound, never
    listened on, and held until the test ends. A port picked free and let go could be
    taken by another test's server before the connection that must fail."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as held:
        held.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{held.getsockname()[1]}"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    """A fake OpenAI-compatible server on loopback, stopped after the test."""
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()


REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "sessions" / "examples"


@pytest.fixture(scope="module")
def llama_servers() -> Iterator[list[LlamaServer]]:
    """Two standalone llama.cpp servers for one test module (a test may stop one)."""
    started = [LlamaServer(slots=2, threads=1), LlamaServer(slots=2, threads=1)]
    yield started
    for srv in started:
        srv.stop()
