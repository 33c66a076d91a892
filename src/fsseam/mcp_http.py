"""MCP over streamable HTTP (``fsseam serve URL --http HOST:PORT``), on the official SDK.

The SDK's session manager serves, at ``/mcp``, both the 2026-07-28 stateless
requests and the earlier session-based transport (``Mcp-Session-Id``). In
front of it:

- **Bearer tokens** (``--tokens FILE``): each non-comment line is ``NAME
  TOKEN``. The SDK's own bearer middleware asks :class:`TokenFile` about the
  presented token, which compares it with every known token in constant time;
  a missing or unknown token is HTTP 401 before any MCP processing, so it
  touches nothing. The principal ``NAME`` is the policy session (see
  :mod:`fsseam.mcp`), and the SDK binds each MCP session to the principal
  that opened it.
- **No tokens, loopback only**: without tokens only a loopback address may be
  bound (:func:`check_bind` refuses anything else before a socket is opened).
- **DNS-rebinding protection**: the SDK's transport security checks the
  ``Host`` and ``Origin`` headers against the names the server may be reached
  by (loopback names, the bound host, ``--allow-host`` names).
- **Access lines** go to the ``fsseam.http`` logger (stderr for ``fsseam
  serve``), one per request, never into a response.

starlette and uvicorn come with the MCP SDK (the ``fsseam[mcp]`` extra) and
are imported here only.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import re
import socket
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from fsseam._extras import missing_extra

try:
    import uvicorn
    from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
    from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
    from mcp.server.auth.provider import AccessToken
    from mcp.server.streamable_http_manager import (
        StreamableHTTPASGIApp,
        StreamableHTTPSessionManager,
    )
    from mcp.server.transport_security import TransportSecuritySettings
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.authentication import AuthenticationMiddleware
    from starlette.routing import Route
    from starlette.types import ASGIApp, Message, Receive, Scope, Send
except ImportError as exc:  # pragma: no cover - the CLI reports it
    raise missing_extra("the MCP HTTP server", "the MCP SDK", "mcp", exc) from exc

from fsseam.host import Context
from fsseam.mcp import build_server

__all__ = [
    "BindRefused",
    "TokenFile",
    "TokensError",
    "build_app",
    "check_bind",
    "is_loopback",
    "serve_http",
]

log = logging.getLogger("fsseam.http")

PATH: Final = "/mcp"
NAME_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
"""Principal names: no ``/`` or ``:``, so ``alice/thread`` can only be alice narrowed."""
MIN_TOKEN_CHARS: Final = 16
LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost", "[::1]")


class TokensError(ValueError):
    """A ``--tokens`` file that cannot be used (the message names the line)."""


class BindRefused(ValueError):
    """An address the server must not listen on as configured."""


@dataclass(frozen=True, slots=True)
class _Entry:
    name: str
    digest: bytes


class TokenFile:
    """The principals of a ``--tokens`` file, checked in constant time.

    Each non-blank line not starting with ``#`` is ``NAME TOKEN``: NAME
    letters, digits and ``._@-`` (up to 64), TOKEN at least 16 characters
    without spaces. Names and tokens must be unique.
    """

    def __init__(self, entries: Iterable[tuple[str, str]], *, source: str = "tokens") -> None:
        self.source = source
        self._entries: list[_Entry] = []
        seen_names: set[str] = set()
        seen_tokens: set[bytes] = set()
        for name, token in entries:
            digest = hashlib.sha256(token.encode()).digest()
            if name in seen_names:
                raise TokensError(f"{source}: principal {name!r} is listed twice")
            if digest in seen_tokens:
                raise TokensError(f"{source}: {name!r} reuses another principal's token")
            seen_names.add(name)
            seen_tokens.add(digest)
            self._entries.append(_Entry(name, digest))
        if not self._entries:
            raise TokensError(f"{source}: no principals (each line is NAME TOKEN)")

    @classmethod
    def load(cls, path: str | Path) -> TokenFile:
        """Parse a tokens file; :class:`TokensError` names the offending line."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise TokensError(f"cannot read tokens file {path}: {exc}") from exc
        entries: list[tuple[str, str]] = []
        for number, raw in enumerate(text.splitlines(), start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            fields = line.split()
            where = f"{path}:{number}"
            if len(fields) != 2:
                raise TokensError(f"{where}: expected NAME TOKEN, got {len(fields)} fields")
            name, token = fields
            if not NAME_PATTERN.fullmatch(name):
                raise TokensError(
                    f"{where}: principal {name!r} must be letters, digits and ._@- (up to 64)"
                )
            if len(token) < MIN_TOKEN_CHARS:
                raise TokensError(
                    f"{where}: the token of {name!r} is shorter than {MIN_TOKEN_CHARS} "
                    "characters; make one with: python -c "
                    '"import secrets; print(secrets.token_urlsafe(32))"'
                )
            entries.append((name, token))
        return cls(entries, source=str(path))

    @property
    def names(self) -> list[str]:
        """The principals, in file order."""
        return [entry.name for entry in self._entries]

    def principal(self, token: str) -> str | None:
        """The principal whose token this is, or ``None``.

        Every entry is compared (no early exit), digest against digest with
        :func:`hmac.compare_digest`, so the time taken says nothing about how
        much of a token matched or which entry it was close to.
        """
        presented = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
        found: str | None = None
        for entry in self._entries:
            if hmac.compare_digest(presented, entry.digest):
                found = entry.name
        return found

    async def verify_token(self, token: str) -> AccessToken | None:
        """The SDK's ``TokenVerifier``: the principal as ``client_id``, or ``None`` (→ 401)."""
        name = self.principal(token)
        if name is None:
            return None
        return AccessToken(token="<redacted>", client_id=name, scopes=[])


# -- addresses -------------------------------------------------------------------------


def _bare(host: str) -> str:
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback address."""
    bare = _bare(host)
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(bare, None)
    except OSError:
        return False
    addresses = {info[4][0] for info in infos}
    return bool(addresses) and all(ipaddress.ip_address(a).is_loopback for a in addresses)


def check_bind(host: str, *, tokens: TokenFile | None) -> None:
    """Refuse to listen beyond loopback without tokens (:class:`BindRefused`)."""
    if tokens is None and not is_loopback(host):
        raise BindRefused(
            f"refusing to serve on {host} without --tokens: anyone who can reach it could "
            "change your files. Bind 127.0.0.1, or give --tokens FILE (lines of NAME TOKEN)"
        )


def parse_address(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8000`` for IPv6) → ``(host, port)``; port 0 picks a free one."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"expected HOST:PORT (e.g. 127.0.0.1:8000), got {text!r}")
    return _bare(host), int(port)


def _security(host: str, allow_hosts: Sequence[str]) -> TransportSecuritySettings:
    names = list(LOOPBACK_NAMES)
    bare = _bare(host)
    if bare not in ("0.0.0.0", "::"):
        names.append(f"[{bare}]" if ":" in bare else bare)
    else:
        names.extend({socket.gethostname(), socket.getfqdn()})
    hosts: list[str] = []
    for name in [*names, *allow_hosts]:
        if re.search(r":\d+$", name) and not name.endswith("]"):
            hosts.append(name)  # an explicit NAME:PORT
        else:
            hosts.extend([name, f"{name}:*"])
    origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


# -- the app ---------------------------------------------------------------------------


class _AccessLog:
    """One line per request on the ``fsseam.http`` logger: who, what, status, time."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 0

        async def watch(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            user = scope.get("user")
            who = getattr(user, "display_name", "") if getattr(user, "is_authenticated", 0) else "-"
            client = scope.get("client") or ("-", 0)
            headers = dict(scope.get("headers") or [])
            note = ""
            if status == 421:
                host = headers.get(b"host", b"").decode("latin-1")
                note = f" (Host {host!r} is not allowed; add --allow-host {host})"
            log.info(
                "%s %s %s %d %s %.1f ms%s",
                client[0],
                scope.get("method", "-"),
                scope.get("path", "-"),
                status,
                who or "-",
                (time.perf_counter() - started) * 1000,
                note,
            )


def build_app(
    ctx: Context,
    *,
    host: str,
    tokens: TokenFile | None = None,
    allow_hosts: Sequence[str] = (),
) -> Starlette:
    """The ASGI app serving ``ctx``'s tools at ``/mcp``, with tokens and host checks."""
    server = build_server(ctx)
    manager = StreamableHTTPSessionManager(
        app=server,
        json_response=True,
        security_settings=_security(host, allow_hosts),
        # A full write of the largest editable file, JSON-escaped, must fit.
        max_request_body_size=max(4 << 20, 4 * (ctx.fs.max_edit_bytes or 0) + (1 << 20)),
    )
    endpoint: ASGIApp = StreamableHTTPASGIApp(manager)
    middleware: list[Middleware] = [Middleware(_AccessLog)]
    if tokens is not None:
        endpoint = RequireAuthMiddleware(endpoint, [], None)
        middleware += [
            Middleware(AuthenticationMiddleware, backend=BearerAuthBackend(tokens)),
            Middleware(AuthContextMiddleware),
        ]

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        async with manager.run():
            yield

    routes = [Route(PATH, endpoint=endpoint)]
    return Starlette(routes=routes, middleware=middleware, lifespan=lifespan)


def _listen(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # proto must say TCP: asyncio sets TCP_NODELAY only on sockets whose proto
    # is IPPROTO_TCP, and without it Nagle's algorithm meets the client's
    # delayed ACK and every response waits ~40 ms.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except BaseException:
        sock.close()
        raise
    return sock


async def serve_http(
    ctx: Context,
    *,
    host: str,
    port: int,
    tokens: TokenFile | None = None,
    allow_hosts: Sequence[str] = (),
    ready: Callable[[str], Any] | None = None,
) -> None:
    """Listen on ``host:port`` and serve until interrupted (SIGINT/SIGTERM).

    Raises :class:`BindRefused` (before opening a socket) for a non-loopback
    address without tokens. ``ready`` is called with the ``/mcp`` URL once
    the socket is bound (port 0 picks a free port).
    """
    check_bind(host, tokens=tokens)
    app = build_app(ctx, host=host, tokens=tokens, allow_hosts=allow_hosts)
    sock = _listen(host, port)
    try:
        bound = sock.getsockname()[1]
        shown = f"[{host}]" if ":" in host else host
        config = uvicorn.Config(
            app,
            log_config=None,
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=5,
        )
        server = uvicorn.Server(config)
        if ready is not None:
            ready(f"http://{shown}:{bound}{PATH}")
        await server.serve(sockets=[sock])
    finally:
        sock.close()
