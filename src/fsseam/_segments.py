"""Matching a path by its components against a pattern where ``**`` spans any number of them.

Shared by the deny rules (:mod:`fsseam.backends.containment`) and the glob
tool (:mod:`fsseam.tools.patterns`), which differ only in how one segment
matches one component; pure, no I/O, no fsseam layer below it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

__all__ = ["match_segments"]


def match_segments(
    pattern: Sequence[str], parts: Sequence[str], segment_matches: Callable[[str, str], bool]
) -> bool:
    """True when ``parts`` matches ``pattern``: ``**`` spans zero or more parts, others one.

    ``segment_matches(segment, part)`` decides a single segment. A simulation
    of the pattern's automaton: the set of pattern positions reachable after
    the parts seen so far, so time is O(len(pattern) x len(parts)) whatever the
    ``**`` count, with no backtracking and a flat stack however deep the
    pattern or the path.
    """
    size = len(pattern)

    def closure(states: set[int]) -> set[int]:
        # "**" also matches zero parts: being before it means being after it too.
        out = set(states)
        for state in states:
            at = state
            while at < size and pattern[at] == "**":
                at += 1
                out.add(at)
        return out

    states = closure({0})
    for part in parts:
        following: set[int] = set()
        for state in states:
            if state == size:
                continue
            segment = pattern[state]
            if segment == "**":
                following.add(state)  # "**" swallows this part and may go on
            elif segment_matches(segment, part):
                following.add(state + 1)
        if not following:
            return False
        states = closure(following)
    return size in states
