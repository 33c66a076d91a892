"""The public surface: names re-exported from ``fsseam`` are pinned."""

from __future__ import annotations

from typing import Any

import fsseam
from fsseam.seam import FsError, FsErrorCode

EXPECTED = {
    "DEFAULT_MAX_EDIT_BYTES", "FS_COMMITTED", "FS_EDIT_INTENT", "FS_OBSERVED",
    "FS_WRITE_INTENT", "Absent", "Agent", "Context", "CreateIfAbsent", "DiscoveryTools",
    "FileSystem", "FileTools", "FsAborted",
    "FsAmbiguousEdit", "FsCapabilities", "FsDirEntry", "FsEditNotFound", "FsEditOutcome",
    "FsEditRequest", "FsError", "FsErrorCode", "FsIOError", "FsInfo", "FsNotDirectory",
    "FsNotFound", "FsNotObserved", "FsNotRegularFile", "FsNotText", "FsObservation",
    "FsPathInfo", "FsPermissionDenied", "FsSandboxDenied", "FsStaleVersion", "FsTarget",
    "FsTargetKey", "FsTextStream", "FsTooLarge", "FsVersion", "FsWalkEntry", "FsWriteIntent",
    "FsWriteOutcome", "FsDeleteOutcome", "FsMoveOutcome", "FsMoveIncomplete",
    "FsspecFileSystem", "ObservationPolicy", "Plugin", "Present", "ReplaceIfVersion", "Tool",
    "ToolExecution", "ToolRegistry", "ToolResult", "__version__", "open_fs",
    "MemoryObservationStore", "ObservationStore", "RedisObservationStore",
    "SqliteObservationStore", "open_observations", "FsEditIntent", "RebaseIfClean",
}  # fmt: skip


def test_public_names_are_pinned() -> None:
    assert set(fsseam.__all__) == EXPECTED
    for name in fsseam.__all__:
        assert hasattr(fsseam, name), name


def test_error_codes_equal_their_names() -> None:
    assert [code.value for code in FsErrorCode] == [code.name for code in FsErrorCode]
    assert len(FsErrorCode) == 13


def test_fs_error_builds_the_subclass_catchable_as_builtin() -> None:
    exc = FsError("gone", FsErrorCode.FS_NOT_FOUND)
    assert isinstance(exc, FileNotFoundError)
    assert exc.code is FsErrorCode.FS_NOT_FOUND
    assert str(exc) == "gone"
    assert isinstance(FsError("x", "FS_SANDBOX_DENIED"), PermissionError)
    assert isinstance(FsError("x", "FS_NOT_REGULAR_FILE"), IsADirectoryError)


def test_layers_do_not_import_each_other() -> None:
    import ast
    from pathlib import Path

    root = Path(fsseam.__file__).parent
    forbidden = {
        "tools": ("fsseam.backends", "fsspec", "fsseam.policy"),
        "seam": (
            "fsspec",
            "fsseam.backends",
            "fsseam.tools",
            "fsseam.policy",
            "fsseam.host",
            "fsseam.text",  # text imports the seam: never the other way round
        ),
        "policy.py": ("fsseam.backends", "fsseam.tools", "fsspec"),
        "backends": ("fsseam.tools", "fsseam.policy", "fsseam.host", "pydantic"),
        "text.py": ("fsspec", "fsseam.backends"),
    }
    for part, banned in forbidden.items():
        files = [root / part] if part.endswith(".py") else list((root / part).rglob("*.py"))
        for file in files:
            for node in ast.walk(ast.parse(file.read_text())):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module]
                for name in names:
                    assert not name.startswith(banned), f"{file} imports {name}"


def test_cloud_sdks_are_imported_only_in_their_dialect() -> None:
    import ast
    from pathlib import Path

    root = Path(fsseam.__file__).parent
    owners = {
        "s3fs": "s3.py", "botocore": "s3.py", "aiobotocore": "s3.py",
        "gcsfs": "gcs.py", "google": "gcs.py",
        "adlfs": "azure.py", "azure": "azure.py",
    }  # fmt: skip
    for file in root.rglob("*.py"):
        if "testing" in file.parts:
            continue
        for node in ast.walk(ast.parse(file.read_text())):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                if top in owners:
                    assert file.name == owners[top], f"{file} imports {name}"


def _imports(file: Any) -> list[str]:
    """Every absolute module a file imports, at any depth (lazy imports included)."""
    import ast

    names: list[str] = []
    for node in ast.walk(ast.parse(file.read_text())):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.extend([node.module] + [f"{node.module}.{a.name}" for a in node.names])
    return names


def test_adapters_use_host_and_seam_never_a_concrete_backend() -> None:
    from pathlib import Path

    root = Path(fsseam.__file__).parent
    adapters = [
        *(root / "cli").glob("*.py"),
        root / "mcp.py",
        root / "mcp_http.py",
        *(root / "integrations").glob("*.py"),
    ]
    # open_fs builds a store from a URL, DEFAULT_DENY / DenyRules are the deny
    # patterns a user passes: values, not a backend class to reach into.
    allowed = {"fsseam.backends", "fsseam.backends.open_fs", "fsseam.backends.DEFAULT_DENY"}
    allowed |= {"fsseam.backends.containment", "fsseam.backends.containment.DenyRules"}
    for file in adapters:
        for name in _imports(file):
            if name.startswith("fsseam.backends"):
                assert name in allowed, f"{file.relative_to(root)} imports {name}"


def test_each_framework_is_imported_in_its_own_module_only() -> None:
    from pathlib import Path

    root = Path(fsseam.__file__).parent
    owners = {
        "pydantic_ai": {"integrations/pydantic_ai.py"},
        "agents": {"integrations/openai_agents.py"},
        "langchain_core": {"integrations/langchain.py"},
        "redis": {"observations.py"},
        "starlette": {"mcp_http.py"},
        "uvicorn": {"mcp_http.py"},
        "mcp": {"mcp.py", "mcp_http.py"},
    }
    for file in root.rglob("*.py"):
        where = file.relative_to(root).as_posix()
        if where.startswith("testing/"):
            continue
        for name in _imports(file):
            top = name.split(".")[0]
            if top in owners:
                assert where in owners[top], f"{where} imports {name}"
