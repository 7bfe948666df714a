#!/usr/bin/env bash
# One entry point for a fresh clone:
#   ./dev.sh demo   set up, then open the console on a live debate on the embedded model
#   ./dev.sh test   set up, then the tests on every core, with ruff (lint, format), mypy,
#                   the import contracts and the docs site's strict build beside them
#   ./dev.sh lock   refresh uv.lock and setup/litellm-proxy/uv.lock on purpose
#   ./dev.sh bench  set up, then a small offline moot bench on the embedded model
# Set-up installs only what the locks hold, and stops if a lock is not current.
set -euo pipefail
cd "$(dirname "$0")"

VENV=.venv
# What the tests need in .venv (tests/project/test_locks.py reads this line).
TEST_SYNC=(--extra dev --extra serve --extra mcp --extra otel --extra bench --group local-model)
# Never download a Python: the machine's own is the one used.
export UV_PYTHON_DOWNLOADS=never

# Which of the machine's Pythons: $PYTHON if set; else, on Linux, the system's (the
# argument, /usr/bin/python3) when it is 3.11 or newer, can make a venv and has its C
# headers (a few locked packages build from source); else python3 on PATH. A distribution
# builds its Python with PGO and LTO into one binary; pyenv's default build (a shared
# libpython, no PGO) ran the same tests with about a tenth more CPU
# (bench/suite_under_load.py). Not on macOS: there /usr/bin/python3 is Apple's 3.9, or a
# stub that asks to install the developer tools.
pick_python() {
    local system=$1
    if [ -n "${PYTHON:-}" ]; then
        echo "$PYTHON"
    elif [ "$(uname -s)" = Linux ] && "$system" -c 'import sys, sysconfig, os, venv, ensurepip
h = os.path.join(sysconfig.get_paths()["include"], "Python.h")
sys.exit(sys.version_info < (3, 11) or not os.path.exists(h))' >/dev/null 2>&1; then
        echo "$system"
    else
        echo python3
    fi
}
PY=$(pick_python /usr/bin/python3)

# Where environment NAME (.venv-uv, .venv-proxy) lives: with a dev cache ($MOOT_DEV_CACHE),
# one kept there as PREFIX-<digest of FILE and this Python>, shared by every clone; without,
# ./NAME, and a link a cache left there is dropped when the cache is turned off
# (MOOT_DEV_CACHE=; unset, as for the demo, either is used).
kept_place() {
    local name=$1 file=$2 prefix=$3 place
    if [ -n "${MOOT_DEV_CACHE:-}" ]; then
        place=$MOOT_DEV_CACHE/$prefix-$(cache_key "$file")
        prune_kept "$prefix" "$place"
        echo "$place"
        return
    fi
    if [ -n "${MOOT_DEV_CACHE+set}" ] && [ -L "$name" ]; then
        rm "$name"
    fi
    echo "$PWD/$name"
}

# The dev cache's PREFIX-* entries other than PLACE that no run has used for 30 days (each
# run touches the one it uses), and pieces a stopped run left (*.part-*, *.old-*) a day old:
# every change of a lock left a whole environment behind (the proxy's is 645 MB).
prune_kept() {
    local prefix=$1 place=$2
    [ ! -d "$place" ] || touch "$place"
    find "$MOOT_DEV_CACHE" -mindepth 1 -maxdepth 1 -name "$prefix-*" ! -path "$place" \
        \( -mtime +30 -o \( \( -name '*.part-*' -o -name '*.old-*' \) -mtime +0 \) \) \
        -exec rm -rf {} + 2>/dev/null || true
}

