"""Peak RSS of one grep over an S3 prefix, in a process of its own.

    python benchmarks/_grep_memory_probe.py ENDPOINT BUCKET

Mounts ``s3://BUCKET`` at ENDPOINT (a ``_latency.py s3`` server), lists it
once (so clients and connections exist before the baseline), then greps the
whole bucket for a pattern that matches nothing, and prints one JSON line:
``{"baseline_mib", "peak_mib", "seconds", "files", "bytes", "text"}``: the resident set
before the grep and the process's high-water mark after it (``VmHWM``), so
nothing the benchmark process holds is counted.
"""

from __future__ import annotations

import json
import re
import sys
import time

from fsseam import Context, open_fs
from fsseam.tools import GlobTool, GrepTool
from fsseam.tools.grep import GrepProgress

_STATUS = re.compile(r"^(VmRSS|VmHWM):\s+(\d+) kB", re.MULTILINE)


def _memory_mib() -> dict[str, float]:
    # /proc, not ru_maxrss: the latter survives exec, so a child would report
    # its parent's high-water mark.
    with open("/proc/self/status", encoding="ascii") as f:
        return {name: int(kib) / 1024 for name, kib in _STATUS.findall(f.read())}


def main() -> None:
    endpoint, bucket = sys.argv[1], sys.argv[2]
    fs = open_fs(
        f"s3://{bucket}",
        endpoint_url=endpoint,
        key="fsseam-test",
        secret="fsseam-test-secret",
        anon=False,
    )
    seen: list[GrepProgress] = []
    ctx = Context(fs)
    # Past the default 64 MiB byte cap: every object must be fetched and searched.
    ctx.tools.register(GrepTool(max_bytes=1 << 40, progress=seen.append))
    ctx.tools.register(GlobTool())
    ctx.tools.execute_sync("glob", {"pattern": "*"}, None)
    baseline = _memory_mib()["VmRSS"]
    started = time.perf_counter()
    result = ctx.tools.execute_sync("grep", {"pattern": "no line says this"}, None)
    seconds = time.perf_counter() - started
    print(
        json.dumps(
            {
                "baseline_mib": baseline,
                "peak_mib": _memory_mib()["VmHWM"],
                "seconds": seconds,
                "files": seen[-1].files if seen else 0,
                "bytes": seen[-1].bytes if seen else 0,
                "text": result.text,
            }
        )
    )


if __name__ == "__main__":
    main()
