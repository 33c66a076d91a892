"""Tool arguments: pydantic models for validation and the JSON Schemas the model sees.

The JSON Schemas are written out by hand (pinned by exact-text tests) so that
what the model reads is deliberate; the models validate against the same
fields, and a test keeps the two in step.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Self, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from fsseam.host import ToolArgumentsError

__all__ = [
    "EDIT_SCHEMA",
    "GLOB_SCHEMA",
    "GREP_SCHEMA",
    "LS_SCHEMA",
    "MULTI_EDIT_SCHEMA",
    "READ_SCHEMA",
    "WRITE_SCHEMA",
    "EditArgs",
    "EditItem",
    "GlobArgs",
    "GrepArgs",
    "LsArgs",
    "MultiEditArgs",
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
    """Strict arguments: ``true`` is not 1 and ``"yes"`` is not true, in every tool.

    An optional field given ``null`` takes its default, as if it were left
    out: strict-mode schemas (every property required, optional ones
    nullable, as the OpenAI Agents SDK sends them) work for every tool.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    @model_validator(mode="before")
    @classmethod
    def _null_is_default(cls, data: Any) -> Any:
        if isinstance(data, dict) and None in data.values():
            fields = cls.model_fields
            return {
                key: value
                for key, value in data.items()
                if value is not None or key not in fields or fields[key].is_required()
            }
        return data

    @field_validator("*", mode="after")
    @classmethod
    def _valid_unicode(cls, value: Any, info: ValidationInfo) -> Any:
        # JSON can carry a lone surrogate ("\ud800"); it is not text, could not
        # be written as UTF-8 and must not reach a file name.
        if isinstance(value, str) and not _encodable(value):
            raise ValueError(
                f"{info.field_name}: contains an unpaired surrogate code point, "
                "which is not valid Unicode text"
            )
        return value


_SURROGATE = re.compile("[\ud800-\udfff]")


def _encodable(text: str) -> bool:
    # A search, not an encode: a 200 MiB content must not cost a 200 MiB copy.
    return text.isascii() or _SURROGATE.search(text) is None


class _FileArgs(_Args):
    """Arguments that start with the ``file_path`` of one file."""

    file_path: StrictStr


class ReadArgs(_FileArgs):
    """Arguments of ``read``; a negative ``offset`` counts from the end (``-N``: last N lines)."""

    offset: StrictInt | None = None
    limit: StrictInt | None = Field(default=None, ge=1)

    @field_validator("offset")
    @classmethod
    def _not_zero(cls, value: int | None) -> int | None:
        if value == 0:
            raise ValueError(
                "offset: must not be 0 (1 is the first line; -N starts N lines before the end)"
            )
        return value


class WriteArgs(_FileArgs):
    """Arguments of ``write``."""

    content: StrictStr


class EditItem(_Args):
    """One replacement of ``multi_edit`` (and, with ``file_path``, of ``edit``)."""

    old_string: StrictStr = Field(min_length=1)
    new_string: StrictStr
    replace_all: StrictBool = False

    @model_validator(mode="after")
    def _differs(self) -> Self:
        if self.old_string == self.new_string:
            raise ValueError(
                "new_string: must differ from old_string (the edit would change nothing)"
            )
        return self


class EditArgs(EditItem, _FileArgs):
    """Arguments of ``edit``: ``file_path`` first, then one replacement."""


class MultiEditArgs(_FileArgs):
    """Arguments of ``multi_edit``."""

    edits: list[EditItem] = Field(min_length=1)


class LsArgs(_Args):
    """Arguments of ``ls``."""

    path: StrictStr = "."
    offset: StrictInt | None = Field(default=None, ge=1)
    limit: StrictInt | None = Field(default=None, ge=1)


class GlobArgs(_Args):
    """Arguments of ``glob``."""

    pattern: StrictStr = Field(min_length=1)
    path: StrictStr = "."


class GrepArgs(_Args):
    """Arguments of ``grep``."""

    pattern: StrictStr = Field(min_length=1)
    path: StrictStr = "."
    glob: StrictStr | None = Field(default=None, min_length=1)
    ignore_case: StrictBool = False
    literal: StrictBool = False


