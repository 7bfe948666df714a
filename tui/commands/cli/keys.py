"""``moot keys``: your session-signing key, and the keys whose signatures you trust."""

from __future__ import annotations

import argparse

from tui.commands.cli.say import err, out
from tui.exitcodes import ExitCode


def add_arguments(parser: argparse.ArgumentParser) -> None:
    keys_sub = parser.add_subparsers(dest="keys_command", required=True)
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


def run(args: argparse.Namespace) -> int:
    from tui.engine.record import keys

    what = args.keys_command
    if what == "show":
        signer = keys.user_signer()
        print(signer.public, keys.owner())  # the line `moot keys trust FILE` reads
        err(f"fingerprint {signer.fingerprint}; private key in {keys.key_path()} (never shared)")
    elif what == "list":
        listed, problems = keys.trusted_keys()
        for problem in problems:
            err(f"moot: warning: {problem}")
        if not listed:
            print("no keys yet: moot makes yours when it first writes a session")
        for key in listed:
            out(f"{key.fingerprint}  {key.name}{' (your key)' if key.own else ''}")
    elif what == "trust":
        key, before = keys.trust(args.file, args.name)
        if before == key.name:
            out(f"already trusted as {key.name!r}: {key.fingerprint}")
        else:
            was = f" (was {before!r})" if before is not None else ""
            out(f"trusted {key.fingerprint} as {key.name!r}{was} (in {keys.trust_path()})")
    else:
        for key in keys.untrust(args.key):
            out(f"no longer trusted: {key.fingerprint} {key.name!r}")
    return ExitCode.DECIDED
