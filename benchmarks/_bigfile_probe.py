"""One big-file operation in a fresh process, with its peak RSS above the process's baseline.

    python benchmarks/_bigfile_probe.py '{"op": "first_window", "url": ..., ...}'

Started by ``bigfiles.py``, once per measurement. It mounts the workspace,
warms up on a small file (imports, connections, botocore models), settles the
garbage collector, takes the resident set as the baseline, resets the kernel's
high-water mark (``/proc/self/clear_refs``), runs the one operation and prints
one JSON line: wall seconds, baseline and peak RSS in KiB, and a check value.
The emulator serving S3 runs in another process, so its copy of the object is
not counted here.

Ops: ``first_window`` / ``last_window`` (the ``read`` tool; the last window
takes ``offset``), ``cat_file`` (plain fsspec, the throughput reference),
``naive_window`` (``cat_file``, decode, split, number 2000 lines), ``edit``
(the ``edit`` tool after a ``read`` by the same session) and ``naive_edit``
(``info`` + ``cat_file`` + ``str.replace`` + ``pipe_file``).
"""

from __future__ import annotations

import gc
import json
import re
import sys
import time
from typing import Any

from _common import Mount, make_context, new_run, ok

_STATUS = re.compile(r"^(VmRSS|VmHWM):\s+(\d+) kB", re.MULTILINE)


def _memory() -> dict[str, int]:
    with open("/proc/self/status", encoding="ascii") as f:
        return {name: int(kib) for name, kib in _STATUS.findall(f.read())}


def _reset_peak() -> None:
    with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
        f.write("5")  # resets VmHWM to the current RSS (Linux >= 4.0)


def main() -> None:
    spec: dict[str, Any] = json.loads(sys.argv[1])
    mount = Mount(spec["backend"], spec["url"], spec["options"], spec["naive_root"])
    op = spec["op"]
    name = spec["file"]
    fs = mount.fsseam(max_edit_bytes=spec.get("max_edit_bytes", 10 * 1024 * 1024))
    ctx = make_context(fs)
    run = new_run()
    naive = mount.naive()
    ok(ctx.tools.execute_sync("read", {"file_path": spec["warm"]}, run))
    naive.info(mount.naive_path(spec["warm"]))
    naive.cat_file(mount.naive_path(spec["warm"]))
    if op == "edit":
        ok(ctx.tools.execute_sync("read", {"file_path": name, "limit": 1}, run))
    path = mount.naive_path(name)

    def first_window() -> object:
        value = ok(ctx.tools.execute_sync("read", {"file_path": name}, run)).value
        assert value is not None
        return [value["lines"][0]["number"], value["lines"][-1]["number"], value["total_lines"]]

    def last_window() -> object:
        args = {"file_path": name, "offset": spec["offset"]}
        value = ok(ctx.tools.execute_sync("read", args, run)).value
        assert value is not None
        return [value["lines"][0]["number"], value["lines"][-1]["number"], value["total_lines"]]

    def cat_file() -> object:
        return len(naive.cat_file(path))

    def naive_window() -> object:
        naive.info(path)
        lines = naive.cat_file(path).decode("utf-8").split("\n")
        shown = "\n".join(f"{i + 1}: {line}" for i, line in enumerate(lines[:2000]))
        return [len(lines) - 1, len(shown)]

    def edit() -> object:
        args = {"file_path": name, "old_string": spec["old"], "new_string": spec["new"]}
        return ok(ctx.tools.execute_sync("edit", args, run)).text

    def naive_edit() -> object:
        naive.info(path)
        text = naive.cat_file(path).decode("utf-8")
        assert text.count(spec["old"]) == 1
        naive.pipe_file(path, text.replace(spec["old"], spec["new"], 1).encode("utf-8"))
        return "edited"

    fn = {
        "first_window": first_window,
        "last_window": last_window,
        "cat_file": cat_file,
        "naive_window": naive_window,
        "edit": edit,
        "naive_edit": naive_edit,
    }[op]
    gc.collect()
    before = _memory()
    _reset_peak()
    t0 = time.perf_counter()
    check = fn()
    seconds = time.perf_counter() - t0
    after = _memory()
    print(
        json.dumps(
            {
                "seconds": seconds,
                "baseline_kib": before["VmRSS"],
                "peak_kib": after["VmHWM"],
                "check": check,
            }
        )
    )


if __name__ == "__main__":
    main()