# A name for FILE's content, this Python and any further words: what a kept thing depends on.
cache_key() {
    { cat "$1"; "$PY" -c 'import sys; print(sys.executable, sys.version)'; [ $# -lt 2 ] || echo "${@:2}"; } \
        | "$PY" -c 'import hashlib, sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest()[:32])'
}

# ./NAME becomes a link to PLACE, when PLACE is in the dev cache.
link_place() {
    if [ "$2" != "$PWD/$1" ]; then
        [ -L "$1" ] || rm -rf "$1"
        ln -sfn "$2" "$1"
    fi
}

# uv, at the version pinned with hashes in setup/uv.txt, in a venv of its own, .venv-uv
# (or $UV, if you bring one). It is the only thing installed from outside a lock. With a
# dev cache (./dev.sh test) .venv-uv links to one kept there for that file and this Python,
# so a fresh clone does not install uv again (4 s at the start of every run).
uv_bin() {
    if [ -n "${UV:-}" ]; then
        echo "$UV"
        return
    fi
    local want place part
    want=$(sed -n 's/^uv==\([^ ]*\).*/\1/p' setup/uv.txt)
    place=$(kept_place .venv-uv setup/uv.txt uv)
    if [ ! -x "$place/bin/uv" ] || [ "$("$place/bin/uv" --version | cut -d' ' -f2)" != "$want" ]; then
        # Made beside its place and renamed into it whole: another clone may be making it too.
        rm -rf "$place"
        part=$place.part-$$
        mkdir -p "$(dirname "$place")"
        # The machine's own pip installs into a venv made without one (6 s sooner: no
        # pip to copy in and compile); a Python without pip gets one in the venv.
        if ! { "$PY" -m venv --without-pip "$part" \
            && "$PY" -m pip --python "$part/bin/python" install -q --no-deps \
                --require-hashes -r setup/uv.txt >/dev/null 2>&1; }; then
            rm -rf "$part"
            "$PY" -m venv "$part"
            "$part/bin/python" -m pip install -q --no-deps --require-hashes -r setup/uv.txt >&2
        fi
        mv -T "$part" "$place" 2>/dev/null || rm -rf "$part"  # or theirs is in place
    fi
    link_place .venv-uv "$place"
    echo .venv-uv/bin/uv
}

# Each environment's lock must answer its pyproject.toml as it is now; checked
# offline, so a lock that needs resolving again fails here rather than drifting.
check_locks() {
    local uv=$1 project
    for project in . setup/litellm-proxy; do
        if ! "$uv" lock --check --offline --quiet --project "$project" >/dev/null 2>&1; then
            echo "dev.sh: $project/uv.lock does not match $project/pyproject.toml; run ./dev.sh lock" >&2
            exit 1
        fi
    done
}

# The app, its test tools and the SmolLM2 weights, exactly as uv.lock has them.
# The demo adds what it needs and removes nothing, so it never undoes a test set-up.
setup() {
    local uv
    uv=$(uv_bin)
    check_locks "$uv"
    if [ "${1:-}" = demo ]; then
        "$uv" sync --quiet --locked --inexact --python "$PY" --group local-model
    else
        "$uv" sync --quiet --locked --python "$PY" "${TEST_SYNC[@]}"
    fi
}

# LiteLLM's proxy, for tests/providers/test_litellm_proxy.py, from setup/litellm-proxy/uv.lock:
# a deployment of its own with its own LiteLLM (that file says which, and why), in
# .venv-proxy. With a dev cache (./dev.sh test) that is a link to one kept there for this
# lock and this Python, shared by every clone: the proxy then starts from bytecode an
# earlier run compiled (a cold start compiled LiteLLM's proxy again, 11 s of CPU). uv locks
# an environment while it syncs one, and checks it against the lock each time.
setup_proxy() {
    local uv where
    uv=$(uv_bin)
    where=$(kept_place .venv-proxy setup/litellm-proxy/uv.lock litellm-proxy)
    UV_PROJECT_ENVIRONMENT="$where" \
        "$uv" sync --quiet --locked --python "$PY" --project setup/litellm-proxy
    link_place .venv-proxy "$where"
}

# Bytecode of the locked packages. With a dev cache, the .pyc files a test run compiled for
# .venv's site-packages are kept as bytecode-<digest of uv.lock, this Python and the extras>,
# and a fresh clone starts from hard links to them (a cold start compiled them again: about
# 17 s before the first test). Python checks each against its source's size and mtime; uv
# links every clone's files to one copy in its own cache, so they match, and one that does
# not is compiled again, written beside the link and renamed over it.
#
# Where the kept bytecode is ($bytecode_kept) and where this clone's goes ($bytecode_here),
# found once a run. -B: the Python asked would write its .pth files' bytecode there first.
bytecode_places() {
    [ -z "${bytecode_here:-}" ] || return 0
    bytecode_kept=$MOOT_DEV_CACHE/bytecode-$(cache_key uv.lock "${TEST_SYNC[@]}")
    prune_kept bytecode "$bytecode_kept"
    bytecode_here=$PYTHONPYCACHEPREFIX$("$VENV/bin/python" -B -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
}

# Link the kept bytecode into this clone's; false if there is none to link.
restore_bytecode() {
    [ -n "${MOOT_DEV_CACHE:-}" ] || return 1
    bytecode_places
    [ -d "$bytecode_kept" ] || return 1
    mkdir -p "$bytecode_here"
    cp -alf "$bytecode_kept/." "$bytecode_here" 2>/dev/null && return 0
    rm -rf "$bytecode_here"  # another file system: no links, so none of it
    return 1
}

# Keep this clone's bytecode when the run compiled any (the kept copy was missing, or a
# package's files were compiled again): a whole new copy, renamed into place.
keep_bytecode() {
    local kept here part
    [ -n "${MOOT_DEV_CACHE:-}" ] || return 0
    bytecode_places
    kept=$bytecode_kept
    here=$bytecode_here
    [ -d "$here" ] || return 0
    if [ -d "$kept" ] && [ -z "$(find "$here" -name '*.pyc' ! -name '__editable__*' -newer "$1" -print -quit)" ]; then
        return 0
    fi
    part=$kept.part-$$
    mkdir -p "$MOOT_DEV_CACHE"
    # Not the editable installs' finders: uv writes those in each clone, naming the clone.
    if cp -al "$here" "$part" 2>/dev/null && find "$part" -name '__editable__*' -delete; then
        [ ! -d "$kept" ] || mv -T "$kept" "$kept.old-$$" 2>/dev/null || true
        mv -T "$part" "$kept" 2>/dev/null || true  # or another run's is in place
    fi
    rm -rf "$part" "$kept.old-$$"
}

# Re-resolve every lock on purpose (pass --upgrade to take the newest releases the
# ranges allow), then pin setup/uv.txt to the uv that uv.lock now holds.
lock() {
    local uv project version
    uv=$(uv_bin)
    for project in . setup/litellm-proxy; do
        "$uv" lock --project "$project" "$@"
    done
    version=$("$uv" export --quiet --frozen --no-hashes --extra dev --no-emit-project \
        | sed -n 's/^uv==\([^ ;]*\).*/\1/p')
    echo "uv==$version" | "$uv" pip compile --quiet --universal --generate-hashes \
        --no-header - -o setup/uv.txt
}

case "${1:-}" in
    demo)
        setup demo
        exec "$VENV/bin/moot" run "${2:-sessions/examples/local-debate.toml}"
        ;;
    lock)
        lock "${@:2}"
        ;;
    bench)
        # A few arithmetic items, one answer against a 3 x 2 debate, on the 135M model
        # (one item at a time: the model serves 3 calls at once, a debate round's 3);
        # later flags win (./dev.sh bench --items 10 --out bench-out).
        setup demo
        exec "$VENV/bin/moot" bench --model local --items 3 --arms single,debate --concurrency 1 "${@:2}"
        ;;
    test)
        # What a run can keep for the next, even in a fresh clone: mypy's cache and the npm
        # installs, each checked against its sources (by hash) or named by its lock's digest.
        # MOOT_DEV_CACHE= (empty) keeps nothing, as does a machine with no HOME.
        if [ -z "${MOOT_DEV_CACHE+set}" ]; then
            cache_home=${XDG_CACHE_HOME:-${HOME:+$HOME/.cache}}
            MOOT_DEV_CACHE=${cache_home:+$cache_home/moot-dev}
        fi
        case $MOOT_DEV_CACHE in "" | /*) ;; *) MOOT_DEV_CACHE=$PWD/$MOOT_DEV_CACHE ;; esac
        export MOOT_DEV_CACHE
        # The npm packages some tests drive install from their locks while uv syncs, and on
        # beside the tests: a fixture that needs one waits on its folder's lock, and a failed
        # install is tried again by the fixture, which says why.
        "$PY" tests/npm_packages.py >/dev/null 2>&1 &
        npm_pid=$!
        setup
        setup_proxy
        # The end-to-end test drives the real console in tmux.
        if ! command -v tmux >/dev/null 2>&1; then
            if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
                apt-get install -y -qq tmux >/dev/null 2>&1 \
                    || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq tmux >/dev/null; }
            fi
        fi
        # One bytecode cache for the run, inside .venv: where PYTHONDONTWRITEBYTECODE is set,
        # every process the tests start (each worker, each `moot` run) compiled LiteLLM,
        # openai, Textual and moot from source again, about half of its start-up.
        export PYTHONPYCACHEPREFIX="$PWD/$VENV/pycache"
        unset PYTHONDONTWRITEBYTECODE
        # A new cache is filled by one collection first: the workers start together and
        # import the same modules, so on a fresh clone each compiled all of them itself
        # (17 s of CPU a worker, 4 s once the cache is warm).
        # With the packages' bytecode kept from an earlier run, only moot's own is compiled,
        # and the test modules' asserts rewritten once, on both cores, not by every worker.
        warm=
        warm_litellm=
        if [ ! -d "$PYTHONPYCACHEPREFIX" ] && restore_bytecode; then
            "$VENV/bin/python" -m compileall -q tui tests bench >/dev/null 2>&1 &
            warm="$! "
            for part in 0 1; do
                "$VENV/bin/python" tests/assert_cache.py "$part" 2 >/dev/null 2>&1 &
                warm+="$! "
            done
        elif [ ! -d "$PYTHONPYCACHEPREFIX" ]; then
            "$VENV/bin/python" -m pytest --collect-only -q -p no:cacheprovider "${@:2}" \
                >/dev/null 2>&1 &
            warm=$!
            # Collection leaves a core idle; LiteLLM, which it does not import, is compiled
            # there (7 s of CPU the worker that loads it no longer spends). Not waited for.
            # Loaded as moot loads it: a bare import would fetch its price list from the web.
            "$VENV/bin/python" -c "from tui.providers.litellm_lib import litellm_lib; litellm_lib()" \
                >/dev/null 2>&1 &
            warm_litellm=$!
        fi
        started=$PYTHONPYCACHEPREFIX/.run-started
        mkdir -p "$PYTHONPYCACHEPREFIX"
        touch "$started"
        # Lint, format, types, the import contracts and the docs site run beside the tests (each
        # to a log, shown if it fails), niced: they need seconds of a run of minutes, and at
        # full priority they held up the compile the workers wait for. The tests run a worker
        # per core and one more: much of a test's time is a wait (a subprocess, a timer, a
        # model server's answer), which the extra worker fills. The heavy modules (xdist_group:
        # llama, litellm, reasoning-gym, tmux, mcp, npm) each stay on one worker.
        logs=$(mktemp -d)
        trap 'rm -rf "$logs"' EXIT
        checks=("ruff check" "ruff format --check" "mypy" "lint-imports" "mkdocs build --strict")
        nice -n 10 "$VENV/bin/ruff" check tui tests bench docs >"$logs/0" 2>&1 &
        pids=($!)
        nice -n 10 "$VENV/bin/ruff" format --check tui tests bench docs >"$logs/1" 2>&1 &
        pids+=($!)
        nice -n 10 "$VENV/bin/mypy" ${MOOT_DEV_CACHE:+--cache-dir "$MOOT_DEV_CACHE/mypy"} >"$logs/2" 2>&1 &
        pids+=($!)
        nice -n 10 "$VENV/bin/lint-imports" >"$logs/3" 2>&1 &
        pids+=($!)
        NO_MKDOCS_2_WARNING=1 nice -n 10 "$VENV/bin/mkdocs" build --strict --quiet \
            --site-dir "$logs/site" >"$logs/4" 2>&1 &
        pids+=($!)
        set +e
        [ -z "$warm" ] || wait $warm
        workers=$("$VENV/bin/python" -c 'import os; print((len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1) + 1)')
        "$VENV/bin/python" -m pytest -q -n "$workers" --dist loadgroup "${@:2}"
        code=$?
        wait "$npm_pid"  # a run that needed no npm package leaves no install behind it
        [ -z "$warm_litellm" ] || wait "$warm_litellm"
        keep_bytecode "$started"
        failed=0
        for i in "${!pids[@]}"; do
            if ! wait "${pids[$i]}"; then
                echo "dev.sh: ${checks[$i]} failed:" >&2
                cat "$logs/$i" >&2
                failed=1
            fi
        done
        set -e
        if [ "$code" -eq 5 ]; then
            echo "pytest collected no tests: failing on purpose" >&2
            exit 1
        fi
        if [ "$code" -eq 0 ] && [ "$failed" -ne 0 ]; then
            exit 1
        fi
        exit "$code"
        ;;
    *)
        echo "usage: ./dev.sh demo [SPEC] | ./dev.sh test [PYTEST ARGS] | ./dev.sh lock [--upgrade] | ./dev.sh bench [FLAGS]" >&2
        exit 2
        ;;
esac
