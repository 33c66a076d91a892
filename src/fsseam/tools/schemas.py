"""Tool arguments: pydantic models for validation and the JSON Schemas the model sees.

The JSON Schemas are written out by hand (pinned by exact-text tests) so that
what the model reads is deliberate; the models validate against the same
fields, and a test keeps the two in step.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from fsseam.host import ToolArgumentsError

__all__ = [
    "EDIT_SCHEMA",
    "READ_SCHEMA",
    "WRITE_SCHEMA",
    "EditArgs",
    "ReadArgs",
    "WriteArgs",
    "parse_args",
]

M = TypeVar("M", bound=BaseModel)

_FILE_PATH = {
    "type": "string",
    "description": ("Path of the file, relative to the workspace root (or absolute inside it)."),
}


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ReadArgs(_Args):
    """Arguments of ``read``."""

    file_path: str
    offset: int | None = Field(default=None, ge=1)
    limit: int | None = Field(default=None, ge=1)


class WriteArgs(_Args):
    """Arguments of ``write``."""

    file_path: str
    content: str


class EditArgs(_Args):
    """Arguments of ``edit``."""

    file_path: str
    old_string: str = Field(min_length=1)
    new_string: str
    replace_all: bool = False

    @model_validator(mode="after")
    def _differs(self) -> EditArgs:
        if self.old_string == self.new_string:
            raise ValueError(
                "new_string: must differ from old_string (the edit would change nothing)"
            )
        return self


READ_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": _FILE_PATH,
        "offset": {
            "type": "integer",
            "minimum": 1,
            "description": "Line number to start reading from (1-based). Only for large files.",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "description": "Maximum number of lines to read (default 2000).",
        },
    },
    "required": ["file_path"],
    "additionalProperties": False,
}

WRITE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": _FILE_PATH,
        "content": {"type": "string", "description": "The complete new content of the file."},
    },
    "required": ["file_path", "content"],
    "additionalProperties": False,
}

EDIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": _FILE_PATH,
        "old_string": {
            "type": "string",
            "description": (
                "Exact text to replace, copied from the file without the line-number prefix. "
                "Must match exactly once unless replace_all is true."
            ),
        },
        "new_string": {
            "type": "string",
            "description": "Text to put in its place (must differ from old_string).",
        },
        "replace_all": {
            "type": "boolean",
            "description": "Replace every occurrence of old_string (default false).",
        },
    },
    "required": ["file_path", "old_string", "new_string"],
    "additionalProperties": False,
}

_MESSAGES = {
    "missing": "is required",
    "string_type": "must be a string",
    "int_type": "must be an integer",
    "int_parsing": "must be an integer",
    "int_from_float": "must be a whole number",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "greater_than_equal": "must be 1 or more",
    "string_too_short": "must not be empty",
}


def parse_args(tool: str, model: type[M], args: Mapping[str, Any]) -> M:
    """Validate ``args`` for ``tool``; raise ToolArgumentsError naming each bad field."""
    try:
        return model.model_validate(dict(args))
    except ValidationError as exc:
        problems: list[str] = []
        for err in exc.errors(include_url=False):
            field = ".".join(str(part) for part in err["loc"])
            kind = err["type"]
            if kind == "extra_forbidden":
                allowed = ", ".join(model.model_fields)
                problems.append(f"{field}: is not a parameter of {tool} (parameters: {allowed})")
            elif kind == "value_error":
                problems.append(str(err["ctx"]["error"]) if "ctx" in err else err["msg"])
            else:
                problems.append(f"{field}: {_MESSAGES.get(kind, err['msg'])}")
        raise ToolArgumentsError("; ".join(problems)) from None
