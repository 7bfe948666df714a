"""The ``moot`` command line. Heavy imports (Textual, LiteLLM) happen per command."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from tui.engine.vocab import DEFAULT_PROTOCOL
from tui.exitcodes import ExitCode
from tui.pathlimits import path_arg
from tui.plural import counted
from tui.render.textsafe import clean_line

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from tui.engine.live import LiveSession
    from tui.engine.signing import Span
    from tui.engine.spec import Spec


def protocol_help() -> dict[str, str]:
    """Each registered protocol (built in or from ``moot.protocols``) with its one line."""
    from tui.engine.protocols import PROTOCOLS

    return {name: p.description or "(no description)" for name, p in PROTOCOLS.items()}


SHOWN_PROBLEMS = 50  # a file of 100,000 mistakes is said in a screenful, the rest counted
THEME_HELP = "console theme for this run (not saved; switch with ctrl+p to remember one)"


def _epilog() -> str:
    protocols = "\n".join(f"  {name:<10} {what}" for name, what in protocol_help().items())
    meanings = {
        ExitCode.DECIDED: "decided (verify: every claim holds)",
        ExitCode.INTERNAL: "internal error (a bug; reported without a traceback)",
        ExitCode.BAD_INPUT: "bad spec, session or path, refused decision, unreachable model",
        ExitCode.UNRESOLVED: "ended unresolved (escalated, no operator decision)",
        ExitCode.VERIFY_FAILED: "moot verify: a claim does not hold",
        ExitCode.INTERRUPTED: "interrupted (Ctrl+C, or quit while running); the session is saved",
    }
    codes = "\n".join(f"  {int(code):<10} {meanings[code]}" for code in ExitCode)
    return f"protocols:\n{protocols}\n\nexit codes:\n{codes}"


class _HelpListsProtocols(argparse.ArgumentParser):
    """``moot --help`` lists the protocols; parsing any command line never imports their
    registry (pydantic and every protocol: most of the start-up before the console paints)."""

    def format_help(self) -> str:
        if self.epilog is None:
            self.epilog = _epilog()
        return super().format_help()


class _Version(argparse.Action):
    """``--version``: the installed version, looked up only when it is asked for."""

    def __init__(self, option_strings: list[str], dest: str, **_kwargs: object) -> None:
        help_text = "show moot's version and exit"
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help_text)

    def __call__(self, parser: argparse.ArgumentParser, *_args: object) -> None:
        from tui import __version__

        print(f"moot {__version__}")
        parser.exit()


class _ProtocolNames:
    """The registered protocols' names, read when argparse first checks or shows them."""

    def __iter__(self) -> Iterator[str]:
        return iter(protocol_help())

    def __contains__(self, name: object) -> bool:
        return name in protocol_help()


