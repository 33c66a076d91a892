"""The small runtime that wires a mounted file system, events, plugins and tools.

``Context(fs)`` mounts a provider; plugins (the policy, the tools) attach with
``ctx.plugin(...)``; adapters (CLI, MCP, your agent loop) call
``ctx.tools.execute(name, args, execution)``. A Context may be shared by many
asyncio tasks and by several threads, each running its own event loop.

Listeners of :meth:`Context.emit` are synchronous, but one called during
``execute`` may return an awaitable (a policy recording an observation in a
remote store): ``execute`` awaits it before it returns, so what a call
recorded is stored by the time its caller sees the result.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal, Protocol, runtime_checkable

from fsseam.seam import FileSystem, FsError, FsErrorCode

__all__ = [
    "FS_SESSION_ENDED",
    "MUTATES",
    "READ_ONLY",
    "Agent",
    "Context",
    "Plugin",
    "Tool",
    "ToolEffects",
    "ToolExecution",
    "ToolRegistry",
    "ToolResult",
    "UsageError",
]

log = logging.getLogger("fsseam")

Listener = Callable[..., Any]
SchemaFormat = Literal["openai", "anthropic", "mcp"]

FS_SESSION_ENDED: Final = "fs/session-ended"
"""``notify(session)``: a session ended for good (an MCP connection closed).

Adapters send it for sessions they minted themselves, never for a session
the caller named (a thread id outlives the connection). The policy drops
what the session observed.
"""

_REMEDIES = {
    FsErrorCode.FS_STALE_VERSION: " — re-read the file, then retry",
    FsErrorCode.FS_NOT_OBSERVED: " — read the file, then retry",
}


@dataclass(frozen=True, slots=True)
class Agent:
    """The agent running a tool; ``session`` is the policy owner (any object)."""

    session: object = None
    """Whatever identifies one conversation; the policy keys observations by it."""


@dataclass(frozen=True, slots=True)
class ToolExecution:
    """One tool call's context, passed to listeners as the opaque actor."""

    agent: Agent = field(default_factory=Agent)
    """The calling agent."""


