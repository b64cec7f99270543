"""Task `flashjudge.custom_run`: the reference output of a user's own input file (and the
comparison with their own output when given), computed in a child process killed at the run's
time limit, so one huge upload cannot hold a worker.

Custom runs wait on their own queues (`custom-gpu`, `custom-cpu`) at the lowest priority and never
delay judging: a Redis broker hands one out only when no judging waits, and should one wait
anyway (a broker without priorities) the run puts itself back at the end of its queue and the
worker takes the judging first (as `profile` does on `gpu-low`). Like a judging, a run is taken
in the ledger first, so a re-sent copy is dropped. `python -m worker.celery_adapter.custom_run
PAYLOAD_JSON` is the child: it prints the outcome as one JSON line.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
from functools import partial
from typing import Any

from celery import Task as CeleryTask

from flashjudge.claims import custom_run_subject
from flashjudge.contract import LOW_PRIORITY, CustomRunPayload, Queue, Task
from kernels.compare import compare_files
from kernels.errormap import error_map_files
from kernels.fileformat import read_header
from kernels.mistakes.files import mistake_of_files
from kernels.reference import compute_reference
from worker.celery_adapter.claiming import Work
from worker.celery_adapter.messages import send
from worker.celery_adapter.tasks import MAX_YIELDS, WorkerState, judgings_waiting
from worker.settings import get_worker_settings

log = logging.getLogger(__name__)
JUDGE_QUEUE = {str(Queue.CUSTOM_GPU): Queue.GPU, str(Queue.CUSTOM_CPU): Queue.CPU}


def custom_run_task(task: CeleryTask, payload: dict[str, Any], state: WorkerState) -> None:
    """Give way to waiting judgings; else take the run and compute it within its time limit."""
    run = CustomRunPayload.from_dict(payload)
    if yielded(task.app, run):
        return
    work = Work(custom_run_subject(run.run_id), run.attempt)
    refusal = state.claims.refusal(work)
    if refusal is not None:
        log.info("not computing custom run %s attempt %s: %s", run.run_id, run.attempt,
                    refusal)
        return
    limit = min(run.time_limit_s, get_worker_settings().custom_run_time_limit_s)
    with state.claims.holding(work):
        outcome = partial(send, task.app, Task.RECORD_CUSTOM_RUN, run.run_id, run.attempt,
                          computed(run, limit), patient=True)
        outcome()
        state.claims.reported(resend=outcome)


def yielded(app: Any, run: CustomRunPayload) -> bool:
    """Put the run back at the end of its queue when a judging waits; True if it was. Only
    judgings count, never the refinements waiting beside them at the same low priority (those
    and custom runs take turns), and it goes back at low priority: on Redis a worker gets it
    again only once no judging waits, so it never spins."""
    judge_queue = JUDGE_QUEUE.get(run.queue)
    if judge_queue is None or run.yields >= MAX_YIELDS or judgings_waiting(app, judge_queue) == 0:
        return False
    log.info("custom run %s gives way to a waiting judging (%d times before)", run.run_id,
             run.yields)
    again = CustomRunPayload(**{**run.to_dict(), "yields": run.yields + 1})
    app.send_task(str(Task.CUSTOM_RUN), kwargs={"payload": again.to_dict()}, queue=run.queue,
                  priority=LOW_PRIORITY)
    return True


def computed(run: CustomRunPayload, limit_s: float) -> dict[str, Any]:
    """The outcome of the child process, or the error saying why there is none."""
    argv = [sys.executable, "-m", "worker.celery_adapter.custom_run", json.dumps(run.to_dict())]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=limit_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return failed(f"the reference computation took longer than its limit of {limit_s:g} s "
                      f"and was stopped: try a smaller input (fewer batches B or a shorter N)")
    lines = out.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = err.strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
        return failed(f"the reference computation failed: {tail[0]}")
    return json.loads(lines[-1])


def failed(message: str) -> dict[str, Any]:
    return {"reference": None, "report": None, "error": message}


def compared(run: CustomRunPayload, own_output_path: str) -> dict[str, Any]:
    """The user's output against the reference, every mismatch located (batch, row, col) from
    the input's shape, with the error map when it fails (where in the tiles it is wrong) and
    the classic mistake it matches, if any (what is wrong: report["mistake"], kernels/mistakes/)."""
    header = read_header(run.input_path)
    report = compare_files(own_output_path, run.output_path, header=header).to_dict()
    reading = ""
    if report.get("status") == "fail":
        emap = error_map_files(own_output_path, run.output_path, header)
        report["error_map"], reading = emap.to_dict(), emap.reading
    if report.get("status") in ("fail", "nonfinite"):
        found = mistake_of_files(run.input_path, own_output_path, run.output_path,
                                 reading=reading)
        report["mistake"] = found.to_dict() if found else None
    return report


def outcome_of(run: CustomRunPayload) -> dict[str, Any]:
    """In the child: the reference output, and the comparison report when an output was given."""
    outcome: dict[str, Any] = failed("")
    outcome["error"] = None
    try:
        outcome["reference"] = compute_reference(run.input_path, run.output_path)
        if run.own_output_path:
            outcome["report"] = compared(run, run.own_output_path)
    except Exception as exc:  # noqa: BLE001 - reported to the user as the run's error
        outcome["error"] = f"{type(exc).__name__}: {exc}"
    return outcome


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    run = CustomRunPayload.from_dict(json.loads(args[0]))
    print(json.dumps(outcome_of(run)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
