"""Real receivers on loopback for the notify tests: a webhook that checks the signature, and
an SMTP server (aiosmtpd) that insists on STARTTLS and a login before it takes a mail."""

from __future__ import annotations

import datetime
import errno
import hashlib
import hmac
import ipaddress
import itertools
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.fake_openai import free_port


class Hook:
    """One POST as the receiver saw it, and whether its signature held."""

    def __init__(self, path: str, headers: dict[str, str], body: bytes, signed_ok: bool) -> None:
        self.path, self.headers, self.body, self.signed_ok = path, headers, body, signed_ok

    def json(self) -> Any:
        return json.loads(self.body)


class WebhookReceiver:
    """``http.server`` in a thread; with ``secret``, a POST whose X-Moot-Signature-256 is not
    the HMAC-SHA256 of its body is answered 401 (and kept, marked, for the test to see)."""

    def __init__(self, secret: str | None = None) -> None:
        self.secret = secret
        self.hooks: list[Hook] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                signed_ok = True
                if receiver.secret is not None:
                    mac = hmac.new(receiver.secret.encode(), body, hashlib.sha256).hexdigest()
                    given = self.headers.get("X-Moot-Signature-256", "")
                    signed_ok = hmac.compare_digest(given, f"sha256={mac}")
                receiver.hooks.append(Hook(self.path, dict(self.headers), body, signed_ok))
                self.send_response(200 if signed_ok else 401)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/team"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> WebhookReceiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def wait_for(predicate: Any, timeout: float = 60.0) -> None:
    """Poll until ``predicate()`` holds; fail at the deadline."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("not within the deadline")
        time.sleep(0.02)


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, as PEM files; the certificate is its own CA."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = folder / "smtp-cert.pem", folder / "smtp-key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_file, key_file


class MailServer:
    """aiosmtpd on loopback: STARTTLS required, then a login (``user``/``password``)."""

    def __init__(self, folder: Path, user: str, password: str) -> None:
        import ssl

        self.cert, key = self_signed(folder)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.cert, key)
        self.mails: list[Envelope] = []
        self.logins: list[tuple[bytes, bytes]] = []
        server = self

        class Handler:
            async def handle_DATA(self, smtp: SMTP, session: Session, envelope: Envelope) -> str:
                server.mails.append(envelope)
                return "250 OK"

        def authenticate(
            smtp: SMTP, session: Session, envelope: Envelope, mechanism: str, data: Any
        ) -> AuthResult:
            assert isinstance(data, LoginPassword)
            server.logins.append((data.login, data.password))
            ok = data.login == user.encode() and data.password == password.encode()
            return AuthResult(success=ok)

        self._controller = lambda port: Controller(
            Handler(),
            hostname="127.0.0.1",
            port=port,
            tls_context=context,
            require_starttls=True,
            authenticator=authenticate,
            auth_require_tls=True,
            auth_required=True,
        )
        self.port = 0

    def __enter__(self) -> MailServer:
        # aiosmtpd's controller needs its port before it binds, and any socket on the
        # machine may take a port picked free before then: pick again when that happens.
        for attempt in itertools.count(1):
            self.port = free_port()
            self.controller = self._controller(self.port)
            try:
                self.controller.start()
                break
            except OSError as err:
                if err.errno != errno.EADDRINUSE or attempt == 5:
                    raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.controller.stop()
