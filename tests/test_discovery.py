"""ls, glob and grep: exact texts, bounds, containment; and the seam's default walk.

Tool tests run on local disk and on the memory store; the same tree must give
the same text on both, paths aside.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import fsspec
import pytest

from fsseam import Context, DiscoveryTools, FileTools, ObservationPolicy, open_fs
from fsseam.backends import DEFAULT_MAX_EDIT_BYTES, FsspecFileSystem
from fsseam.seam import (
    FileSystem,
    FsEditRequest,
    FsTarget,
    FsTextStream,
)
from fsseam.testing import FileSystemOpener, FsspecRawStore, RawStore
from fsseam.testing.harness import DelegatingFileSystem, Harness
from fsseam.testing.suite import DiscoverySuite, MultiEditSuite
from tests.conformance.test_local import LocalFixtures

TREE = {
    "README.md": b"# Demo\nSee src.\n",
    "src/app.py": b"import os\n\n\ndef main():\n    return os.getcwd()\n",
    "src/util.py": b"def helper(x):\n    return x  # TODO tidy\n",
    "src/pkg/__init__.py": b"",
    "src/pkg/core.ts": b"export const main = () => 1;\r\nconst TODO = 2;\r\n",
    "docs/guide.md": b"Call main() first.\nTODO: more\n",
    "data/blob.bin": b"\x00\x01\x02main",
    "data/latin1.txt": b"caf\xe9 main\n",
    ".git/config": b"[core] main\n",
    ".env": b"SECRET=main\n",
    "src/.env": b"SECRET=main\n",
}


def discovery_context(fs: FileSystem, **limits: int) -> Context:
    ctx = Context(fs)
    ctx.plugin(ObservationPolicy())
    ctx.plugin(FileTools())
    ctx.plugin(DiscoveryTools(**limits))
    return ctx


@pytest.fixture(params=["local", "memory"])
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Harness]:
    if request.param == "local":
        root = tmp_path / "root"
        root.mkdir()

        def put(rel: str, data: bytes) -> None:
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)

        for rel, data in TREE.items():
            put(rel, data)
        yield Harness(
            discovery_context(open_fs(str(root))),
            put,
            lambda rel: (root / rel).read_bytes(),
            str(root),
        )
    else:
        name = f"/discovery-{tmp_path.name}"
        mem = fsspec.filesystem("memory")
        for rel, data in TREE.items():
            mem.pipe_file(f"{name}/{rel}", data)
        yield Harness(
            discovery_context(open_fs(f"memory://{name}")),
            lambda rel, data: mem.pipe_file(f"{name}/{rel}", data),
            lambda rel: bytes(mem.cat_file(f"{name}/{rel}")),
            f"memory://{name}",
        )
        mem.rm(name, recursive=True)


def call(h: Harness, tool: str, **args: Any) -> Any:
    return h.call(tool, args, h.run())


def root_of(h: Harness) -> str:
    """The root as display paths spell it (memory URLs carry three slashes)."""
    return str(h.ctx.fs.root)  # type: ignore[attr-defined]


def with_limits(h: Harness, **limits: int) -> Harness:
    return Harness(discovery_context(h.ctx.fs, **limits), h.put, h.get, h.root)


# -- ls ---------------------------------------------------------------------------------


def test_ls_lists_one_level_with_types_and_sizes(harness: Harness) -> None:
    res = call(harness, "ls")
    assert not res.is_error, res.text
    assert res.text == (
        f"<path>{root_of(harness)}</path>\n<type>directory</type>\n<entries>\n"
        "README.md (16 bytes)\ndata/\ndocs/\nsrc/\n\n(End of directory - total 4 entries)\n"
        "</entries>"
    )
    assert res.value == {
        "path": root_of(harness),
        "offset": 1,
        "entries": [
            {"name": "README.md", "type": "file", "size": 16},
            {"name": "data", "type": "directory", "size": None},
            {"name": "docs", "type": "directory", "size": None},
            {"name": "src", "type": "directory", "size": None},
        ],
        "total_entries": 4,
    }


def test_ls_pages_like_read(harness: Harness) -> None:
    res = call(harness, "ls", path="src", offset=2, limit=2)
    assert res.text == (
        f"<path>{root_of(harness)}/src</path>\n<type>directory</type>\n<entries>\n"
        "pkg/\nutil.py (41 bytes)\n\n(End of directory - total 3 entries)\n"
        "</entries>"
    )
    small = with_limits(harness, ls_limit=1)
    assert call(small, "ls", path="src").text.endswith(
        "app.py (47 bytes)\n\n(Showing entries 1-1 of 3. Use offset=2 to continue.)\n</entries>"
    )
    past = call(harness, "ls", path="src", offset=5)
    assert past.error == {"name": "FsError", "code": "FS_NOT_FOUND"}
    assert past.text == (
        f'FS_NOT_FOUND: offset 5 is past the end of "{root_of(harness)}/src" (3 entries); '
        "use an offset from 1 to 3"
    )


def test_ls_of_an_empty_directory_is_the_footer_alone(harness: Harness) -> None:
    harness.put("empty/.keep", b"")
    res = call(harness, "ls", path="empty")
    assert res.text.endswith(
        "<entries>\n.keep (0 bytes)\n\n(End of directory - total 1 entries)\n</entries>"
    )
    fresh = discovery_context(open_fs(f"memory://ls-empty-{id(harness)}"))
    empty = fresh.tools.execute_sync("ls", {}, None)
    assert empty.text.endswith("<entries>\n(End of directory - total 0 entries)\n</entries>")
    assert not fresh.tools.execute_sync("ls", {"offset": 1}, None).is_error


def test_ls_errors(harness: Harness) -> None:
    assert call(harness, "ls", path="README.md").error == {
        "name": "FsError",
        "code": "FS_NOT_DIRECTORY",
    }
    assert call(harness, "ls", path="nowhere").error == {"name": "FsError", "code": "FS_NOT_FOUND"}
    assert call(harness, "ls", path="src", offset=0).text == (
        "INVALID_ARGUMENTS: offset: must be 1 or more"
    )


# -- glob -------------------------------------------------------------------------------


def test_glob_lists_matching_files_sorted_relative_to_the_root(harness: Harness) -> None:
    res = call(harness, "glob", pattern="**/*.py")
    assert res.text == "src/app.py\nsrc/pkg/__init__.py\nsrc/util.py\n\n(Found 3 files.)"
    assert res.value == {
        "path": root_of(harness),
        "pattern": "**/*.py",
        "files": ["src/app.py", "src/pkg/__init__.py", "src/util.py"],
        "total_files": 3,
        "complete": True,
    }
    assert call(harness, "glob", pattern="*.py", path="src").text == (
        "src/app.py\nsrc/util.py\n\n(Found 2 files.)"
    )
    assert call(harness, "glob", pattern="src/**/*.{ts,md}").text == (
        "src/pkg/core.ts\n\n(Found 1 file.)"
    )
    assert call(harness, "glob", pattern="{docs,src/pkg}/*").text == (
        "docs/guide.md\nsrc/pkg/__init__.py\nsrc/pkg/core.ts\n\n(Found 3 files.)"
    )
    assert call(harness, "glob", pattern="*").text == "README.md\n\n(Found 1 file.)"


def test_glob_accepts_absolute_and_url_spellings_inside_the_root(harness: Harness) -> None:
    root = root_of(harness)
    absolute = root if "://" not in root else "/" + root.split("://", 1)[1].lstrip("/")
    for pattern in (f"{root}/src/*.py", f"{absolute}/src/*.py"):
        assert call(harness, "glob", pattern=pattern).text == (
            "src/app.py\nsrc/util.py\n\n(Found 2 files.)"
        ), pattern


def test_glob_no_match_and_missing_literal_directories(harness: Harness) -> None:
    where = root_of(harness)
    assert call(harness, "glob", pattern="**/*.rs").text == (
        f"No files match the pattern under {where}."
    )
    assert call(harness, "glob", pattern="nowhere/**/*.py").text == (
        f"No files match the pattern under {where}."
    )
    missing = call(harness, "glob", pattern="*.py", path="nowhere")
    assert missing.error == {"name": "FsError", "code": "FS_NOT_FOUND"}


def test_glob_caps_results_and_walked_entries(harness: Harness) -> None:
    capped = with_limits(harness, glob_limit=2)
    assert call(capped, "glob", pattern="**/*.py").text == (
        "src/app.py\nsrc/pkg/__init__.py\n\n"
        "(Showing the first 2 of 3 files. Narrow the pattern or the path to see the rest.)"
    )
    where = root_of(harness)
    walked = with_limits(harness, max_entries=6)
    res = call(walked, "glob", pattern="**/*.md")
    assert res.text == (
        "README.md\ndocs/guide.md\n\n"
        f"(Found 2 files in the first 6 entries under {where}; there may be more. "
        "Narrow the pattern or the path.)"
    )
    assert res.value is not None
    assert res.value["complete"] is False
    both = with_limits(harness, max_entries=6, glob_limit=1)
    assert call(both, "glob", pattern="**/*.md").text == (
        f"README.md\n\n(Showing the first 1 of 2 files found in the first 6 entries under "
        f"{where}; there may be more. Narrow the pattern or the path.)"
    )
    assert call(walked, "glob", pattern="**/*.ts").text == (
        f"No files match the pattern in the first 6 entries under {where}; "
        "narrow the pattern or the path to search the rest."
    )


def test_glob_lists_only_files(harness: Harness) -> None:
    assert call(harness, "glob", pattern="src/*").text == (
        "src/app.py\nsrc/util.py\n\n(Found 2 files.)"
    )


def test_glob_walks_only_below_the_literal_prefix(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    fs = harness.ctx.fs
    assert isinstance(fs, FsspecFileSystem)
    listed: list[str] = []
    original = fs.dialect.list_dir

    async def spy(path: str) -> Any:
        listed.append(path)
        return await original(path)

    monkeypatch.setattr(fs.dialect, "list_dir", spy)
    call(harness, "glob", pattern="src/pkg/**/*.ts")
    root = fs.root.split("://", 1)[-1].lstrip("/")
    assert listed
    assert all(path.lstrip("/").startswith(f"{root}/src/pkg") for path in listed), listed
    listed.clear()
    call(harness, "glob", pattern="*.md", path="docs")
    assert [path.lstrip("/") for path in listed] == [f"{root}/docs"]


@pytest.mark.parametrize(
    "pattern", ["../*", "../../**/*.py", "~/*", "a\\*.py", "a\x00*", "/etc/*", ".git/*", "**/.env"]
)
def test_glob_hostile_patterns_are_sandbox_denied(harness: Harness, pattern: str) -> None:
    res = call(harness, "glob", pattern=pattern)
    assert res.error == {"name": "FsError", "code": "FS_SANDBOX_DENIED"}, res.text


def test_glob_dotdot_after_a_wildcard_is_refused(harness: Harness) -> None:
    res = call(harness, "glob", pattern="src/*/../../*")
    assert res.text == (
        'INVALID_ARGUMENTS: pattern: ".." may only come before the first wildcard '
        "(use the path parameter to search elsewhere)"
    )


def test_glob_too_many_alternatives_is_refused(harness: Harness) -> None:
    res = call(harness, "glob", pattern="{a,b}{c,d}{e,f}{g,h}{i,j}{k,l}{m,n}")
    assert res.text == "INVALID_ARGUMENTS: pattern: expands to more than 64 {a,b} alternatives"


def test_glob_never_lists_denied_files(harness: Harness) -> None:
    listed = call(harness, "glob", pattern="**").text
    assert ".env" not in listed
    assert ".git" not in listed
    assert "data/blob.bin" in listed


# -- grep -------------------------------------------------------------------------------


def test_grep_groups_matching_lines_by_file(harness: Harness) -> None:
    res = call(harness, "grep", pattern=r"main\(")
    assert res.text == (
        "docs/guide.md\n1: Call main() first.\n\n"
        "src/app.py\n4: def main():\n\n"
        "(Found 2 matches in 2 files. Skipped 2 binary or non-UTF-8 files.)"
    )
    assert res.value == {
        "path": root_of(harness),
        "matches": [
            {"path": "docs/guide.md", "line": 1, "text": "Call main() first."},
            {"path": "src/app.py", "line": 4, "text": "def main():"},
        ],
        "files": 2,
        "complete": True,
    }


def test_grep_options_path_glob_case_and_literal(harness: Harness) -> None:
    assert call(harness, "grep", pattern="todo", ignore_case=True, glob="*.{py,ts}").text == (
        "src/pkg/core.ts\n2: const TODO = 2;\n\n"
        "src/util.py\n2:     return x  # TODO tidy\n\n(Found 2 matches in 2 files.)"
    )
    assert call(harness, "grep", pattern="TODO", path="src", glob="pkg/**").text == (
        "src/pkg/core.ts\n2: const TODO = 2;\n\n(Found 1 match in 1 file.)"
    )
    assert call(harness, "grep", pattern="main()", literal=True, path="docs").text == (
        "docs/guide.md\n1: Call main() first.\n\n(Found 1 match in 1 file.)"
    )
    assert call(harness, "grep", pattern="^def ", path="src/app.py").text == (
        "src/app.py\n4: def main():\n\n(Found 1 match in 1 file.)"
    )


def test_grep_no_matches(harness: Harness) -> None:
    where = root_of(harness)
    assert call(harness, "grep", pattern="nothing-like-this", path="src").text == (
        f"No matches under {where}/src."
    )
    assert call(harness, "grep", pattern="nothing-like-this").text == (
        f"No matches under {where}. Skipped 2 binary or non-UTF-8 files."
    )


def test_grep_a_match_never_spans_lines(harness: Harness) -> None:
    harness.put("two.txt", b"alpha\nbeta\n")
    assert call(harness, "grep", pattern=r"alpha\s+beta", path="two.txt").text.startswith(
        "No matches under"
    )
    assert call(harness, "grep", pattern=r"a[^x]*b", path="two.txt").text.startswith("No matches")
    assert call(harness, "grep", pattern="^beta$", path="two.txt").text == (
        "two.txt\n2: beta\n\n(Found 1 match in 1 file.)"
    )


def test_grep_counts_lines_across_chunks_and_windows_long_lines(harness: Harness) -> None:
    body = "".join(f"line {i}\n" for i in range(1, 300_001))  # about 3.5 MB: several chunks
    harness.put("big.txt", (body + "x" * 700 + " needle\n").encode())
    res = call(harness, "grep", pattern=r"^line (1|150000|300000)$|needle", path="big.txt")
    assert res.text == (
        "big.txt\n1: line 1\n150000: line 150000\n300000: line 300000\n"
        f"300001:702: …{'x' * 99} needle\n\n"
        "(Found 4 matches in 1 file.)"
    )
    assert res.value is not None
    assert res.value["matches"][3] == {
        "path": "big.txt",
        "line": 300001,
        "column": 702,
        "text": f"…{'x' * 99} needle",
    }


def test_grep_caps_matches_and_bytes(harness: Harness) -> None:
    harness.put("many/a.txt", "".join(f"hit {i}\n" for i in range(5)).encode())
    harness.put("many/b.txt", b"hit b\n")
    capped = with_limits(harness, grep_limit=3)
    assert call(capped, "grep", pattern="hit", path="many").text == (
        "many/a.txt\n1: hit 0\n2: hit 1\n3: hit 2\n\n"
        "(Showing the first 3 matches, in 1 file; there are more. "
        "Narrow the pattern, the path or the glob.)"
    )
    budget = with_limits(harness, max_grep_bytes=10)
    where = f"{root_of(harness)}/many"
    # The cap is exact, inside a line too: "hit 0\nhit " is all that is searched.
    assert call(budget, "grep", pattern="hit", path="many").text == (
        "many/a.txt\n1: hit 0\n2: hit \n\n"
        "(Found 2 matches in 1 file, but the search stopped after 10 bytes; "
        "narrow the path or the glob to search the rest.)"
    )
    assert call(budget, "grep", pattern="zzz", path="many").text == (
        f"No matches under {where}, but the search stopped after 10 bytes; "
        "narrow the path or the glob to search the rest."
    )
    # a.txt is 30 bytes: a cap of 30 searches it whole, and b.txt is left over.
    exact = with_limits(harness, max_grep_bytes=30)
    assert call(exact, "grep", pattern="hit", path="many").text == (
        "many/a.txt\n1: hit 0\n2: hit 1\n3: hit 2\n4: hit 3\n5: hit 4\n\n"
        "(Found 5 matches in 1 file, but the search stopped after 30 bytes; "
        "narrow the path or the glob to search the rest.)"
    )
    assert call(
        with_limits(harness, max_grep_bytes=36), "grep", pattern="hit", path="many"
    ).text == (
        "many/a.txt\n1: hit 0\n2: hit 1\n3: hit 2\n4: hit 3\n5: hit 4\n\n"
        "many/b.txt\n1: hit b\n\n(Found 6 matches in 2 files.)"
    )
    walked = with_limits(harness, max_entries=1)
    assert call(walked, "grep", pattern="hit", path="many").text == (
        "many/a.txt\n1: hit 0\n2: hit 1\n3: hit 2\n4: hit 3\n5: hit 4\n\n"
        "(Found 5 matches in 1 file, but the search stopped after 1 entry; "
        "narrow the path or the glob to search the rest.)"
    )


def test_grep_is_safe_from_catastrophic_patterns(harness: Harness) -> None:
    harness.put("evil.txt", b"a" * 50_000 + b"!\n")
    started = time.perf_counter()
    res = call(harness, "grep", pattern="(a+)+$", path="evil.txt")
    assert time.perf_counter() - started < 5
    assert res.text.startswith("No matches")
    res = call(harness, "grep", pattern="(x+x+)+y", path="evil.txt")
    assert time.perf_counter() - started < 5
    assert res.text.startswith("No matches")


def test_grep_searches_all_of_a_giant_line_and_shows_windows(harness: Harness) -> None:
    harness.put("min.js", b"var a=1;" + b"x" * 2_000_000 + b"tail\nnext line\n")
    res = call(harness, "grep", pattern="var a|tail|next", path="min.js")
    assert res.text == (
        f"min.js\n1:1: var a=1;{'x' * 492}…\n1:2000009: …{'x' * 100}tail\n2: next line\n\n"
        "(Found 3 matches in 1 file.)"
    )


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (
            {"pattern": "(?<=a)b"},
            "INVALID_ARGUMENTS: pattern: is not a valid regular expression (invalid perl "
            "operator: (?<=); RE2 syntax, so no look-around or backreferences (set literal "
            "to search for plain text)",
        ),
        (
            {"pattern": "(unclosed"},
            "INVALID_ARGUMENTS: pattern: is not a valid regular expression (missing ): "
            "(unclosed); RE2 syntax, so no look-around or backreferences (set literal to "
            "search for plain text)",
        ),
        ({"pattern": ""}, "INVALID_ARGUMENTS: pattern: must not be empty"),
        ({"pattern": "x", "glob": ""}, "INVALID_ARGUMENTS: glob: must not be empty"),
        (
            {"pattern": "x", "glob": "../*.py"},
            'INVALID_ARGUMENTS: glob: ".." may only come before the first wildcard '
            "(use the path parameter to search elsewhere)",
        ),
        (
            {"pattern": "x", "regex": True},
            "INVALID_ARGUMENTS: regex: is not a parameter of grep "
            "(parameters: pattern, path, glob, ignore_case, literal)",
        ),
    ],
)
def test_grep_invalid_arguments(harness: Harness, args: dict[str, Any], text: str) -> None:
    res = harness.call("grep", args, harness.run())
    assert res.error == {"name": "ValidationError", "code": "INVALID_ARGUMENTS"}
    assert res.text == text


def test_grep_on_a_named_binary_file_says_so(harness: Harness) -> None:
    res = call(harness, "grep", pattern="main", path="data/blob.bin")
    assert res.error == {"name": "FsError", "code": "FS_NOT_TEXT"}
    missing = call(harness, "grep", pattern="main", path="gone.txt")
    assert missing.error == {"name": "FsError", "code": "FS_NOT_FOUND"}


def test_grep_never_searches_denied_files(harness: Harness) -> None:
    res = call(harness, "grep", pattern="SECRET|core")
    assert res.text.startswith("No matches")


# -- containment -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "bad", ["../outside", "~/x", "a\\b", "a\x00b", "/etc", ".git", "src/.env", ".git/config"]
)
def test_hostile_paths_are_sandbox_denied(harness: Harness, bad: str) -> None:
    for tool, args in [
        ("ls", {"path": bad}),
        ("glob", {"pattern": "*", "path": bad}),
        ("grep", {"pattern": "x", "path": bad}),
    ]:
        res = harness.call(tool, args, harness.run())
        assert res.error == {"name": "FsError", "code": "FS_SANDBOX_DENIED"}, (tool, res.text)


def test_symlinks_never_lead_discovery_outside(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "src").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text("secret main\n")
    (root / "src" / "real.txt").write_text("inside main\n")
    (root / "out").symlink_to(outside)
    (root / "leak.txt").symlink_to(outside / "secret.txt")
    (root / "alias").symlink_to(root / "src")
    (root / "link.txt").symlink_to(root / "src" / "real.txt")
    ctx = discovery_context(open_fs(str(root)))
    ls = ctx.tools.execute_sync("ls", {}, None).text
    assert "\nalias (symlink)\nlink.txt (symlink)\nsrc/\n\n" in ls
    assert "out" not in ls.replace("<path>", "").split("</path>")[1]
    assert "leak" not in ls
    assert ctx.tools.execute_sync("glob", {"pattern": "**"}, None).text == (
        "src/real.txt\n\n(Found 1 file.)"
    )
    assert ctx.tools.execute_sync("grep", {"pattern": "main"}, None).text == (
        "src/real.txt\n1: inside main\n\n(Found 1 match in 1 file.)"
    )
    for tool, args in [
        ("ls", {"path": "out"}),
        ("glob", {"pattern": "out/*"}),
        ("glob", {"pattern": "*", "path": "out"}),
        ("grep", {"pattern": "main", "path": "out"}),
        ("grep", {"pattern": "main", "path": "leak.txt"}),
    ]:
        res = ctx.tools.execute_sync(tool, args, None)
        assert res.error == {"name": "FsError", "code": "FS_SANDBOX_DENIED"}, (tool, res.text)
    # A symlinked directory inside the root is listed through its real path.
    assert ctx.tools.execute_sync("glob", {"pattern": "alias/*"}, None).text == (
        "src/real.txt\n\n(Found 1 file.)"
    )


def test_same_tree_same_text_on_every_backend(tmp_path: Path) -> None:
    outputs = []
    local_root = tmp_path / "tree"
    mem = fsspec.filesystem("memory")
    for rel, data in TREE.items():
        (local_root / rel).parent.mkdir(parents=True, exist_ok=True)
        (local_root / rel).write_bytes(data)
        mem.pipe_file(f"/same-tree/{rel}", data)
    try:
        for fs in (open_fs(str(local_root)), open_fs("memory://same-tree")):
            ctx = discovery_context(fs)
            texts = [
                ctx.tools.execute_sync(tool, args, None).text.replace(fs.root, "<ROOT>")
                for tool, args in [
                    ("ls", {"path": "src"}),
                    ("glob", {"pattern": "**/*"}),
                    ("grep", {"pattern": "main|TODO"}),
                    ("grep", {"pattern": "zzz"}),
                ]
            ]
            outputs.append(texts)
    finally:
        mem.rm("/same-tree", recursive=True)
    assert outputs[0] == outputs[1]


# -- schemas -----------------------------------------------------------------------------


def test_discovery_schemas_are_pinned(harness: Harness) -> None:
    schemas = harness.ctx.tools.schemas()
    assert [s["name"] for s in schemas] == ["read", "write", "edit", "ls", "glob", "grep"]
    pinned = json.loads(Path(__file__).with_name("extra_tool_schemas.json").read_text())
    assert schemas[3:] == [spec for spec in pinned if spec["name"] in ("ls", "glob", "grep")]
    assert schemas[:3] == json.loads(Path(__file__).with_name("tool_schemas.json").read_text())


def test_discovery_schema_fields_match_models() -> None:
    from fsseam.tools.schemas import (
        GLOB_SCHEMA,
        GREP_SCHEMA,
        LS_SCHEMA,
        GlobArgs,
        GrepArgs,
        LsArgs,
    )

    for schema, model in [(LS_SCHEMA, LsArgs), (GLOB_SCHEMA, GlobArgs), (GREP_SCHEMA, GrepArgs)]:
        assert list(schema["properties"]) == list(model.model_fields)
        required = [name for name, f in model.model_fields.items() if f.is_required()]
        assert schema["required"] == required


# -- the seam's default walk and edit_text_many, as any third-party backend gets them ------


class DefaultSeamFixtures(LocalFixtures):
    """Local disk behind :class:`DelegatingFileSystem`."""

    @pytest.fixture
    def inner(self, native_root: Path) -> FsspecFileSystem:
        return open_fs(str(native_root))

    @pytest.fixture
    def fs(self, inner: FsspecFileSystem) -> FileSystem:  # type: ignore[override]
        return DelegatingFileSystem(inner)

    @pytest.fixture
    def raw(self, inner: FsspecFileSystem) -> RawStore:
        return FsspecRawStore(inner.fs, inner.root)

    @pytest.fixture
    def reopen_fs(self, native_root: Path) -> FileSystemOpener:
        def reopen(
            *, read_only: bool = False, max_edit_bytes: int = DEFAULT_MAX_EDIT_BYTES
        ) -> FileSystem:
            mounted = open_fs(str(native_root), read_only=read_only, max_edit_bytes=max_edit_bytes)
            return DelegatingFileSystem(mounted)

        return reopen


class TestDefaultSeamMethods(DiscoverySuite, MultiEditSuite, DefaultSeamFixtures):
    """The base-class ``walk`` and ``edit_text_many`` pass the same conformance tests."""


def test_default_walk_is_what_the_tools_use_on_a_plain_backend(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "c.txt").write_text("found me\n")
    (tmp_path / ".env").write_text("found me\n")
    ctx = discovery_context(DelegatingFileSystem(open_fs(str(tmp_path))))
    assert ctx.tools.execute_sync("grep", {"pattern": "found"}, None).text == (
        "a/b/c.txt\n1: found me\n\n(Found 1 match in 1 file.)"
    )


def test_ls_marks_special_files_and_grep_counts_unreadable_ones(tmp_path: Path) -> None:
    import os

    from fsseam.seam import FsPermissionDenied

    (tmp_path / "a.txt").write_text("needle\n")
    (tmp_path / "b.txt").write_text("needle\n")
    os.mkfifo(tmp_path / "pipe")
    inner = open_fs(str(tmp_path))

    class Refusing(DelegatingFileSystem):
        def stream_text(self, target: FsTarget) -> AbstractAsyncContextManager[FsTextStream]:
            if target.display_path.endswith("b.txt"):
                raise FsPermissionDenied(f'"{target.display_path}": access denied')
            return super().stream_text(target)

    ctx = discovery_context(Refusing(inner))
    assert ctx.tools.execute_sync("ls", {}, None).text.endswith(
        "a.txt (7 bytes)\nb.txt (7 bytes)\npipe (other)\n\n"
        "(End of directory - total 3 entries)\n</entries>"
    )
    assert ctx.tools.execute_sync("grep", {"pattern": "needle"}, None).text == (
        "a.txt\n1: needle\n\n(Found 1 match in 1 file. Could not read 1 file.)"
    )
    assert ctx.tools.execute_sync("grep", {"pattern": "zzz"}, None).text == (
        f"No matches under {tmp_path}. Could not read 1 file."
    )


def test_default_edit_text_many_enforces_max_edit_bytes_with_exact_texts(tmp_path: Path) -> None:
    import asyncio

    from fsseam.seam import FsTooLarge

    (tmp_path / "big.txt").write_text("x" * 150)
    (tmp_path / "small.txt").write_text("x" * 90 + "!")
    fs = DelegatingFileSystem(open_fs(str(tmp_path), max_edit_bytes=100))

    async def body() -> None:
        big = await fs.resolve("big.txt")
        with pytest.raises(FsTooLarge) as caught:
            await fs.edit_text_many(big, [FsEditRequest("x", "y")])
        assert caught.value.message == (
            f'"{big.display_path}" is 150 bytes, over the 100-byte edit limit '
            "(max_edit_bytes); rewrite it with write, or raise max_edit_bytes"
        )
        small = await fs.resolve("small.txt")
        with pytest.raises(FsTooLarge) as grown:
            await fs.edit_text_many(small, [FsEditRequest("!", "y" * 20)])
        assert grown.value.message == (
            f'editing "{small.display_path}" would make it 110 bytes, over the '
            "100-byte edit limit (max_edit_bytes)"
        )

    asyncio.run(body())
    assert (tmp_path / "small.txt").read_text() == "x" * 90 + "!"
