"""Many model servers for one debater: calls spread over them with LiteLLM's Router.

A debater whose ``api_base`` is a list gets one Router per distinct set of
servers (and model, key, timeout). The Router picks a server per call; a
server that refuses a connection is cooled down and the call retried on
another at once, so a debate loses no turn while one server still answers.
"""

from __future__ import annotations

import threading
from typing import Any

GROUP = "moot"  # the Router's name for the group of servers behind one debater
COOLDOWN_S = 30.0  # how long a failing server is left out before it is tried again

_lock = threading.Lock()
_routers: dict[tuple[Any, ...], Any] = {}


def router_for(
    litellm: Any, model: str, bases: tuple[str, ...], api_key: str | None, timeout: float
) -> Any:
    """The shared Router spreading ``model`` over ``bases``."""
    key = (model, bases, api_key, timeout)
    with _lock:
        router = _routers.get(key)
        if router is None:
            deployments = [
                {
                    "model_name": GROUP,
                    "litellm_params": {"model": model, "api_base": base, "api_key": api_key},
                }
                for base in bases
            ]
            router = _routers[key] = litellm.Router(
                model_list=deployments,
                routing_strategy="simple-shuffle",
                num_retries=len(bases) - 1,  # each retry goes to a server not cooling down
                retry_after=0,
                allowed_fails=0,  # one refused connection cools that server down
                cooldown_time=COOLDOWN_S,
                timeout=timeout,
            )
        return router


def completion(litellm: Any, kwargs: dict[str, Any]) -> Any:
    """``litellm.acompletion``, or the Router's when ``api_base`` names several servers."""
    bases = kwargs.get("api_base")
    if not isinstance(bases, tuple):
        return litellm.acompletion(**kwargs)
    router = router_for(litellm, kwargs["model"], bases, kwargs.get("api_key"), kwargs["timeout"])
    per_call = {k: v for k, v in kwargs.items() if k not in _ROUTER_OWNS}
    return router.acompletion(model=GROUP, **per_call)


_ROUTER_OWNS = frozenset({"model", "api_base", "api_key", "num_retries", "max_retries"})


def reset() -> None:
    """Forget every Router (their HTTP clients belong to the event loop that ends)."""
    with _lock:
        _routers.clear()
