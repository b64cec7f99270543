"""Overlapping the verdict pass's tests (FLASHJUDGE_VERDICT_PARALLEL=k), without changing a verdict.

Most of a short test is process and CUDA start-up (0.2-0.3 s of a hw4 test on an H200), during
which the GPU idles; running up to k tests at once hides it. What overlapping may change is a
test's time (tests share the GPU and the CPU) and what memory is left for it, so:
- the first test runs alone (it also warms what a judging builds on first use: the trusted
  timer, the harness), and tests start only while their inputs and outputs fit `memory_bytes`;
- a test that did not pass, or passed at `alone_share` of its limit or more, is run again alone
  once the others are done, and that run's result is the one reported: a TLE, an out-of-memory
  RE or a near-limit AC is never the overlap's doing;
- after the first test that did not pass, the rest run alone, one at a time (a failing
  submission costs at most k extra runs, not a second pass).
Times of overlapped tests are the verdict pass's only; the ranking's come from the refinement.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass

from flashjudge.contract import TestResult, Verdict
from kernels.fileformat import InputHeader
from worker.running.testrun import TestInputs


@dataclass(frozen=True)
class Overlap:
    """How many tests of one judging may run at once, and when one is run again alone."""

    k: int = 1  # tests at once (1: one after another, as always)
    alone_share: float = 0.5  # a pass at this share of its limit or more is rerun alone
    memory_bytes: int | None = None  # inputs + outputs of the tests at once at most (None: any)

    def rerun_alone(self, result: TestResult) -> bool:
        """Whether an overlapped result may owe something to the overlap."""
        return (result.verdict != Verdict.AC
                or result.seconds >= self.alone_share * result.time_limit_s)


def footprint(inputs: TestInputs) -> int:
    """Bytes a test's run holds on the device: its input, and its output twice (the program's
    buffer and the file)."""
    spec = inputs.prepared.spec
    header = InputHeader(spec.B, spec.N, spec.d)
    return header.input_bytes + 2 * header.output_bytes


Run = Callable[[TestInputs], TestResult]
Signal = Callable[[int], None]  # a test's index: it starts
Done = Callable[[int, TestResult], None]  # a test's index and its final result


class OverlappedPass:
    """One verdict pass with up to `overlap.k` tests at once; `run` never raises."""

    def __init__(self, tests: list[TestInputs], run: Run, overlap: Overlap, start: Signal,
                 done: Done) -> None:
        self.tests = tests
        self.run_test = run
        self.overlap = overlap
        self.start = start  # called on this thread before a test (re)starts
        self.done = done  # called on this thread with each test's final result
        self.results: dict[int, TestResult] = {}
        self.alone: list[int] = []  # overlapped tests to run again alone
        self.serial = False  # a test failed: no more overlapping

    def run(self) -> list[TestResult]:
        queue = deque(range(len(self.tests)))
        if queue:
            self._alone(queue.popleft())
        with ThreadPoolExecutor(self.overlap.k, thread_name_prefix="flashjudge-test") as pool:
            running: dict[Future[TestResult], int] = {}
            while queue or running:
                self._fill(pool, queue, running)
                if not running:  # serial from here: the next one alone
                    self._alone(queue.popleft())
                    continue
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    self._landed(running.pop(future), future.result())
        for index in sorted(self.alone):
            self._alone(index)
        return [self.results[i] for i in range(len(self.tests))]

    def _fill(self, pool: ThreadPoolExecutor, queue: deque[int],
              running: dict[Future[TestResult], int]) -> None:
        """Start tests while fewer than k run and the next one fits (nothing once serial)."""
        while queue and not self.serial and len(running) < self.overlap.k \
                and self._fits(queue[0], running.values()):
            index = queue.popleft()
            self.start(index)
            running[pool.submit(self.run_test, self.tests[index])] = index

    def _fits(self, index: int, running: Iterable[int]) -> bool:
        cap = self.overlap.memory_bytes
        held = [footprint(self.tests[i]) for i in running]
        return cap is None or not held or sum(held) + footprint(self.tests[index]) <= cap

    def _landed(self, index: int, result: TestResult) -> None:
        if self.overlap.rerun_alone(result):
            self.alone.append(index)
            self.serial = self.serial or result.verdict != Verdict.AC
        else:
            self.results[index] = result
            self.done(index, result)

    def _alone(self, index: int) -> None:
        """Run one test with nothing else of this judging running; its result is final."""
        self.start(index)
        result = self.run_test(self.tests[index])
        self.results[index] = result
        self.serial = self.serial or result.verdict != Verdict.AC
        self.done(index, result)
