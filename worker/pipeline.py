"""judge(): build a submission in the sandbox, run every test of a suite, return one JudgeResult.

A plain library (no Celery, no web framework, no environment): the Celery task and `flashjudge
judge-local` are thin callers that pass everything in a JudgeConfig (worker.settings builds one
from the environment). Two kinds of failure are kept apart: what the submission did wrong becomes
a verdict (CE for the build, one verdict per test), what we did wrong (sandbox, cache, harness)
becomes SE with `JudgeResult.system_error` set, so the caller retries instead of blaming the
student.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flashjudge.contract import CompileResult, JudgePayload, JudgeResult, TestResult, Verdict
from testcases.suite import Suite, load_suite
from worker.harness.build import find_toolchain
from worker.languages import REGISTRY, BuildSettings, Language, Registry
from worker.languages.arch import gpu_arch, supported_archs
from worker.machine import Machine
from worker.running.build import BuildOutcome, build
from worker.running.classify import SystemFailure
from worker.running.nodelock import NodeLock
from worker.running.overlap import Overlap, OverlappedPass
from worker.running.products import ProductCache, product_key
from worker.running.submission import SubmissionError, check_files
from worker.running.testrun import BASE_MEMORY, KernelTimer, RunContext, TestInputs
from worker.sandbox.bwrap import BwrapSandbox, Sandbox
from worker.sandbox.workspace import Cleaner, InputCache, make_workdir, remove_tree, sweep_stale

log = logging.getLogger(__name__)
OMP_THREADS_MAX = 32  # OpenMP threads of a c-program run (the sandbox allows 128 pids)


@dataclass
class JudgeRequest:
    """What to judge: the files, their language, the suite and which of its tests."""

    language: str | None  # a name of the registry, e.g. "cuda-program"; None: inferred
    files: dict[str, bytes]  # file name -> content
    suite: str = "hw4"  # suite name (testcases/<suite>.toml)
    tests: list[str] | None = None  # test ids to run; None: all of them
    seed: int | None = field(default=None, repr=False)  # override every test's seed (a
    # secret seed for hidden tests: kept out of repr, so no log line shows it)
    libraries_allowed: bool = False  # the assignment lifts the suite's own-kernels rule

    @classmethod
    def of(cls, payload: JudgePayload) -> JudgeRequest:
        """The request a judge message asks for (verdicts, refinements, paired sides alike)."""
        return cls(language=payload.language, files=payload.files, suite=payload.suite,
                   tests=payload.tests, seed=payload.seed,
                   libraries_allowed=payload.libraries_allowed)


@dataclass
class JudgeEvent:
    """Progress of a judging, for live displays (the CLI, the service's SSE)."""

    kind: str  # "prepare" | "compile" | "test-start" | "test-done"
    test_id: str | None = None  # the test concerned (test-start, test-done)
    index: int = 0  # the test's position, 0-based
    total: int = 0  # number of tests being judged
    result: TestResult | CompileResult | None = None  # compile / test-done: the partial result


@dataclass
class JudgeConfig:
    """Worker-level settings, all of them (nothing below reads the environment); the defaults
    suit one bare machine. worker.settings.WorkerSettings.judge_config() makes a worker's."""

    insecure: bool = False  # allow running without the sandbox's protections (development)
    machine: Machine = Machine()  # the GPU, CUDA, bubblewrap, cgroups and scratch dir to use
    kernel_timer: KernelTimer = "split"  # cuda-kernel: the trusted timer (or the in-process one)
    device: str = "auto"  # where expected outputs are computed ("auto" | "cpu" | "gpu")
    kernel_budget_s: float = 1.0  # cuda-kernel: time budget for the timed calls of one test
    build_time_limit_s: float = 60.0  # wall-time limit of a build
    inputs: InputCache = field(default_factory=InputCache)  # tmpfs copies of the inputs
    env: dict[str, str] = field(default_factory=dict)  # extra environment for runs
    suite: Suite | None = None  # judge against this Suite instead of loading request.suite
    base_memory_bytes: int = BASE_MEMORY  # host memory of a run, besides room for its files
    overlap: Overlap = Overlap()  # tests of the verdict pass at once (worker/running/overlap.py)
    products: ProductCache | None = None  # builds kept for the refinement (None: it rebuilds)
    node_lock: NodeLock | None = None  # held shared by a verdict pass and each refinement run,
    # alone by a paired round (None: nothing else times on this machine; worker/running/nodelock.py)
    languages: Registry = REGISTRY  # the languages it judges (a test may add one of its own)


Listener = Callable[[JudgeEvent], None]


def _emit(on_event: Listener | None, event: JudgeEvent) -> None:
    if on_event is not None:
        on_event(event)


def _suite_for(request: JudgeRequest, config: JudgeConfig) -> Suite:
    """The suite, limited to the requested tests (SuiteError names an unknown one)."""
    suite = config.suite or load_suite(request.suite)
    if request.libraries_allowed:  # a TA allowed library kernels for this assignment
        suite = dataclasses.replace(suite, own_kernels_only=False)
    if not request.tests:
        return suite
    return dataclasses.replace(suite, tests=[suite.test(i) for i in request.tests])


def _language_of(request: JudgeRequest, languages: Registry) -> Language:
    check_files(request.files)
    return languages.get(request.language or languages.infer(request.files))


def _default_sandbox(language: Language, config: JudgeConfig) -> Sandbox:
    return BwrapSandbox.for_machine(config.machine, gpu=language.uses_gpu,
                                    insecure=config.insecure)


def build_settings(language: Language, config: JudgeConfig) -> BuildSettings:
    scratch = config.machine.scratch
    if not language.uses_gpu:
        return BuildSettings(time_limit_s=config.build_time_limit_s, scratch=scratch)
    return BuildSettings(gpu_arch=gpu_arch(config.machine), supported_archs=supported_archs(),
                         time_limit_s=config.build_time_limit_s, scratch=scratch)


def _finish(suite: Suite, language: str, compile_: CompileResult, tests: list[TestResult],
            insecure: bool, **extra: Any) -> JudgeResult:
    """Score the tests and wrap everything up (INSECURE marked on every result when it applies)."""
    passed = sum(t.verdict == Verdict.AC for t in tests)
    result = JudgeResult(compile=compile_, tests=tests, score=suite.score_of(passed),
                         max_score=suite.max_score, passed=passed, language=language,
                         suite=suite.name, insecure=insecure,
                         overhead_s=sum(t.overhead_s for t in tests), **extra)
    if insecure:
        result.notes.insert(0, "INSECURE: judged without the sandbox's protections")
        for test in tests:
            test.message = f"INSECURE: {test.message}"
    return result


def _all(verdict: Verdict, ids: list[str], suite: Suite, message: str) -> list[TestResult]:
    return [TestResult(id=i, verdict=verdict, seconds=0.0, message=message,
                       time_limit_s=suite.test(i).time_limit_s) for i in ids]


def with_node(lock: NodeLock | None) -> AbstractContextManager[None]:
    """A hold on the node's timing lock shared with the node's other runs (a paired round
    waits for it): a verdict pass takes it once for all its tests, a refinement per run."""
    return lock.shared() if lock is not None else nullcontext()


def _run_one(ctx: RunContext, language: Language, inputs: TestInputs) -> TestResult:
    try:
        return language.run_test(ctx, inputs)
    except Exception as exc:  # noqa: BLE001 - any failure here is ours: SE, never the student's
        detail = str(exc) if isinstance(exc, SystemFailure) else traceback.format_exc(limit=3)
        spec = inputs.prepared.spec
        return TestResult(id=spec.id, verdict=Verdict.SE, seconds=0.0,
                          message=f"system error: {detail}", time_limit_s=spec.time_limit_s)


def _run_tests(ctx: RunContext, language: Language, tests: list[TestInputs],
               on_event: Listener | None, overlap: Overlap | None = None) -> list[TestResult]:
    """Every test, none skipped: a failure does not stop the suite. In order, one at a time,
    unless `overlap` lets some run at once (events still come from this thread)."""
    if overlap is not None and overlap.k > 1:
        def start(index: int) -> None:
            test_id = tests[index].prepared.spec.id
            _emit(on_event, JudgeEvent("test-start", test_id, index, len(tests)))

        def done(index: int, result: TestResult) -> None:
            test_id = tests[index].prepared.spec.id
            _emit(on_event, JudgeEvent("test-done", test_id, index, len(tests), result))

        return OverlappedPass(tests, lambda inputs: _run_one(ctx, language, inputs), overlap,
                              start, done).run()
    results = []
    for index, inputs in enumerate(tests):
        test_id = inputs.prepared.spec.id
        _emit(on_event, JudgeEvent("test-start", test_id, index, len(tests)))
        result = _run_one(ctx, language, inputs)
        results.append(result)
        _emit(on_event, JudgeEvent("test-done", test_id, index, len(tests), result))
    return results


def judge(
    request: JudgeRequest, cache_dir: str | Path, on_event: Listener | None = None,
    sandbox: Sandbox | None = None, config: JudgeConfig | None = None,
) -> JudgeResult:
    """Judge one submission. Raises SuiteError for an unknown suite/test and SandboxUnavailable
    when this machine cannot sandbox (unless config.insecure); everything else is in the result."""
    config = config or JudgeConfig()
    suite = _suite_for(request, config)
    ids = [t.id for t in suite.tests]
    try:
        language = _language_of(request, config.languages)
    except SubmissionError as exc:
        compile_ = CompileResult(ok=False, log=str(exc))
        _emit(on_event, JudgeEvent("compile", total=len(ids), result=compile_))
        return _finish(suite, request.language or "unknown", compile_,
                       _all(Verdict.CE, ids, suite, "compile error"), config.insecure)
    judging = Judging(request, Path(cache_dir), on_event, sandbox or _default_sandbox(language,
                      config), config, suite, ids, language)
    return judging.run()


@dataclass
class Judging:
    """One judging in progress: build, prepare, run every test (each step a method)."""

    request: JudgeRequest  # what is judged
    cache_dir: Path  # the prepared cache (inputs, expected outputs, the harness)
    on_event: Listener | None  # progress listener
    sandbox: Sandbox  # runs the build and the tests
    config: JudgeConfig  # worker settings
    suite: Suite  # the suite (possibly limited to some tests)
    ids: list[str]  # the tests to run, in order
    language: Language  # the submission's language

    @property
    def insecure(self) -> bool:
        return self.sandbox.insecure

    def run(self) -> JudgeResult:
        sweep_stale(self.config.machine.scratch)
        artifacts = make_workdir("artifacts", self.config.machine.scratch)
        artifacts.chmod(0o700)  # the built product, out of the sandbox's reach
        try:
            return self._built(artifacts)
        except SystemFailure as exc:
            return self._system_error(str(exc))
        finally:
            remove_tree(artifacts)

    def _built(self, artifacts: Path) -> JudgeResult:
        outcome = self._compile(artifacts)
        compile_, product = outcome.compile, outcome.product
        _emit(self.on_event, JudgeEvent("compile", total=len(self.ids), result=compile_))
        if product is None:
            return self._finish(compile_, _all(Verdict.CE, self.ids, self.suite, "compile error"))
        borrowed = self.language.borrowed_at_build(product) if self.suite.own_kernels_only \
            else None
        if borrowed is not None:
            why = f"a library's attention or matrix kernels: {borrowed}; this suite accepts only " \
                  "your own kernels"
            return self._finish(compile_, _all(Verdict.BK, self.ids, self.suite, why))
        _emit(self.on_event, JudgeEvent("prepare", total=len(self.ids)))
        started = time.monotonic()
        try:
            inputs = self.language.test_inputs(self.suite, self.cache_dir, self.config.device,
                                               self.request.seed)
            harness = self.language.runtime(self.cache_dir, self.config.machine)
        except Exception as exc:  # noqa: BLE001 - a cache we cannot fill is our failure
            return self._system_error(f"prepare: {exc}", compile_)
        prepare_s = time.monotonic() - started
        cleaner = Cleaner()
        context = self._context(product, harness, cleaner)
        try:  # the whole pass holds the node once: a paired round waits for it, not per test
            with with_node(self.config.node_lock):
                tests = _run_tests(context, self.language, inputs, self.on_event,
                                   self.config.overlap)
        finally:
            cleaner.drain()
        errors = [f"{t.id}: {t.message}" for t in tests if t.verdict == Verdict.SE]
        return self._finish(compile_, tests, system_error="; ".join(errors) or None,
                            prepare_s=prepare_s)

    def _compile(self, artifacts: Path) -> BuildOutcome:
        """The compile result and the built product (None on CE), which is kept for the
        refinement when the config has a product cache."""
        settings = build_settings(self.language, self.config)
        try:
            outcome = build(self.language, self.request.files, settings, self.sandbox, artifacts)
        except SubmissionError as exc:
            return BuildOutcome(CompileResult(ok=False, log=str(exc)), None)
        except SystemFailure as exc:
            raise SystemFailure(f"build: {exc}") from exc
        if outcome.product is not None and self.config.products is not None:
            try:
                self.config.products.put(self._product_key(settings), outcome.product)
            except OSError as exc:  # the refinement then builds again: slower, not wrong
                log.warning("could not keep the built product: %s", exc)
        return outcome

    def _product_key(self, settings: BuildSettings) -> str:
        return product_key(self.language.name, self.request.files, settings)

    def _kept_product(self, artifacts: Path) -> Path | None:
        """The verdict pass's product again (copied into `artifacts`), else None."""
        if self.config.products is None:
            return None
        settings = build_settings(self.language, self.config)
        try:
            target = artifacts / self.language.plan(self.request.files, settings).product
        except SubmissionError:
            return None
        return target if self.config.products.get(self._product_key(settings), target) else None

    def _context(self, product: Path, harness: Path | None, cleaner: Cleaner) -> RunContext:
        return RunContext(
            sandbox=self.sandbox, product=product,
            inputs=self.config.inputs, tolerance=self.suite.tolerance,
            env=run_env(self.config, harness), harness=harness,
            kernel_budget_s=self.config.kernel_budget_s, kernel_timer=self.config.kernel_timer,
            machine=self.config.machine,
            base_memory_bytes=self.config.base_memory_bytes, cleaner=cleaner,
            cache_dir=self.cache_dir, own_kernels_only=self.suite.own_kernels_only,
        )

    def _finish(self, compile_: CompileResult, tests: list[TestResult],
                **extra: Any) -> JudgeResult:
        return _finish(self.suite, self.language.name, compile_, tests, self.insecure, **extra)

    def _system_error(self, message: str, compile_: CompileResult | None = None) -> JudgeResult:
        compile_ = compile_ or CompileResult(ok=False, log=message)
        return self._finish(compile_, _all(Verdict.SE, self.ids, self.suite, message),
                            system_error=message)


def run_env(config: JudgeConfig, harness: Path | None) -> dict[str, str]:
    """The environment of test runs: OpenMP sized to the pids limit, the CUDA runtime's path."""
    env = dict(config.env)
    env.setdefault("OMP_NUM_THREADS", str(min(os.cpu_count() or 1, OMP_THREADS_MAX)))
    if harness is not None:
        env.setdefault("LD_LIBRARY_PATH", str(find_toolchain(config.machine.cuda_home).lib_dir))
    return env


@contextmanager
def test_runner(request: JudgeRequest, cache_dir: str | Path, sandbox: Sandbox | None = None,
                config: JudgeConfig | None = None) -> Iterator[Callable[[str], TestResult]]:
    """Build the submission once and prepare its suite, then run any of its tests again by id:
    the timing refinement's runs. Raises SystemFailure when the rebuild fails (it built before)."""
    config = config or JudgeConfig()
    suite = _suite_for(request, config)
    language = _language_of(request, config.languages)
    judging = Judging(request, Path(cache_dir), None,
                      sandbox or _default_sandbox(language, config), config, suite,
                      [t.id for t in suite.tests], language)
    artifacts = make_workdir("artifacts", config.machine.scratch)
    artifacts.chmod(0o700)
    try:
        product = judging._kept_product(artifacts) or judging._compile(artifacts).product
        if product is None:
            raise SystemFailure("the submission no longer builds")
        inputs = {i.prepared.spec.id: i for i in language.test_inputs(
            suite, Path(cache_dir), config.device, request.seed)}
        cleaner = Cleaner()
        context = judging._context(product, language.runtime(Path(cache_dir), config.machine),
                                   cleaner)

        def run(test_id: str) -> TestResult:
            with with_node(config.node_lock):
                return language.run_test(context, inputs[test_id])

        try:
            yield run
        finally:
            cleaner.drain()
    finally:
        remove_tree(artifacts)
