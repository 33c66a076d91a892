"""Peak memory of one big ``write`` through the tools, against the size of its content.

Each case runs in a fresh subprocess on local disk: build the content, reset
the kernel's peak-RSS mark (``/proc/self/clear_refs``), run
``ctx.tools.execute("write", ...)`` (policy, tools, snippet, backend), then
report the peak RSS above what was resident before the call, as a multiple
of the content size. Linux only.

    PYTHONPATH=src python benchmarks/write_memory.py            # 200 MiB
    PYTHONPATH=src python benchmarks/write_memory.py --mib 64
    PYTHONPATH=/path/to/other/checkout/src python benchmarks/write_memory.py   # compare

Cases: ``create`` (a new file), ``update-one-line`` (an existing file of the
same size, one line changed in the middle), ``rewrite`` (an existing file,
every line different). The value's diff is not read (the MCP server and the
framework adapters send only the text).
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LINE = "short line of text\n"  # short lines: the worst case for a per-line list


def _status(field: str) -> int:
    for row in Path("/proc/self/status").read_text().splitlines():
        if row.startswith(field + ":"):
            return int(row.split()[1]) * 1024
    raise RuntimeError(field)


def _child(case: str, mib: int) -> None:
    import asyncio

    from fsseam import Agent, Context, FileTools, ObservationPolicy, ToolExecution, open_fs

    lines = mib * 1024 * 1024 // len(LINE)
    root = Path(tempfile.mkdtemp(prefix="fsseam-writemem-"))
    half = lines // 2
    if case != "create":
        old = "".join([LINE * half, "OLD LINE\n" if case == "update-one-line" else "", LINE * half])
        if case == "rewrite":
            old = old.replace("short", "other")
        (root / "big.txt").write_text(old)
        del old
    content = "".join([LINE * half, "NEW LINE\n", LINE * half])
    ctx = Context(open_fs(str(root)))
    ctx.plugin(ObservationPolicy())
    ctx.plugin(FileTools())
    run = ToolExecution(agent=Agent(session="bench"))

    async def main() -> tuple[float, bool]:
        if case != "create":
            await ctx.tools.execute("read", {"file_path": "big.txt", "limit": 1}, run)
        gc.collect()
        Path("/proc/self/clear_refs").write_text("5")
        started = time.perf_counter()
        res = await ctx.tools.execute("write", {"file_path": "big.txt", "content": content}, run)
        return time.perf_counter() - started, res.is_error

    before = _status("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")
    seconds, failed = asyncio.run(main())
    peak = _status("VmHWM")
    size = len(content)
    print(
        json.dumps(
            {
                "case": case,
                "content_bytes": size,
                "rss_before": before,
                "peak": peak,
                "extra": peak - before,
                "seconds": round(seconds, 2),
                "failed": failed,
            }
        )
    )
    for child in root.iterdir():
        child.unlink()
    root.rmdir()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mib", type=int, default=200, help="content size (default 200)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child, args.mib)
        return
    print(f"{'case':<16} {'content':>9} {'peak above before':>18} {'x content':>10} {'time':>7}")
    for case in ("create", "update-one-line", "rewrite"):
        out = subprocess.run(
            [sys.executable, __file__, "--child", case, "--mib", str(args.mib)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        row = json.loads(out.strip().splitlines()[-1])
        mib = 1024 * 1024
        print(
            f"{case:<16} {row['content_bytes'] / mib:>7.0f}Mi {row['extra'] / mib:>16.0f}Mi "
            f"{row['extra'] / row['content_bytes']:>9.2f}x {row['seconds']:>6.2f}s"
            + ("  (FAILED)" if row["failed"] else "")
        )


if __name__ == "__main__":
    main()