class ToolResult:
    """What a tool call produced, for the model (``text``) and for code (``value``).

    ``value`` may be computed on first access (``lazy_value``): a read's
    line list costs as much as rendering it, and most agent loops only need
    ``text``.
    """

    __slots__ = ("_lazy", "_value", "error", "is_error", "text")

    is_error: bool
    """True when the call failed; ``text`` then says why and what to do."""
    text: str
    """The rendered text the model sees."""
    error: dict[str, str] | None
    """``{"name": ..., "code": ...}`` on failure."""

    def __init__(
        self,
        is_error: bool,
        text: str,
        value: dict[str, Any] | None = None,
        error: dict[str, str] | None = None,
        *,
        lazy_value: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        self.is_error = is_error
        self.text = text
        self.error = error
        self._value = value
        self._lazy = lazy_value

    @property
    def value(self) -> dict[str, Any] | None:
        """Structured result on success (``None`` on failure)."""
        if self._lazy is not None:
            self._value, self._lazy = self._lazy(), None
        return self._value

    def __repr__(self) -> str:
        return (
            f"ToolResult(is_error={self.is_error!r}, text={self.text!r}, "
            f"value={self.value!r}, error={self.error!r})"
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolResult):
            return NotImplemented
        return (self.is_error, self.text, self.value, self.error) == (
            other.is_error,
            other.text,
            other.value,
            other.error,
        )

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def failure(cls, exc: FsError, *, remedy: str | None = None, detail: str = "") -> ToolResult:
        """The result for an :class:`FsError`: ``CODE: message``, its remedy, then ``detail``.

        ``remedy`` replaces the code's usual one (`` — re-read the file, then
        retry`` for ``FS_STALE_VERSION``) when the tool knows a truer one; ``detail``
        (lines starting with a line break) follows it, as a stale error's change does.
        """
        fix = _REMEDIES.get(exc.code, "") if remedy is None else remedy
        text = f"{exc.code.value}: {exc.message}{fix}{detail}"
        return cls(True, text, None, {"name": "FsError", "code": exc.code.value})


@dataclass(frozen=True, slots=True)
class ToolEffects:
    """What a tool may do to the workspace, declared by the tool as ``effects``.

    Adapters turn it into what their protocol says (MCP tool annotations,
    the tools a read-only server lists); a tool that declares nothing is
    taken to change and overwrite files, the safe assumption.
    """

    read_only: bool
    """True when the tool never changes anything (read, ls, glob, grep)."""
    destructive: bool
    """True when a change may overwrite or remove existing content (write, edit)."""


READ_ONLY: Final = ToolEffects(read_only=True, destructive=False)
"""The effects of a tool that only looks."""

MUTATES: Final = ToolEffects(read_only=False, destructive=True)
"""The effects of a tool that may overwrite or remove content (the default)."""


class UsageError(Exception):
    """A mistake in how fsseam is wired up, for the developer (not the model).

    ``ToolRegistry.execute`` lets it through instead of turning it into a tool
    result: it is the one exception ``execute`` raises.
    """


@runtime_checkable
class Tool(Protocol):
    """A model-callable tool: a name, a description, a JSON Schema and ``run``.

    A tool may also declare ``effects`` (:class:`ToolEffects`); without it,
    it counts as :data:`MUTATES`.
    """

    name: str
    description: str
    parameters: dict[str, Any]

    async def run(
        self, ctx: Context, args: Mapping[str, Any], execution: ToolExecution | None
    ) -> ToolResult:
        """Validate ``args`` and perform the call; raise FsError or ToolArgumentsError."""
        ...


class ToolArgumentsError(Exception):
    """Arguments that fail validation; the message names the field."""


@runtime_checkable
class Plugin(Protocol):
    """Anything that attaches to a Context (listeners, tools)."""

    def setup(self, ctx: Context) -> None:
        """Register listeners and tools on ``ctx``."""
        ...


class ToolRegistry:
    """The tools registered on a Context: execute them and export their schemas."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx
        self._tools: dict[str, Tool] = {}
        self._local = threading.local()

    def register(self, tool: Tool) -> None:
        """Add a tool; a second tool with the same name replaces the first."""
        self._tools[tool.name] = tool

    def names(self) -> list[str]:
        """Registered tool names, in registration order."""
        return list(self._tools)

    def get(self, name: str) -> Tool | None:
        """The tool called ``name``, if registered."""
        return self._tools.get(name)

    def effects(self, name: str) -> ToolEffects:
        """What tool ``name`` declares it may do (:data:`MUTATES` when it declares nothing)."""
        effects = getattr(self._tools.get(name), "effects", None)
        return effects if isinstance(effects, ToolEffects) else MUTATES

    async def execute(
        self, name: str, args: Mapping[str, Any] | None, execution: ToolExecution | None = None
    ) -> ToolResult:
        """Run tool ``name``; never raises for anything a model can send.

        What listeners recorded during the call (observations) is stored
        before this returns. A :class:`UsageError` (a wiring mistake, such as
        a durable observation store given a non-string session) propagates.
        """
        pending: list[Awaitable[Any]] = []
        token = _PENDING.set(pending)
        try:
            result = await self._run(name, args, execution)
        finally:
            _PENDING.reset(token)
        if pending:
            result = await _settle(name, result, pending)
        return result

    async def _run(
        self, name: str, args: Mapping[str, Any] | None, execution: ToolExecution | None
    ) -> ToolResult:
        tool = self._tools.get(name)
        if tool is None:
            known = ", ".join(self._tools) or "none"
            return ToolResult(
                True,
                f"UNKNOWN_TOOL: no tool named {name!r}; available tools: {known}",
                None,
                {"name": "ToolError", "code": "UNKNOWN_TOOL"},
            )
        if args is None:
            args = {}
        if not isinstance(args, Mapping):
            return _invalid(f"{name} arguments must be a JSON object, got {type(args).__name__}")
        try:
            return await tool.run(self._ctx, args, execution)
        except ToolArgumentsError as exc:
            return _invalid(str(exc))
        except FsError as exc:
            return ToolResult.failure(exc)
        except UsageError:
            raise
        except Exception as exc:  # a bug or an unmapped store failure: report, don't raise
            log.exception("tool %s failed unexpectedly", name)
            return ToolResult(
                True,
                f"FS_IO_ERROR: {name} failed unexpectedly ({type(exc).__name__}: {exc})",
                None,
                {"name": type(exc).__name__, "code": FsErrorCode.FS_IO_ERROR.value},
            )

    def execute_sync(
        self, name: str, args: Mapping[str, Any] | None, execution: ToolExecution | None = None
    ) -> ToolResult:
        """:meth:`execute` for synchronous callers (one reusable loop per thread)."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            pass
        else:
            # Called from inside a running loop: run on a private thread instead of
            # nesting loops, which asyncio forbids.
            result: list[ToolResult] = []
            worker = threading.Thread(
                target=lambda: result.append(self.execute_sync(name, args, execution))
            )
            worker.start()
            worker.join()
            return result[0]
        loop: asyncio.AbstractEventLoop | None = getattr(self._local, "loop", None)
        if loop is None or loop.is_closed():
            loop = asyncio.new_event_loop()
            self._local.loop = loop
        return loop.run_until_complete(self.execute(name, args, execution))

    def schemas(self, format: SchemaFormat | None = None) -> list[dict[str, Any]]:
        """Tool definitions: plain, or shaped for OpenAI, Anthropic or MCP."""
        out: list[dict[str, Any]] = []
        for tool in self._tools.values():
            params = _copy_schema(tool.parameters)
            if format is None:
                out.append(
                    {"name": tool.name, "description": tool.description, "parameters": params}
                )
            elif format == "openai":
                out.append(
                    {
                        "type": "function",
                        "function": {
                            "name": tool.name,
                            "description": tool.description,
                            "parameters": params,
                        },
                    }
                )
            elif format == "anthropic":
                out.append(
                    {"name": tool.name, "description": tool.description, "input_schema": params}
                )
            elif format == "mcp":
                out.append(
                    {"name": tool.name, "description": tool.description, "inputSchema": params}
                )
            else:
                raise ValueError(
                    f"unknown schema format {format!r}; use 'openai', 'anthropic' or 'mcp'"
                )
        return out


_PENDING: contextvars.ContextVar[list[Awaitable[Any]] | None] = contextvars.ContextVar(
    "fsseam_pending", default=None
)
"""Awaitables returned by ``emit`` listeners during the current ``execute``."""


async def _settle(name: str, result: ToolResult, pending: list[Awaitable[Any]]) -> ToolResult:
    """Await what the call's listeners deferred; a failure of theirs becomes the result.

    Every awaitable is awaited (none is left un-run), in emission order. A
    call that failed keeps its own error; a call that succeeded but whose
    observation could not be stored reports that, saying the call itself
    completed, so the model neither trusts a record that is missing nor
    assumes its change was lost.
    """
    failure: FsError | None = None
    usage: UsageError | None = None
    for awaitable in pending:
        try:
            await awaitable
        except UsageError as exc:
            usage = usage or exc
        except FsError as exc:
            failure = failure or exc
        except Exception as exc:
            log.exception("a listener of tool %s failed", name)
            failure = failure or FsError(f"{type(exc).__name__}: {exc}", FsErrorCode.FS_IO_ERROR)
    if usage is not None:
        raise usage
    if failure is None or result.is_error:
        return result
    failed = ToolResult.failure(failure)
    failed.text += f" (the {name} call itself completed, but what it saw was not recorded)"
    return failed


def _copy_schema(schema: dict[str, Any]) -> dict[str, Any]:
    import copy

    return copy.deepcopy(schema)


def _invalid(message: str) -> ToolResult:
    return ToolResult(
        True,
        f"INVALID_ARGUMENTS: {message}",
        None,
        {"name": "ValidationError", "code": "INVALID_ARGUMENTS"},
    )


class Context:
    """A mounted file system with an event bus, plugins and a tool registry."""

    def __init__(self, fs: FileSystem) -> None:
        self.fs = fs
        """The mounted provider."""
        self.tools = ToolRegistry(self)
        """The registered tools."""
        self._lock = threading.Lock()
        self._listeners: dict[str, tuple[Listener, ...]] = {}
        self.plugins: list[object] = []
        """Plugins in the order they were attached."""

    def plugin(self, plugin: Plugin) -> Context:
        """Attach a plugin (it registers its listeners and tools); returns the Context."""
        plugin.setup(self)
        self.plugins.append(plugin)
        return self

    def on(self, name: str, listener: Listener) -> Callable[[], None]:
        """Subscribe ``listener`` to event ``name``; returns a function that unsubscribes."""
        with self._lock:
            self._listeners[name] = (*self._listeners.get(name, ()), listener)

        def off() -> None:
            with self._lock:
                current = self._listeners.get(name, ())
                self._listeners[name] = tuple(item for item in current if item is not listener)

        return off

    def emit(self, name: str, *args: Any) -> None:
        """Notify every listener of ``name``, synchronously, ignoring their results.

        A failing listener is logged and does not stop the others (an audit
        logger must never break a tool call). A listener that returns an
        awaitable during ``ToolRegistry.execute`` has it awaited before
        ``execute`` returns (its failure then becomes the call's result);
        outside ``execute`` the awaitable is dropped with a warning: use
        :meth:`notify` there.
        """
        pending = _PENDING.get()
        for listener in self._listeners.get(name, ()):
            try:
                result = listener(*args)
                if inspect.isawaitable(result):
                    if pending is not None:
                        pending.append(result)
                        continue
                    _close_awaitable(result)
                    log.warning(
                        "listener %r of %s returned an awaitable outside a tool call; "
                        "use await ctx.notify(...)",
                        listener,
                        name,
                    )
            except UsageError:
                raise
            except Exception:
                log.exception("listener %r of %s failed", listener, name)

    async def notify(self, name: str, *args: Any) -> None:
        """Like :meth:`emit`, awaiting listeners that return awaitables; failures are logged."""
        for listener in self._listeners.get(name, ()):
            try:
                result = listener(*args)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                log.exception("listener %r of %s failed", listener, name)

    async def waterfall(self, name: str, *args: Any, default: Callable[[], Any]) -> Any:
        """Ask the first listener of ``name`` to decide; without listeners, ``default()``.

        Listeners may be sync or async; their exceptions propagate (a policy
        refusing a write raises FsError).
        """
        listeners = self._listeners.get(name, ())
        result = listeners[0](*args) if listeners else default()
        if inspect.isawaitable(result):
            return await result
        return result


def _close_awaitable(result: Awaitable[Any]) -> None:
    close = getattr(result, "close", None)
    if callable(close):
        close()
