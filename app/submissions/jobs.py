"""Rows and messages: the one module that turns a submission's rows into the contract's
messages for workers, and what workers send back into row fields (CMS keeps this in its Job).

Out: `judge_payload`, `profile_payload`, `refine_payload`, `custom_run_payload`,
`paired_payload`. In: a progress
event (`apply_progress`), a result (`apply_result`: compile, tests, verdict, score, feedback,
GPU model) and a heartbeat (`apply_heartbeat`), each read through its contract class
(flashjudge.contract), which owns that message's format both ways. Nothing here commits or
sends, nor decides where a submission is in its life (app/submissions/lifecycle.py); callers clean
what workers sent first (app/submissions/safe_text.py).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.db.models import CustomRun, JudgedTest, PairedRun, Profile, Submission, utcnow
from app.db.models import WorkerStatus as WorkerRow
from app.submissions import floors
from flashjudge.contract import (
    Attempt,
    CustomRunPayload,
    JudgePayload,
    JudgeResult,
    PairedPayload,
    ProfilePayload,
    ProgressEvent,
    Queue,
    RefinePayload,
    WorkerStatus,
    diagnosis_follows,
    gpu_slug,
)

# what a test row keeps of TestResult.to_dict() besides its columns
TEST_DETAIL = ("message", "exit_code", "signal", "over_tolerance", "mismatches", "stderr_tail",
               "stdout_tail", "error_map", "mistake")
# the fields a result writes, as they are before any: a rejudge starts from these
CLEARED_RESULT: dict[str, Any] = {
    "verdict": None, "score": None, "passed": None, "total_time": None, "result": None,
    "feedback": None, "diagnosis": None, "diagnosis_status": "", "flag_status": "",
    "flag_cleared_by": None, "flag_cleared_at": None, "floor_time": None}


def judge_payload(sub: Submission, settings: Settings) -> JudgePayload:
    """Only what a worker needs: the attempt, language, sources, suite, and the assignment's
    secret seed when its tests are hidden (None: the suite's public seeds, what `testcase gen`
    makes). The seed travels only in this message to workers: never in a log line, a page or
    an API answer (tests/app/course/test_hidden_tests.py)."""
    seed = sub.assignment.secret_seed if sub.assignment is not None else None
    allowed = sub.assignment is not None and sub.assignment.libraries_allowed
    return JudgePayload(Attempt(sub.id, sub.attempt, sub.job_key), language=sub.language,
                        files={f.name: f.content for f in sub.files}, suite=sub.suite,
                        tests=settings.judge_test_ids, gpu_model=sub.gpu_model, seed=seed,
                        libraries_allowed=allowed)


def profile_payload(profile: Profile, sub: Submission, settings: Settings) -> ProfilePayload:
    """One ncu run of the submission as it was judged, on the profile's test."""
    judged = dataclasses.replace(judge_payload(sub, settings), tests=None)
    return ProfilePayload(judged, profile.id, profile.test_id)


def refine_payload(sub: Submission, settings: Settings) -> RefinePayload:
    """The recorded attempt again, with what its verdict pass measured of each test."""
    tests = {t.test_id: {"seconds": t.seconds or 0.0, "passed": t.verdict == "AC"}
             for t in sub.tests}
    return RefinePayload(dataclasses.replace(judge_payload(sub, settings), tests=list(tests)),
                         tests)


def passed_tests(sub: Submission) -> list[str]:
    """The tests the submission's recorded attempt passed, in the suite's order."""
    return sorted(t.test_id for t in sub.tests if t.verdict == "AC")


def paired_payload(run: PairedRun, a: Submission, b: Submission,
                   settings: Settings) -> PairedPayload:
    """Both submissions as they were judged, on the tests both passed, on one GPU model (A's,
    else B's): the paired comparison of one row."""
    tests = sorted(set(passed_tests(a)) & set(passed_tests(b)))
    model = a.gpu_model or b.gpu_model
    sides = [dataclasses.replace(judge_payload(sub, settings), tests=tests, gpu_model=model)
             for sub in (a, b)]
    return PairedPayload(run.id, run.key, sides[0], sides[1], budget_s=run.budget_s,
                         margin=settings.paired_margin, judged=judged_seconds(a, b, tests))


def judged_seconds(a: Submission, b: Submission, tests: list[str]) -> dict[str, tuple[float,
                                                                                     float]]:
    """Each compared test's seconds as both were judged: where the worker draws its rounds
    (worker/timing/round_plan.py). A test without a figure on either side leaves it out, and
    the worker then runs whole rounds."""
    seconds = [{t.test_id: t.seconds for t in sub.tests if t.seconds} for sub in (a, b)]
    return {t: (float(seconds[0][t]), float(seconds[1][t])) for t in tests
            if t in seconds[0] and t in seconds[1]}


