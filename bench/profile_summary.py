"""Where a sampled process's CPU went: a table from py-spy's collapsed stacks.

    python bench/profile_summary.py PROFILE.txt [--top 25] [--match app/]

Reads the file `py-spy record --format raw` writes (bench/scoreboard_load.py --profile makes
one): one line per distinct stack, frames from the outermost in, then its sample count. Prints
the functions holding the most samples, inclusive (the function or anything it called) and self
(the function itself), as shares of the samples of busy threads; `--match` keeps only frames
whose file contains it (e.g. `app/` for the project's own code). `--busy` leaves out samples of
threads waiting (a lock, the database's answer, the event loop's select): py-spy counts a thread
blocked in C as busy, and the API's idle pool threads would otherwise be half the samples.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.table import Table

FRAME = re.compile(r"^(?P<name>.*?) \((?P<file>.*?)(?::\d+)?\)$")
WAITS = ("Condition.wait (", "Connection.wait (", "EpollSelector.select (", "_worker (",
         "Event.wait (", "Lock.acquire (")  # a leaf that is a thread waiting


def parse(text: str) -> list[tuple[list[str], int]]:
    """(frames outermost first, samples) per line; lines that are not stacks are skipped."""
    stacks = []
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            stacks.append((stack.split(";"), int(count)))
    return stacks


def frame_name(frame: str) -> str:
    """`function (path:line)` as `function (file)`: one row per function, not per line."""
    found = FRAME.match(frame)
    if found is None:
        return frame
    path = found["file"]
    short = "/".join(path.split("/")[-2:])
    return f"{found['name']} ({short})"


def tally(stacks: list[tuple[list[str], int]], match: str, busy: bool = False
          ) -> tuple[Counter[str], Counter[str], int]:
    """Inclusive and self samples per function, and the samples in all."""
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    total = 0
    for frames, count in stacks:
        if busy and frames and frames[-1].startswith(WAITS):
            continue
        total += count
        names = [frame_name(f) for f in frames if not match or match in f]
        for name in set(names):
            inclusive[name] += count
        if frames and (not match or match in frames[-1]):
            own[frame_name(frames[-1])] += count
    return inclusive, own, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("profile")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--match", default="", help="keep only frames whose file contains this")
    parser.add_argument("--busy", action="store_true", help="leave out threads waiting")
    args = parser.parse_args()
    inclusive, own, total = tally(parse(Path(args.profile).read_text()), args.match, args.busy)
    out = Table(title=f"{total} samples" + (" of threads not waiting" if args.busy else ""))
    for column in ("function", "inclusive %", "self %"):
        out.add_column(column, justify="left" if column == "function" else "right")
    for name, count in inclusive.most_common(args.top):
        out.add_row(name, f"{100 * count / total:.1f}", f"{100 * own[name] / total:.1f}")
    Console(width=160).print(out)


if __name__ == "__main__":
    main()
