"""What read's format adds to each line, against the ``cat -n`` style, in characters and bytes.

    python benchmarks/token_economy.py            # the tables of docs/token-economy.md

No tokenizer can be downloaded here, so this counts what tokens are made of:
characters and UTF-8 bytes. The file content is identical in both formats and
is left out; only the framing is measured:

- the line-number prefix: ours ``"N: "`` against ``cat -n``'s ``"%6d\\t"``
  (six columns, right-aligned, then a tab), which Claude Code's Read also uses;
- the envelope (``<path>``, ``<type>``, ``<content>`` tags) and the footer,
  once per read call;
- a whole file read in default windows (2000 lines per call), envelope and
  footer included, spread over its lines.

The numbers come from the real renderer (``fsseam.tools.render.render_read``),
not from a re-implementation: the overhead is the rendered text minus the
file's own text.
"""

from __future__ import annotations

import argparse

from fsseam.text import LineWindow
from fsseam.tools.render import render_lines, render_read

SIZES = (10, 1_000, 100_000)
PATH = "/workspace/src/module.py"
WINDOW = 2000


def lines_of(count: int) -> list[str]:
    """Lines of typical code width; their text cancels out of every overhead."""
    return [f"    value_{i} = compute(value_{i - 1})" for i in range(1, count + 1)]


def ours(lines: list[str], offset: int = 1, limit: int = WINDOW) -> str:
    """read's exact output for one window of ``lines``."""
    window = LineWindow(offset=offset, limit=limit, max_bytes=1 << 40)
    window.feed("\n".join(lines) + "\n")
    window.finish()
    return render_read(PATH, window, render_lines(window))


def cat_n(lines: list[str], offset: int = 1, limit: int = WINDOW) -> str:
    """The same window as ``cat -n`` prints it."""
    end = min(len(lines), offset + limit - 1)
    return "".join(f"{cat_prefix(n)}{lines[n - 1]}\n" for n in range(offset, end + 1))


def size(text: str) -> tuple[int, int]:
    return len(text), len(text.encode("utf-8"))


def ours_prefix(number: int) -> str:
    """read's line-number prefix."""
    return f"{number}: "


def cat_prefix(number: int) -> str:
    """``cat -n``'s line-number prefix."""
    return f"{number:6d}\t"


def prefix_table() -> list[str]:
    rows = [
        "| lines in the file | ours `N: ` chars/line | `%6d\\t` chars/line | saved per line "
        "| saved in total |",
        "|---:|---:|---:|---:|---:|",
    ]
    for count in SIZES:
        mine = sum(len(ours_prefix(n)) for n in range(1, count + 1))
        theirs = sum(len(cat_prefix(n)) for n in range(1, count + 1))
        rows.append(
            f"| {count:,} | {mine / count:.2f} | {theirs / count:.2f} | "
            f"{(theirs - mine) / count:.2f} | {theirs - mine:,} |"
        )
    return rows


def digits_table() -> list[str]:
    rows = [
        "| line numbers | ours `N: ` | `%6d\\t` | difference |",
        "|---|---:|---:|---:|",
    ]
    for low, high in (
        (1, 9),
        (10, 99),
        (100, 999),
        (1_000, 9_999),
        (10_000, 99_999),
        (100_000, 999_999),
    ):
        mine, theirs = len(ours_prefix(low)), len(cat_prefix(low))
        rows.append(f"| {low:,}-{high:,} | {mine} | {theirs} | {theirs - mine} |")
    return rows


def whole_read_table() -> list[str]:
    rows = [
        "| lines in the file | read calls | ours: overhead chars (bytes) | per line "
        "| `cat -n`: overhead chars (bytes) | per line |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for count in SIZES:
        lines = lines_of(count)
        content = size("".join(line + "\n" for line in lines))
        mine = [0, 0]
        theirs = [0, 0]
        calls = 0
        for offset in range(1, count + 1, WINDOW):
            calls += 1
            for total, text in ((mine, ours(lines, offset)), (theirs, cat_n(lines, offset))):
                chars, data = size(text)
                total[0] += chars
                total[1] += data
        mine = [mine[0] - content[0], mine[1] - content[1]]
        theirs = [theirs[0] - content[0], theirs[1] - content[1]]
        rows.append(
            f"| {count:,} | {calls} | {mine[0]:,} ({mine[1]:,}) | {mine[0] / count:.2f} | "
            f"{theirs[0]:,} ({theirs[1]:,}) | {theirs[0] / count:.2f} |"
        )
    return rows


def envelope_table() -> list[str]:
    lines = lines_of(3)
    text = ours(lines)
    body = "\n".join(f"{ours_prefix(n)}{line}" for n, line in enumerate(lines, start=1))
    head, tail = text.split(body)
    path_line = len(f"<path>{PATH}</path>\n") - len(PATH)
    paging = "(Showing lines 1-2000 of 100000. Use offset=2001 to continue.)"
    parts = [
        ("`<path>…</path>` line, without the path itself", path_line, path_line),
        (
            "`<type>file</type>` and `<content>` lines",
            len(head) - len(PATH) - path_line,
            len(head.encode()) - len(PATH.encode()) - path_line,
        ),
        (
            "blank line, footer `(End of file - total 3 lines)`, `</content>`",
            len(tail),
            len(tail.encode()),
        ),
        (f"paging footer instead, e.g. `{paging}`", len(paging), len(paging.encode())),
    ]
    return [
        "| part | chars | bytes |",
        "|---|---:|---:|",
        *(f"| {name} | {chars} | {data} |" for name, chars, data in parts),
    ]


def break_even() -> int:
    """Fewest lines for which a whole read of ours frames less than ``cat -n``."""
    for count in range(1, 10_000):
        lines = lines_of(count)
        if len(ours(lines)) <= len(cat_n(lines)):
            return count
    raise AssertionError("no break-even below 10,000 lines")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.parse_args()
    print("### Line-number prefix, averaged over every line of the file\n")
    print("\n".join(prefix_table()))
    print("\n### Prefix length by line number (characters = bytes: all ASCII)\n")
    print("\n".join(digits_table()))
    print("\n### Envelope and footer, once per read call\n")
    print("\n".join(envelope_table()))
    print("\n### Reading the whole file in default 2000-line windows\n")
    print("\n".join(whole_read_table()))
    print(
        f"\nBreak-even: from {break_even()} lines on, a whole read frames fewer characters "
        f"than bare `cat -n` (for a path of {len(PATH)} characters; about three more path "
        "characters move it by one line)."
    )


if __name__ == "__main__":
    main()