def _parser() -> argparse.ArgumentParser:
    p = _HelpListsProtocols(
        prog="moot",
        description="Run structured LLM debates live, headless, or from a file.\n"
        "With no command: the console's home screen.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action=_Version)
    p.add_argument(
        "--sessions-dir", type=path_arg, help="where sessions are saved (default ./sessions)"
    )
    p.add_argument("--theme", help=THEME_HELP)
    sub = p.add_subparsers(dest="command", parser_class=argparse.ArgumentParser)
    # Options accepted before or after the subcommand.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--sessions-dir", type=path_arg, default=argparse.SUPPRESS, help=argparse.SUPPRESS
    )

    run = sub.add_parser(
        "run", parents=[common], help="run a debate live, or headless with --headless"
    )
    run.add_argument(
        "spec", type=path_arg, help="the debate spec (TOML); see moot new and moot validate"
    )
    run.add_argument("--headless", action="store_true", help="no console; print a report")
    run.add_argument(
        "--out", type=path_arg, help="session file to write (default: a new file in sessions)"
    )
    run.add_argument("--theme", default=argparse.SUPPRESS, help=THEME_HELP)
    run.add_argument(
        "--on-unresolved",
        choices=["end", "prompt"],
        default="end",
        help="headless: end with exit code 3 (default), or ask on the terminal",
    )
    run.add_argument(
        "--json", action="store_true", help="headless: print the result as one JSON object"
    )
    _allow_read_option(run)
    _allow_tools_option(run)
    _allow_tool_writes_option(run)
    run.add_argument(
        "--no-preflight",
        action="store_true",
        help="skip checking each debater's model, key and api_base before the session starts",
    )

    res = sub.add_parser("resume", parents=[common], help="continue an interrupted session")
    res.add_argument("session", type=path_arg, help="the session file to continue")
    res.add_argument("--headless", action="store_true", help="no console; print a report")
    res.add_argument("--theme", default=argparse.SUPPRESS, help=THEME_HELP)
    res.add_argument(
        "--on-unresolved",
        choices=["end", "prompt"],
        default="end",
        help="headless: end with exit code 3 (default), or ask on the terminal",
    )
    res.add_argument("--force", action="store_true", help="resume even if the hash chain is broken")
    _allow_read_option(res)
    _allow_tools_option(res)
    _allow_tool_writes_option(res)
    res.add_argument(
        "--json", action="store_true", help="headless: print the result as one JSON object"
    )
    res.add_argument(
        "--raise-budget",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="headless: a higher cap, then go on (budget.max_tokens=500000, "
        "debaters.critic.budget.max_cost_usd=2)",
    )

    rep = sub.add_parser("replay", parents=[common], help="replay a saved session in the console")
    rep.add_argument(
        "session", type=path_arg, help="the session file to replay (no model is called)"
    )
    rep.add_argument("--theme", default=argparse.SUPPRESS, help=THEME_HELP)

    val = sub.add_parser("validate", help="list every problem in a spec")
    val.add_argument("spec", type=path_arg, help="the spec file to check")
    _allow_read_option(val)

    exp = sub.add_parser("export", parents=[common], help="export a session as a report or JSON")
    exp.add_argument("session", type=path_arg, help="the session file to export")
    exp.add_argument(
        "--format",
        choices=["markdown", "json", "adr"],
        default="markdown",
        help="adr: an architecture decision record (MADR layout)",
    )
    exp.add_argument("--output", "-o", type=path_arg, help="write to this file instead of stdout")

    ver = sub.add_parser(
        "verify", help="re-check every claim of a session from the file alone (exit 4 if one fails)"
    )
    ver.add_argument("session", type=path_arg, help="the session file to check")
    ver.add_argument("--json", action="store_true", help="print the claims as one JSON object")
    ver.add_argument(
        "--trusted",
        action="store_true",
        help="also fail (exit 4) unless every record is signed by your key or one you trust",
    )

    adp = sub.add_parser(
        "adopt",
        help="vouch for the unsigned records of a session of your own (shows them, then asks)",
    )
    adp.add_argument("session", type=path_arg, help="a session written before moot signed them")
    adp.add_argument("--yes", action="store_true", help="adopt without asking (you checked it)")

    otc = sub.add_parser(
        "outcome",
        parents=[common],
        help="record what became of a decision, signed (several over time; the latest counts)",
    )
    otc.add_argument("session", type=path_arg, help="the decided session file")
    held = otc.add_mutually_exclusive_group(required=True)
    for word, meaning in (("held", "it held"), ("failed", "it failed"), ("mixed", "some of each")):
        held.add_argument(
            f"--{word}", dest="outcome", action="store_const", const=word, help=meaning
        )
    otc.add_argument("--note", required=True, help="why, in words (kept in the file)")
    otc.add_argument(
        "--at",
        metavar="DATE",
        help="when it was known: YYYY-MM-DD (a UTC day) or an ISO datetime (default now)",
    )

    ocs = sub.add_parser(
        "outcomes",
        parents=[common],
        help="how often decisions held, with a Wilson interval, Brier scores and a calibration plot",
    )
    ocs.add_argument(
        "paths",
        nargs="*",
        type=path_arg,
        metavar="PATH",
        help="session files or folders (default: the sessions folder)",
    )
    ocs.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    ocs.add_argument(
        "--by",
        choices=["protocol", "rule", "decider", "debater"],
        help="also give the figures for each protocol, decision rule, decider or debater",
    )
    ocs.add_argument(
        "--out", type=path_arg, metavar="FILE.svg", help="also write the calibration plot as SVG"
    )

    keys = sub.add_parser(
        "keys", help="your session-signing key, and the keys whose signatures you trust"
    )
    keys_sub = keys.add_subparsers(dest="keys_command", required=True)
    keys_sub.add_parser(
        "show",
        help="print your public key (made on first use) to give to others; never the private key",
    )
    keys_sub.add_parser("list", help="the keys you trust, yours first")
    trust = keys_sub.add_parser(
        "trust", help="trust the public key in FILE (from `moot keys show`)"
    )
    trust.add_argument("file", help="a file holding one `ssh-ed25519 AAAA… name` line")
    trust.add_argument("--name", help="the name to show for this key (default: the file's)")
    untrust = keys_sub.add_parser("untrust", help="stop trusting a key")
    untrust.add_argument(
        "key", help="its fingerprint (SHA256:…) or name, as `moot keys list` shows"
    )

    frk = sub.add_parser(
        "fork", help="a new session holding a saved session's first N turns, to go on from there"
    )
    frk.add_argument("session", type=path_arg, help="the session to fork")
    frk.add_argument("--at", type=int, required=True, metavar="N", help="keep turns 1 to N")
    frk.add_argument(
        "--out", type=path_arg, help="the new session file (default: SESSION-forkN.toml beside it)"
    )
    frk.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="change a spec key for the rest (debaters.critic.model=local, debate.max_rounds=4)",
    )
    _allow_tools_option(frk)

    new = sub.add_parser("new", help="write a commented spec to start from")
    new.add_argument("path", type=path_arg, help="the spec file to write (never overwritten)")
    new.add_argument(
        "--protocol",
        default=DEFAULT_PROTOCOL,
        choices=_ProtocolNames(),
        metavar="PROTOCOL",  # else argparse lists the choices as it builds the parser
        help="the protocol the spec starts from: %(choices)s (default %(default)s)",
    )

    bat = sub.add_parser(
        "batch", parents=[common], help="run many specs headless in one process, N at a time"
    )
    bat.add_argument(
        "paths", nargs="+", type=path_arg, metavar="PATH", help="spec files, or folders of specs"
    )
    bat.add_argument(
        "--concurrency", "-j", type=_positive, default=4, help="debates at once (default 4)"
    )
    bat.add_argument(
        "--summary", type=path_arg, help="write a JSON summary naming every spec to this new file"
    )
    bat.add_argument(
        "--no-preflight", action="store_true", help="skip checking each spec's models first"
    )
    _allow_read_option(bat)
    _allow_tools_option(bat)
    _allow_tool_writes_option(bat)

    ben = sub.add_parser(
        "bench", help="accuracy of one answer, a vote and a debate on generated, checked items"
    )
    ben.add_argument(
        "--task",
        default="arithmetic",
        help="arithmetic (built in) or a reasoning-gym dataset name (the bench extra)",
    )
    ben.add_argument("--items", type=_positive, default=20, help="items (default 20)")
    ben.add_argument("--seed", type=int, default=0, help="the items' seed (default 0)")
    ben.add_argument(
        "--model",
        default="local",
        help="a LiteLLM model, local (embedded), or oracle:P[:C] (right with probability P)",
    )
    ben.add_argument(
        "--api-base", help="an OpenAI-compatible server for the model (vLLM, llama.cpp)"
    )
    ben.add_argument(
        "--arms",
        default="single,vote,debate",
        help="some of single,vote,debate,adaptive (default single,vote,debate)",
    )
    ben.add_argument("--agents", type=_positive, default=3, help="debate agents (default 3)")
    ben.add_argument("--rounds", type=_positive, default=2, help="debate rounds (default 2)")
    ben.add_argument("--samples", type=_positive, default=3, help="vote answers (default 3)")
    ben.add_argument(
        "--out", help="a folder keeping per-item lines, sessions and the plot; reruns go on"
    )
    ben.add_argument("--json", action="store_true", help="print the report as one JSON object")
    ben.add_argument(
        "--concurrency", "-j", type=_positive, default=4, help="item arms at once (default 4)"
    )

    inbox = sub.add_parser(
        "inbox", parents=[common], help="sessions that ended unresolved, waiting for a decision"
    )
    inbox.add_argument("--json", action="store_true", help="print them as a JSON list")

    notify = sub.add_parser(
        "notify",
        help="send a session awaiting a decision to the config file's [[notify]] targets again",
    )
    notify.add_argument("session", type=path_arg, help="the unresolved session file")

    dec = sub.add_parser(
        "decide", help="record an operator decision on an unresolved session (exit 2 if refused)"
    )
    dec.add_argument("session", type=path_arg, help="the unresolved session file")
    chosen = dec.add_mutually_exclusive_group()
    chosen.add_argument("--vote", help="one of the spec's votes")
    chosen.add_argument("--value", help="the number decided, for a protocol that estimates one")
    dec.add_argument("--rationale", default="", help="why (required with --vote)")
    dec.add_argument(
        "--extend", action="store_true", help="instead add a round and continue headless"
    )
    _allow_read_option(dec)
    _allow_tools_option(dec)
    _allow_tool_writes_option(dec)

    wat = sub.add_parser(
        "watch", help="follow a session another process is writing (read-only, live)"
    )
    wat.add_argument("session", type=path_arg, help="the session file to follow")

    mcp = sub.add_parser(
        "mcp",
        parents=[common],
        help="serve the debates as MCP tools over stdio (or --http), for coding agents "
        "(extra: moot[mcp])",
    )
    mcp.add_argument(
        "--no-preflight",
        action="store_true",
        help="skip checking each debater's model, key and api_base before a run starts",
    )
    mcp.add_argument(
        "--http",
        action="store_true",
        help="serve over MCP's streamable HTTP at /mcp instead of stdio, with a token printed "
        "at start; a run goes on when its client leaves",
    )
    mcp.add_argument("--port", type=_port, help="with --http: port (default 8001)")
    mcp.add_argument(
        "--host", help="with --http: address to bind (default 127.0.0.1; loopback only)"
    )
    mcp.add_argument(
        "--public",
        action="store_true",
        help="with --http: allow a --host other than loopback (the token stays required)",
    )
    _allow_read_option(mcp)
    _allow_tools_option(mcp)
    _allow_tool_writes_option(mcp)

    srv = sub.add_parser(
        "serve", parents=[common], help="serve the console to a browser (extra: moot[serve])"
    )
    srv.add_argument("--port", type=_port, default=8000, help="port (default 8000)")
    srv.add_argument(
        "--host", default="localhost", help="address to bind (default localhost; loopback only)"
    )
    srv.add_argument(
        "--public",
        action="store_true",
        help="allow a --host other than loopback (the token stays required)",
    )
    srv.add_argument(
        "--no-token",
        action="store_true",
        help="serve loopback without the URL token (Host and Origin are still checked)",
    )
    srv.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="another host name browsers may use to reach the server (repeatable)",
    )
    srv.add_argument(
        "--decide-link",
        metavar="SESSION",
        help="print a link to decide SESSION (its name or path in the sessions folder) on "
        "this server's decide page, good once for 7 days, then exit",
    )
    return p


