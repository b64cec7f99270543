"""Similarity engine on a synthetic course: 300 students x 10 submissions, added as they arrive.

    python bench/similarity_course.py [--students 300] [--submissions 10] [--keep all|latest-best]

Each student's source (~150-300 lines) is the course's starter I/O plus the functions of one of a
handful of distinct solutions, with a third of its statements the student's own, functions
reordered, identifiers renamed and comments added; every next submission edits a few statements.
Some students copy another student's current file (or a public solution) part-way through: the
planted copies. Submissions arrive round by round, in random order within a round. Like the
service, the index keeps each student's latest and best submission (--keep all: every one).
Prints documents, fingerprints, total time, time per added submission (p50/p99), top_pairs time,
peak RSS, and how many planted copies are among the top student-student pairs.
"""

from __future__ import annotations

import argparse
import random
import re
import resource
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.table import Table

from app.similarity.engine import BASE, PUBLIC, SUBMISSION, SimilarityIndex

STARTER = Path(__file__).parents[1] / "tests/app/similarity/sources/seq_flashattention.c"
NAMES = ["acc", "row", "col", "tile", "m_i", "l_i", "score", "p", "qv", "kv", "vv", "offset",
         "idx", "tmp", "total", "mx", "scale", "w", "x", "y", "n", "dim", "q", "k", "v", "o"]
SOLUTIONS = 6  # distinct solutions the class's work derives from
OWN_SHARE = 0.35  # share of a student's statements that are their own
Statement = list[str]  # the lines of one statement, indented


class CodeGen:
    """Random but C-like code: expressions, statements, functions."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def expr(self, depth: int = 2) -> str:
        r, pick = self.rng.random(), self.rng.choice
        if depth == 0 or r < 0.25:
            number = f"{self.rng.randint(0, 64)}.0f"
            return pick([pick(NAMES), number, f"{pick(NAMES)}[{pick(NAMES)}]"])
        if r < 0.45:
            return f"{pick(['expf', 'fmaxf', 'sqrtf', 'fminf'])}({self.expr(depth - 1)})"
        return f"({self.expr(depth - 1)} {pick('+-*/')} {self.expr(depth - 1)})"

    def statement(self, indent: int = 1) -> Statement:
        pad, pick, r = "    " * indent, self.rng.choice, self.rng.random()
        if r < 0.15 and indent < 3:
            i = pick(["i", "j", "t", "c"])
            body = [line for _ in range(self.rng.randint(1, 3))
                    for line in self.statement(indent + 1)]
            return [f"{pad}for (int {i} = 0; {i} < {pick(NAMES)}; {i}++) {{", *body, f"{pad}}}"]
        if r < 0.25 and indent < 3:
            return [f"{pad}if ({self.expr(1)} > {self.expr(1)}) {{", *self.statement(indent + 1),
                    f"{pad}}}"]
        if r < 0.3:
            return [f"{pad}__syncthreads();"]
        if r < 0.55:
            return [f"{pad}float {pick(NAMES)} = {self.expr()};"]
        return [f"{pad}{pick(NAMES)}[{pick(NAMES)}] {pick(['=', '+=', '*='])} {self.expr()};"]

    def function(self, name: str) -> list[Statement]:
        kind = self.rng.choice(["__global__ void", "__device__ float"])
        header = [f"{kind} {name}(const float *q, const float *k, float *o, int n, int dim) {{"]
        body = [self.statement() for _ in range(self.rng.randint(6, 12))]
        tail = ["    return acc;", "}"] if "float" in kind else ["}"]
        return [header, *body, tail]


@dataclass
class Student:
    """One student's evolving file: functions as statement lists, plus their naming habits."""

    owner: str  # student id
    functions: list[list[Statement]]  # header, statements, closing lines per function
    names: dict[str, str]  # their renaming of the shared identifier pool
    latest: str | None = None  # doc id of the latest submission in the index
    best: tuple[float, str] | None = None  # (score, doc id) of the best one in the index
    copied_from: str | None = field(default=None)  # planted: whose file they took


def own_version(gen: CodeGen, solution: list[list[Statement]]) -> list[list[Statement]]:
    """The solution with OWN_SHARE of its statements replaced, in the student's function order."""
    functions = [[stmts[0], *(gen.statement() if gen.rng.random() < OWN_SHARE else s
                              for s in stmts[1:-1]), stmts[-1]] for stmts in solution]
    gen.rng.shuffle(functions)
    return functions


def edit(gen: CodeGen, student: Student, rate: float = 0.04) -> None:
    """A new submission: a few statements rewritten."""
    for stmts in student.functions:
        for i in range(1, len(stmts) - 1):
            if gen.rng.random() < rate:
                stmts[i] = gen.statement()


def render(gen: CodeGen, student: Student, starter_io: str) -> str:
    """The file: starter I/O, then the functions, renamed, with comments of the day."""
    parts = [starter_io]
    for stmts in student.functions:
        if gen.rng.random() < 0.5:
            parts.append(f"// step {gen.rng.randint(1, 9)}: {gen.rng.choice(NAMES)} pass")
        parts.extend(line for stmt in stmts for line in stmt)
        parts.append("")
    text = "\n".join(parts)
    return re.sub(r"\b(" + "|".join(NAMES) + r")\b", lambda m: student.names[m.group(1)], text)


def starter_io() -> str:
    """What every student keeps from the starter code: globals, input() and output()."""
    text = STARTER.read_text()
    return text[text.index("int B, N, d;"):text.index("float _max")]