READ_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": _FILE_PATH,
        "offset": {
            "type": "integer",
            "description": (
                "Line number to start reading from (1-based); -N starts N lines before the end. "
                "Only for large files."
            ),
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

_REPLACEMENT: dict[str, Any] = {
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
}
"""The properties of one replacement, in ``edit`` and in each of ``multi_edit``'s edits."""

EDIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": _FILE_PATH,
        **_REPLACEMENT,
    },
    "required": ["file_path", "old_string", "new_string"],
    "additionalProperties": False,
}

MULTI_EDIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": _FILE_PATH,
        "edits": {
            "type": "array",
            "minItems": 1,
            "description": (
                "Replacements applied in order, each to the text the previous ones left. "
                "All succeed or none is applied."
            ),
            "items": {
                "type": "object",
                "properties": _REPLACEMENT,
                "required": ["old_string", "new_string"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["file_path", "edits"],
    "additionalProperties": False,
}

_DIRECTORY = {
    "type": "string",
    "description": (
        "Directory to look in, relative to the workspace root (or absolute inside it); "
        'default "." (the root).'
    ),
}

LS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": _DIRECTORY,
        "offset": {
            "type": "integer",
            "minimum": 1,
            "description": "Entry number to start from (1-based), to page through big directories.",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "description": "Maximum number of entries to list (default 200).",
        },
    },
    "required": [],
    "additionalProperties": False,
}

GLOB_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "description": (
                'Glob relative to path: "*" and "?" within a name, "**" across directories, '
                '"{a,b}" alternatives, e.g. "**/*.py" or "src/**/test_*.{js,ts}".'
            ),
        },
        "path": _DIRECTORY,
    },
    "required": ["pattern"],
    "additionalProperties": False,
}

GREP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "description": (
                "Regular expression (RE2 syntax: no look-around or backreferences) matched "
                "against each line."
            ),
        },
        "path": {
            "type": "string",
            "description": (
                "File or directory to search, relative to the workspace root (or absolute "
                'inside it); default "." (the root).'
            ),
        },
        "glob": {
            "type": "string",
            "description": (
                'Only search files matching this glob, e.g. "*.py" (matched against the file '
                'name) or "src/**/*.ts" (matched against the path below path).'
            ),
        },
        "ignore_case": {
            "type": "boolean",
            "description": "Match letters of either case (default false).",
        },
        "literal": {
            "type": "boolean",
            "description": "Treat pattern as plain text, not a regular expression (default false).",
        },
    },
    "required": ["pattern"],
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
    "too_short": "must not be empty",
    "list_type": "must be a list",
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
}


def parse_args(tool: str, model: type[M], args: Mapping[str, Any]) -> M:
    """Validate ``args`` for ``tool``; raise ToolArgumentsError naming each bad field."""
    try:
        return model.model_validate(dict(args))
    except ValidationError as exc:
        problems: list[str] = []
        for err in exc.errors(include_url=False):
            where, field = _location(err["loc"])
            kind = err["type"]
            if kind == "extra_forbidden" and not where:
                allowed = ", ".join(model.model_fields)
                problems.append(f"{field}: is not a parameter of {tool} (parameters: {allowed})")
            elif kind == "extra_forbidden":
                problems.append(f"{where}{field}: is not a field of an edit")
            elif kind == "value_error":
                message = str(err["ctx"]["error"]) if "ctx" in err else err["msg"]
                problems.append(where + message)
            else:
                label = f"{where}{field}" if field else where.removesuffix(": ")
                problems.append(f"{label}: {_MESSAGES.get(kind, err['msg'])}")
        raise ToolArgumentsError("; ".join(problems)) from None


def _location(loc: tuple[int | str, ...]) -> tuple[str, str]:
    """``("edits", 1, "new_string")`` -> ``("edit 2: ", "new_string")`` (items count from 1)."""
    for index, part in enumerate(loc):
        if isinstance(part, int) and index:
            item = str(loc[index - 1]).removesuffix("s")
            rest = ".".join(str(p) for p in loc[index + 1 :])
            return f"{item} {part + 1}: ", rest
    return "", ".".join(str(part) for part in loc)