def _allow_read_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-read",
        action="append",
        default=[],
        type=path_arg,
        metavar="PATH",
        help="also let the spec's documents and its files tools' roots come from this file "
        "or folder (repeatable); by default only the spec's own folder tree is read",
    )


def _allow_tools_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-tools",
        action="store_true",
        help="start the [[tools]] a file names (the programs it runs, the folders it reads) "
        "or let a fork keep them; without it a spec's MCP commands never start, and a "
        "session's start only when keys you trust signed the records naming them",
    )


def _allow_tool_writes_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--allow-tool-writes",
        action="store_true",
        help="also offer debaters the calls a [[tools]] entry lists in calls that its MCP "
        "server does not mark read-only (they may change files); by default a lookup only reads",
    )


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be 1 or more")
    return value


def _port(text: str) -> int:
    """A TCP port; out of range, the server would listen on another than the URL names."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value}: a port is 1 to 65535")
    return value


def _out(message: str) -> None:
    """One line on stdout; paths, spec keys and values in it are shown, never obeyed."""
    print(clean_line(message))


def _err(message: str) -> None:
    print(clean_line(message), file=sys.stderr)


def _print_input_error(err: Exception) -> None:
    from tui.engine.errors import MootInputError
    from tui.engine.redact import redact

    assert isinstance(err, MootInputError)
    _err(f"moot: {redact(err.source)}: {counted(len(err.problems), 'problem')}")
    for problem in err.problems[:SHOWN_PROBLEMS]:  # a message may quote what was given
        _err(f"  - {redact(problem)}")
    if len(err.problems) > SHOWN_PROBLEMS:
        _err(f"  … and {counted(len(err.problems) - SHOWN_PROBLEMS, 'more problem')}")


def main(argv: list[str] | None = None) -> int:
    code = _main(argv)
    local = sys.modules.get("tui.providers.local")
    if local is not None:  # the embedded model ran: a generation it left must not hold the exit
        local.exit_past_generations(code)
    return code


def _main(argv: list[str] | None) -> int:
    args = _parser().parse_args(argv)
    from tui.engine.errors import MootInputError

    try:
        return _dispatch(args)
    except MootInputError as err:
        _print_input_error(err)
        return ExitCode.BAD_INPUT
    except KeyboardInterrupt:
        _err("moot: interrupted; the session is saved up to its last completed turn")
        return ExitCode.INTERRUPTED
    except BrokenPipeError:  # the reader stopped reading (``| head``): not an error
        from tui.commands.headless import silence_stdout

        silence_stdout()
        return ExitCode.DECIDED
    except Exception as err:  # never a traceback unless asked for
        if os.environ.get("MOOT_DEBUG"):
            raise
        _err(f"moot: internal error: {type(err).__name__}: {err} (set MOOT_DEBUG=1 for details)")
        return ExitCode.INTERNAL


# What each command expects: a file of the other kind is named, with the command it wants.
_WANTS: dict[str, Literal["spec", "session"]] = {
    "run": "spec",
    "validate": "spec",
    "replay": "session",
    "resume": "session",
    "export": "session",
    "verify": "session",
    "outcome": "session",
    "decide": "session",
    "notify": "session",
    "fork": "session",
    "watch": "session",
}


def _dispatch(args: argparse.Namespace) -> int:
    cmd = args.command
    theme = getattr(args, "theme", None)
    if theme is not None:  # refused where no console shows it too: a typo is never silent
        from tui.app.launch import theme_problem

        if problem := theme_problem(theme):
            _err(f"moot: {problem}")
            return ExitCode.BAD_INPUT
    if cmd in _WANTS:
        from tui.filekind import refuse_wrong_kind

        refuse_wrong_kind(args.spec if _WANTS[cmd] == "spec" else args.session, _WANTS[cmd])
    if cmd == "validate":
        return _validate(args.spec, _allowed(args))
    if cmd == "new":
        return _new(args.path, args.protocol)
    if cmd == "export":
        return _export(args.session, args.format, args.output)
    if cmd == "verify":
        return _verify(args.session, args.json, args.trusted)
    if cmd == "keys":
        return _keys(args)
    if cmd == "fork":
        return _fork(args.session, args.at, args.out, args.set, args.allow_tools)
    if cmd == "batch":
        return _batch(args)
    if cmd == "bench":
        return _bench(args)
    if cmd == "inbox":
        return _inbox(args.sessions_dir, args.json)
    if cmd == "decide":
        return _decide(args)
    if cmd == "notify":
        return _notify(args.session)
    if cmd == "adopt":
        return _adopt(args)
    if cmd == "outcome":
        return _outcome(args)
    if cmd == "outcomes":
        from tui.commands.outcomes import outcomes

        return outcomes(args.paths, args.sessions_dir, as_json=args.json, by=args.by, svg=args.out)
    if cmd == "watch":
        from tui.commands.watch import watch

        return watch(args.session)
    if cmd == "mcp":
        return _mcp(args)
    if cmd == "serve" and args.decide_link:
        from tui.commands.serve import decide_link

        return decide_link(args.decide_link, args.host, args.port, args.sessions_dir)
    if cmd == "serve":
        from tui.commands.serve import serve

        return serve(
            args.host,
            args.port,
            args.sessions_dir,
            public=args.public,
            no_token=args.no_token,
            allow_hosts=args.allow_host,
        )
    if cmd == "run" and args.headless:
        return _run_headless(args)
    if cmd == "resume" and args.headless:
        return _resume_headless(args)
    return _console(args)


def _allowed(args: argparse.Namespace) -> list[str]:
    """``--allow-read`` paths, each one that exists (a typo must not pass unnoticed)."""
    from tui.engine.errors import MootInputError

    given: list[str] = getattr(args, "allow_read", [])
    missing = [p for p in given if not os.path.exists(p)]
    if missing:
        raise MootInputError("--allow-read", [f"{p}: no such file or folder" for p in missing])
    return given


def _validate(path: str, allow_read: list[str]) -> int:
    from tui.engine.sizing import outgrow_warning
    from tui.engine.spec import read_spec_file

    spec, _ = read_spec_file(path, allow_read)
    _out(
        f"{path}: ok — {spec.debate.protocol}, {counted(len(spec.debaters), 'debater')}, "
        f"{counted(spec.max_rounds, 'round')}, threshold {spec.threshold}"
    )
    if outgrow := outgrow_warning(spec):  # valid, but the session could fill up
        _out(f"{path}: warning: {outgrow}")
    return ExitCode.DECIDED


def _new(path: str, protocol: str) -> int:
    from tui.engine.errors import MootInputError
    from tui.engine.safeio import FileRefused, write_new
    from tui.templates import TEMPLATES

    if protocol not in TEMPLATES:
        raise MootInputError(
            "--protocol", [f"unknown protocol {protocol!r}; expected one of {', '.join(TEMPLATES)}"]
        )
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:  # never over an existing file, never through a symlink
        write_new(target, TEMPLATES[protocol].format(name=target.name).encode("utf-8"))
    except FileRefused as err:
        raise MootInputError(path, [str(err)]) from None
    _out(f"wrote {path}")
    return ExitCode.DECIDED


def _export(session: str, fmt: str, output: str | None) -> int:
    from tui.engine.errors import MootInputError
    from tui.engine.safeio import FileRefused, write_new
    from tui.engine.session import load_session
    from tui.render.export import to_json, to_markdown

    data = load_session(session)
    for warning in data.warnings:  # a torn tail was dropped: say so, even on success
        _err(f"moot: warning: {session}: {warning}")
    if fmt == "adr":
        from tui.render.adr import to_adr

        text = to_adr(data)
    else:
        text = to_json(data) if fmt == "json" else to_markdown(data)
    if output:
        try:  # never over an existing file, never through a symlink
            write_new(output, (text + "\n").encode("utf-8"))
        except FileRefused as err:
            raise MootInputError(output, [str(err)]) from None
    else:
        sys.stdout.write(text + "\n")  # already sanitised for its format by tui.render.export
    return ExitCode.DECIDED


def _fork(session: str, at: int, out: str | None, sets: list[str], allow_tools: bool) -> int:
    from tui.engine.fork import fork
    from tui.render.textsafe import clean_line

    path = fork(session, at, out, sets, allow_tools=allow_tools)
    print(clean_line(f"wrote {path}: turns 1 to {at} of {session}"))
    print(clean_line(f"continue it with: moot resume {path}"))
    return ExitCode.DECIDED


def _verify(session: str, as_json: bool, require_trusted: bool) -> int:
    from tui.engine.errors import MootInputError
    from tui.engine.keys import trusted_keys
    from tui.engine.verify import Trust, summary_lines, verify_file
    from tui.render.textsafe import json_text

    try:
        keys, problems = trusted_keys()
    except MootInputError as err:  # your own key unreadable: say so, and trust no key
        keys, problems = [], [f"{err.source}: {p}" for p in err.problems]
    for problem in problems:
        _err(f"moot: warning: {problem}")
    own = next((k.fingerprint for k in keys if k.own), None)
    trust = Trust({k.fingerprint: k.name for k in keys}, required=require_trusted, own=own)
    report = verify_file(session, trust)  # never writes; an unreadable file is exit 2
    if as_json:
        print(json_text(report.as_json()))
    else:
        for line in summary_lines(report):
            _out(line)
    if require_trusted and not report.ok:
        _earlier_key_hint(report.signers, trust.keys)
    return ExitCode.DECIDED if report.ok else ExitCode.VERIFY_FAILED


def _earlier_key_hint(signers: Sequence[Span], trusted: Mapping[str, str]) -> None:
    """A signer that was your own key before moot made a new one is named as yours."""
    from tui.engine.keys import earlier_keys

    earlier = set(earlier_keys())
    for s in signers:
        if s.public in earlier and s.fingerprint not in trusted:
            _err(
                f"moot: {s.fingerprint} was your signing key before moot made a new one "
                "(its file was lost); to trust it, save the next line in a file and run "
                "`moot keys trust FILE`:"
            )
            _err(f"{s.public} earlier-key")


def _keys(args: argparse.Namespace) -> int:
    from tui.engine import keys

    what = args.keys_command
    if what == "show":
        signer = keys.user_signer()
        print(signer.public, keys.owner())  # the line `moot keys trust FILE` reads
        _err(f"fingerprint {signer.fingerprint}; private key in {keys.key_path()} (never shared)")
    elif what == "list":
        listed, problems = keys.trusted_keys()
        for problem in problems:
            _err(f"moot: warning: {problem}")
        if not listed:
            print("no keys yet: moot makes yours when it first writes a session")
        for key in listed:
            _out(f"{key.fingerprint}  {key.name}{' (your key)' if key.own else ''}")
    elif what == "trust":
        key, before = keys.trust(args.file, args.name)
        if before == key.name:
            _out(f"already trusted as {key.name!r}: {key.fingerprint}")
        else:
            was = f" (was {before!r})" if before is not None else ""
            _out(f"trusted {key.fingerprint} as {key.name!r}{was} (in {keys.trust_path()})")
    else:
        for key in keys.untrust(args.key):
            _out(f"no longer trusted: {key.fingerprint} {key.name!r}")
    return ExitCode.DECIDED


def _batch(args: argparse.Namespace) -> int:
    from tui.commands.batch import run_batch
    from tui.providers.preflight import preflight

    return run_batch(
        args.paths,
        concurrency=args.concurrency,
        directory=args.sessions_dir,
        summary_path=args.summary,
        preflight=None if args.no_preflight else preflight,
        allow_read=_allowed(args),
        allow_tools=args.allow_tools,
        writes=args.allow_tool_writes,
    )


def _bench(args: argparse.Namespace) -> int:
    from tui.bench.run import Options, run_bench
    from tui.engine.errors import MootInputError
    from tui.engine.spec import MAX_DEBATERS

    for flag, value in (("--agents", args.agents), ("--samples", args.samples)):
        if value > MAX_DEBATERS:
            raise MootInputError(flag, [f"{value}: at most {MAX_DEBATERS} agents take part"])
    return run_bench(
        Options(
            task=args.task,
            items=args.items,
            seed=args.seed,
            model=args.model,
            api_base=args.api_base,
            arms=[a.strip() for a in args.arms.split(",") if a.strip()],
            agents=args.agents,
            rounds=args.rounds,
            samples=args.samples,
            out=args.out,
            as_json=args.json,
            concurrency=args.concurrency,
        )
    )


def _inbox(sessions_dir: str | None, as_json: bool) -> int:
    import json

    from tui.commands.inbox import awaiting, tally_text
    from tui.engine.session import sessions_dir as resolve
    from tui.notify import record
    from tui.render.textsafe import clean_line

    waiting = awaiting(resolve(sessions_dir))
    if as_json:
        listed = [
            {**a.as_json(), "notify": [d.as_json() for d in record.read(a.path)]} for a in waiting
        ]
        print(json.dumps(listed, indent=2))
        return ExitCode.DECIDED
    if not waiting:
        print("nothing awaits a decision")
    for a in waiting:
        told = record.summary(record.read(a.path))
        print(
            clean_line(
                f"{a.title}  [{a.protocol}, {a.why}, {tally_text(a.vote_tally)}]  {a.path}"
                + (f"  notify: {told}" if told else "")
            )
        )
    return ExitCode.DECIDED


def _notify(session: str) -> int:
    from tui.notify.resend import resend
    from tui.render.textsafe import clean_line

    deliveries, problems = resend(Path(session))
    for problem in problems:
        _err(clean_line(f"moot: warning: {problem}; the message has no decide link"))
    for d in deliveries:
        said = "sent" if d.sent else f"failed after {counted(d.attempts, 'attempt')} ({d.reason})"
        print(clean_line(f"{d.name}: {said}"))
    return ExitCode.DECIDED if all(d.sent for d in deliveries) else ExitCode.BAD_INPUT


def _decide(args: argparse.Namespace) -> int:
    from tui.engine.errors import MootInputError

    answer = args.vote or args.value
    if args.extend == bool(answer):
        raise MootInputError(
            "moot decide", ["give --vote or --value (with --rationale), or --extend"]
        )
    if args.extend:
        from tui.commands.decide import not_awaiting
        from tui.commands.headless import run_headless
        from tui.engine.live import LiveSession
        from tui.engine.session import load_session
        from tui.providers.registry import provider_for
        from tui.tools.toolbox import session_tools

        why = not_awaiting(load_session(args.session))
        if why:
            raise MootInputError(args.session, [why])
        allowed = _allowed(args)
        session = LiveSession.resume(
            args.session,
            provider_for,
            tools_for=lambda data: session_tools(
                data, allowed, allow_tools=args.allow_tools, writes=args.allow_tool_writes
            ),
        )
        try:
            return run_headless(session, extend_first=True)
        finally:
            session.close()
    from tui.commands.decide import decide_session, flag_problem
    from tui.engine.session import load_session
    from tui.engine.vocab import is_deferral
    from tui.render.textsafe import clean_line

    if why := flag_problem(load_session(args.session).spec, "--vote" if args.vote else "--value"):
        raise MootInputError(args.session, [why])
    result = decide_session(args.session, answer, args.rationale)
    deferred = is_deferral(result.get("decision"), result.get("decision_rule"))
    if deferred:
        print("deferred: the session stays in the inbox with your rationale (still unresolved)")
    else:
        print(
            clean_line(
                f"decided: {result.get('decision')} ({result.get('decision_rule')}, "
                f"by {result.get('decided_by')})"
            )
        )
    print(clean_line(f"saved: {args.session}"))
    return ExitCode.UNRESOLVED if deferred else ExitCode.DECIDED


def _adopt(args: argparse.Namespace) -> int:
    from tui.commands.adopt import adopt
    from tui.engine.errors import MootInputError

    def ask(question: str) -> bool:
        if not sys.stdin.isatty():
            raise MootInputError(
                args.session, ["no terminal to ask on: read what it holds above, then --yes"]
            )
        return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")

    adopted = adopt(args.session, yes=args.yes, ask=ask, say=print)
    return ExitCode.DECIDED if adopted else ExitCode.UNRESOLVED  # 3: you said no


def _outcome(args: argparse.Namespace) -> int:
    from tui.commands.outcome import record_outcome

    record = record_outcome(args.session, args.outcome, args.note, args.at)
    _out(f"recorded: {record['outcome']} at {record['at']}, signed; `moot verify` checks it")
    _out(f"saved: {args.session}")
    return ExitCode.DECIDED


def _mcp(args: argparse.Namespace) -> int:
    """``moot mcp``: stdout carries the protocol (over stdio), so nothing is printed there."""
    import asyncio

    from tui.engine.errors import MootInputError

    if not args.http and (args.port is not None or args.host is not None or args.public):
        raise MootInputError(
            "moot mcp", ["--port, --host and --public serve over HTTP: add --http"]
        )
    try:
        from tui.mcp_server import MootServer, serve_stdio
    except ImportError:
        raise MootInputError(
            "moot mcp", ["it needs the optional extra mcp: pip install 'moot[mcp]'"]
        ) from None
    from tui.engine.session import sessions_dir
    from tui.providers.preflight import preflight
    from tui.providers.registry import provider_for

    server = MootServer(
        sessions_dir(args.sessions_dir),
        provider_for,
        preflight=None if args.no_preflight else preflight,
        allow_read=_allowed(args),
        allow_tools=args.allow_tools,
        tool_writes=args.allow_tool_writes,
    )
    if args.http:
        from tui.mcp_http import serve_http

        host, port = args.host or "127.0.0.1", args.port or 8001
        asyncio.run(serve_http(server, host, port, public=args.public, say=_err))
    else:
        asyncio.run(serve_stdio(server))
    return ExitCode.DECIDED


def _run_headless(args: argparse.Namespace) -> int:
    from tui.engine.live import LiveSession
    from tui.engine.spec import read_spec_file
    from tui.providers.registry import provider_for
    from tui.tools.toolbox import run_tools

    spec, raw = read_spec_file(args.spec, _allowed(args))
    tools = run_tools(
        spec,
        args.spec,
        _allowed(args),
        allow_tools=args.allow_tools,
        writes=args.allow_tool_writes,
    )
    _checked_start(spec, args)
    session = LiveSession.start(  # the name is chosen again here, so one taken since is passed
        spec,
        raw,
        provider_for,
        out=args.out,
        directory=args.sessions_dir,
        spec_source=args.spec,
        tools=tools,
    )
    try:
        return _headless(session, args)
    finally:
        session.close()


def _headless(session: LiveSession, args: argparse.Namespace) -> int:
    """Run to the end; ``--json`` keeps stdout for the result; Ctrl+C names the way back."""
    import shlex

    from tui.commands.headless import headless_console, result_json, run_headless

    try:
        code = run_headless(session, args.on_unresolved, headless_console(stderr=args.json))
    except KeyboardInterrupt:
        _err(f"moot: interrupted; saved up to its last completed turn: {session.path}")
        _err(f"continue it with: moot resume {shlex.quote(str(session.path))}")
        if args.json:  # stdout still gets its one object
            print(result_json(session, ExitCode.INTERRUPTED))
        return ExitCode.INTERRUPTED
    if args.json:
        print(result_json(session, code))
    return code


def _checked_start(spec: Spec, args: argparse.Namespace) -> None:
    """That the session can be written, and every model reached, before it exists."""
    from tui.engine.errors import MootInputError
    from tui.engine.live import session_target

    session_target(spec.debate.title, out=args.out, directory=args.sessions_dir)
    if not args.no_preflight:
        from tui.providers.preflight import document_routes, preflight

        problems = preflight(spec)
        if problems:
            raise MootInputError(f"{args.spec}: preflight (skip with --no-preflight)", problems)
        for line in document_routes(spec):  # what leaves the machine, before anything does
            _err(f"moot: {line}")
    from tui.providers.preflight import tool_calls

    for line in tool_calls(spec, args.allow_tool_writes):  # what a lookup may do, always said
        _err(f"moot: {line}")


def _raise_budgets(session: LiveSession, raises: list[str]) -> None:
    """``--raise-budget KEY=VALUE``: every raise checked before any is journalled."""
    from tui.engine.budget import parse_cap
    from tui.engine.errors import MootInputError

    parsed, problems = [], []
    for item in raises:
        key, _, text = item.partition("=")
        try:
            scope, cap = parse_cap(key)
            value = float(text)
            session.engine.budget.check_raise(scope, cap, value)
            parsed.append((scope, cap, int(value) if cap == "max_tokens" else value))
        except ValueError as err:
            problems.append(str(err) if key and text else f"{item}: expected KEY=VALUE")
    if problems:
        raise MootInputError("--raise-budget", problems)
    for scope, cap, value in parsed:
        session.engine.raise_budget(cap, value, scope or None)


def _resume_headless(args: argparse.Namespace) -> int:
    from tui.commands.headless import result_json
    from tui.engine.live import LiveSession
    from tui.engine.vocab import ESCALATE
    from tui.providers.registry import provider_for
    from tui.tools.toolbox import session_tools

    allowed = _allowed(args)
    session = LiveSession.resume(
        args.session,
        provider_for,
        force=args.force,
        tools_for=lambda data: session_tools(
            data, allowed, allow_tools=args.allow_tools, writes=args.allow_tool_writes
        ),
    )
    try:
        if session.tools is not None:  # what a lookup may do, as on a run
            from tui.providers.preflight import tool_calls

            for line in tool_calls(session.engine.spec, args.allow_tool_writes):
                _err(f"moot: {line}")
        result = session.store.result
        if result is not None and result.get("decision") != ESCALATE:
            if args.json:
                print(result_json(session, ExitCode.DECIDED))
            else:
                _out(f"{args.session}: already decided: {result.get('decision')}")
            return ExitCode.DECIDED
        _raise_budgets(session, args.raise_budget)
        return _headless(session, args)
    finally:
        session.close()


def _console(args: argparse.Namespace) -> int:
    from tui.app.launch import launch

    cmd = args.command
    theme = getattr(args, "theme", None)
    if cmd != "replay":  # a mistake in [telemetry] is said before the console takes the screen
        from tui.telemetry import settings

        settings()
    if cmd == "run":  # the console reads and preflights the spec after its first frame
        return launch(
            spec_path=args.spec,
            theme=theme,
            sessions_dir=args.sessions_dir,
            out=args.out,
            preflight=not args.no_preflight,
            allow_read=_allowed(args),
            allow_tools=args.allow_tools,
            allow_tool_writes=args.allow_tool_writes,
        )
    if cmd == "resume":
        return launch(
            resume_path=args.session,
            theme=theme,
            sessions_dir=args.sessions_dir,
            force=args.force,
            allow_read=_allowed(args),
            allow_tools=args.allow_tools,
            allow_tool_writes=args.allow_tool_writes,
        )
    if cmd == "replay":
        return launch(replay_path=args.session, theme=theme, sessions_dir=args.sessions_dir)
    return launch(theme=theme, sessions_dir=args.sessions_dir)