def custom_run_payload(run: CustomRun, settings: Settings, queue: Queue) -> CustomRunPayload:
    """The run's current attempt: its files by path in the shared data dir, its time limit."""
    folder = settings.custom_dir / run.folder
    return CustomRunPayload(
        run_id=run.id, attempt=run.attempt, input_path=str(folder / "input.bin"),
        output_path=str(folder / "reference.bin"),
        own_output_path=str(folder / "own.bin") if run.has_own_output else None,
        time_limit_s=settings.custom_run_time_limit_s, queue=str(queue))


def number(value: Any) -> float | None:
    """A float column's value ("nan"/"inf" from clean_json back to floats); None if not one."""
    if value is None or isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def upsert_test(db: Session, sub: Submission, test: dict[str, Any]) -> None:
    """The row of one TestResult.to_dict() for the submission's current attempt."""
    row = db.scalar(select(JudgedTest).where(JudgedTest.submission_id == sub.id,
                                             JudgedTest.test_id == test["id"]))
    if row is None:
        row = JudgedTest(submission_id=sub.id, test_id=test["id"])
        db.add(row)
    row.attempt = sub.attempt
    row.verdict = str(test.get("verdict", "SE"))
    row.seconds = number(test.get("seconds"))
    row.time_limit = number(test.get("time_limit_s"))
    row.max_error = number(test.get("max_error"))
    row.detail = {k: test.get(k) for k in TEST_DETAIL}


def apply_progress(db: Session, sub: Submission, event: ProgressEvent) -> None:
    """What a progress event shows before the result: the build's outcome, a finished test."""
    if event.type.startswith("compile") and event.ok is not None:
        sub.compile_ok = bool(event.ok)
        sub.compile_log = str(event.log or "")
    if event.type == "test-done" and isinstance(event.test, dict) and "verdict" in event.test:
        upsert_test(db, sub, event.test)


def apply_result(db: Session, sub: Submission, judged: JudgeResult,
                 result: dict[str, Any]) -> None:
    """A final result's fields (`result`: the JudgeResult.to_dict() `judged` was read from)."""
    sub.compile_ok = judged.compile.ok
    sub.compile_log = judged.compile.log
    for test in result.get("tests", []):
        upsert_test(db, sub, test)
    sub.verdict = str(judged.verdict)
    sub.score = judged.score
    sub.passed = judged.passed
    sub.total_time = round(judged.total_seconds, 6)
    sub.result = {k: v for k, v in result.items() if k not in ("tests", "feedback")}
    apply_feedback(sub, result)
    floors.apply_floor(db, sub, result)
    sub.gpu_model = gpu_model_of(result)  # rejudges and refinements stay on this model


def apply_feedback(sub: Submission, result: dict[str, Any]) -> None:
    """Store a result's feedback block on its submission; flags hold it from the ranking."""
    block = result.get("feedback")
    sub.feedback = block if isinstance(block, dict) else None
    flags = (sub.feedback or {}).get("flags") or []
    sub.flag_status = "held" if flags else ""
    sub.flag_cleared_by = None
    sub.flag_cleared_at = None
    sub.diagnosis = None
    judged = JudgeResult.from_dict({**result, "language": sub.language})
    sub.diagnosis_status = "pending" if diagnosis_follows(judged) else ""


def gpu_model_of(result: dict[str, Any]) -> str | None:
    """The GPU a result names in its `worker` block (None: the CPU track, or an older worker)."""
    worker = result.get("worker")
    name = worker.get("gpu") if isinstance(worker, dict) else None
    return str(name)[:200] if isinstance(name, str) and gpu_slug(name) else None


def apply_heartbeat(db: Session, beat: WorkerStatus) -> None:
    """Upsert the worker's row: what it judges, whether it is busy and with what, seen now."""
    row = db.get(WorkerRow, beat.hostname) or WorkerRow(hostname=beat.hostname)
    row.gpu = str(beat.gpu)
    row.queues = str(beat.queues)
    row.languages = ",".join(str(n) for n in beat.languages or [])
    row.busy = bool(beat.busy)
    row.state = str(beat.state or "")[:300]
    row.slurm = beat.slurm if isinstance(beat.slurm, dict) else None
    job = beat.job or {}
    row.current = f"submission {job['submission_id']}" if job.get("submission_id") else ""
    row.last_seen = utcnow()
    db.merge(row)