def make_class(gen: CodeGen, students: int) -> tuple[list[Student], list[list[list[Statement]]]]:
    solutions = [[gen.function(f"step{s}_{i}") for i in range(gen.rng.randint(7, 10))]
                 for s in range(SOLUTIONS)]
    suffixes = ["", "_", "2", "_v", "Val", "_s"]
    return [Student(f"s{i:03d}", own_version(gen, gen.rng.choice(solutions)),
                    {n: n + gen.rng.choice(suffixes) for n in NAMES})
            for i in range(students)], solutions


def plant_copies(gen: CodeGen, students: list[Student], count: int) -> None:
    """`count` students take another student's current file (their own naming kept)."""
    for copier, source in zip(gen.rng.sample(students, count), gen.rng.sample(students, count),
                              strict=True):
        if copier is not source:
            copier.functions = [list(f) for f in source.functions]
            gen.rng.shuffle(copier.functions)
            copier.copied_from = source.owner


def keep_latest_and_best(index: SimilarityIndex, student: Student, doc_id: str,
                         score: float, keep_all: bool) -> None:
    """The service's rule: the index holds a student's latest and best submissions."""
    old = {student.latest, student.best[1] if student.best else None}
    student.latest = doc_id
    if student.best is None or score >= student.best[0]:
        student.best = (score, doc_id)
    for gone in old - {student.latest, student.best[1]}:
        if gone is not None and not keep_all:
            index.remove(gone)


@dataclass
class Run:
    """What the run measured."""

    added: int = 0  # documents added (submissions, public sources, base)
    fingerprints: int = 0  # fingerprints of all added documents
    per_add_s: list[float] = field(default_factory=list)  # each submission's add (+ removals)
    total_s: float = 0.0  # all adds and removals, generation excluded


def run_course(args: argparse.Namespace, index: SimilarityIndex) -> tuple[Run, list[Student]]:
    """The whole term: starter and public source first, then round after round of submissions."""
    gen = CodeGen(random.Random(args.seed))
    students, solutions = make_class(gen, args.students)
    io, run = starter_io(), Run()
    public = Student("public", [list(f) for f in solutions[0]], {n: n for n in NAMES})
    for doc_id, owner, kind, text in [("starter", "ta", BASE, STARTER.read_text()),
                                      ("last-year", "public", PUBLIC, render(gen, public, io))]:
        run.fingerprints += len(index.add(doc_id, owner, kind, text))
        run.added += 1
    for round_no in range(args.submissions):
        if round_no == args.submissions // 2:
            plant_copies(gen, students, args.copies)
        for student in gen.rng.sample(students, len(students)):
            submit(gen, index, student, f"{student.owner}-{round_no}", io, args, run)
    run.total_s = sum(run.per_add_s)
    return run, students


def submit(gen: CodeGen, index: SimilarityIndex, student: Student, doc_id: str, io: str,
           args: argparse.Namespace, run: Run) -> None:
    """One submission arrives: edited, rendered (not timed), added (timed with the removals)."""
    edit(gen, student)
    text = render(gen, student, io)
    t0 = time.perf_counter()
    run.fingerprints += len(index.add(doc_id, student.owner, SUBMISSION, text))
    keep_latest_and_best(index, student, doc_id, gen.rng.random(), args.keep == "all")
    run.per_add_s.append(time.perf_counter() - t0)
    run.added += 1


def planted_found(index: SimilarityIndex, students: list[Student], limit: int) -> tuple[int, int]:
    """Planted copies among the top `limit` student-student pairs, and how many were planted.
    (Pairs with the public source are left out: a third of the class builds on that solution.)"""
    pairs = [p for p in index.top_pairs(4 * limit) if p.kind_b == SUBMISSION][:limit]
    owners = {frozenset((p.owner_a, p.owner_b)) for p in pairs}
    planted = {frozenset((s.owner, s.copied_from)) for s in students if s.copied_from}
    return len(planted & owners), len(planted)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=300)
    parser.add_argument("--submissions", type=int, default=10)
    parser.add_argument("--copies", type=int, default=15, help="planted student-to-student copies")
    parser.add_argument("--keep", choices=["latest-best", "all"], default="latest-best")
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    index = SimilarityIndex()
    run, students = run_course(args, index)
    t0 = time.perf_counter()
    top = index.top_pairs(50)
    top_s = time.perf_counter() - t0
    print_table(args, index, run, top_s, planted_found(index, students, 50))
    if top:
        print(f"top pair: {top[0].a} ~ {top[0].b}  score {top[0].score:.2f}")


def print_table(args: argparse.Namespace, index: SimilarityIndex, run: Run, top_s: float,
                planted: tuple[int, int]) -> None:
    per_ms = sorted(s * 1000 for s in run.per_add_s)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    table = Table(title=f"similarity index, {args.students} students x {args.submissions} "
                        f"submissions, keep {args.keep}")
    for column in ("added", "in index", "fingerprints", "pairs", "total s", "add p50 ms",
                   "add p99 ms", "top_pairs(50) ms", "peak RSS MB",
                   "planted in top 50 student pairs"):
        table.add_column(column, justify="right")
    table.add_row(str(run.added), str(len(index)), str(run.fingerprints), str(len(index.pairs)),
                  f"{run.total_s:.1f}", f"{statistics.median(per_ms):.2f}",
                  f"{per_ms[int(0.99 * (len(per_ms) - 1))]:.2f}", f"{top_s * 1000:.0f}",
                  f"{peak_mb:.0f}", f"{planted[0]}/{planted[1]}")
    Console(width=160).print(table)


if __name__ == "__main__":
    main()
