"""What every fsseam tool shares: what the model sees of it, and ``run``.

A tool class states its model-facing side once, as a :class:`ToolSpec`
(name, description, JSON Schema, the pydantic model that validates the
arguments, effects), and implements :meth:`ModelTool.call`, which receives
the validated arguments. ``run`` — the :class:`~fsseam.host.Tool` entry point
— validates and dispatches, the same way for every tool, so an argument
error reads the same everywhere (:func:`~fsseam.tools.schemas.parse_args`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from fsseam.host import MUTATES, Context, ToolEffects, ToolExecution, ToolResult
from fsseam.tools.schemas import parse_args

__all__ = ["ModelTool", "ToolSpec"]

A = TypeVar("A")


@dataclass(frozen=True, slots=True)
class ToolSpec(Generic[A]):
    """A tool as the model sees it, and the model class that checks its arguments.

    ``parameters`` is the hand-written JSON Schema (pinned by exact-text tests);
    ``args`` validates against the same fields. ``effects`` is what the tool
    may do to the workspace (:data:`~fsseam.host.MUTATES` unless it only looks).
    """

    name: str
    description: str
    parameters: dict[str, Any]
    args: type[A]
    effects: ToolEffects = MUTATES


class ModelTool(ABC, Generic[A]):
    """Base of fsseam's tools: ``run`` validates the arguments, :meth:`call` acts on them.

    A subclass sets ``spec``; ``name``, ``description``, ``parameters`` and
    ``effects`` (what :class:`~fsseam.host.ToolRegistry` reads) follow from it.
    """

    __slots__ = ()

    spec: ClassVar[ToolSpec[Any]]
    name: str
    description: str
    parameters: dict[str, Any]
    effects: ClassVar[ToolEffects]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        spec = cls.__dict__.get("spec")
        if spec is not None:
            cls.name = spec.name
            cls.description = spec.description
            cls.parameters = spec.parameters
            cls.effects = spec.effects

    async def run(
        self, ctx: Context, args: Mapping[str, Any], execution: ToolExecution | None
    ) -> ToolResult:
        """Validate ``args`` against ``spec.args`` (``INVALID_ARGUMENTS``), then :meth:`call`."""
        return await self.call(ctx, parse_args(self.name, self.spec.args, args), execution)

    @abstractmethod
    async def call(self, ctx: Context, args: A, execution: ToolExecution | None) -> ToolResult:
        """Perform the call with validated ``args``; raise FsError or ToolArgumentsError."""
