"""One submission, one GPU model: this worker's limits, its model queue, and forwarding.

A GPU worker judges with the time limits its own model gets in the suite (testcases/gpu_limits.py;
the CPU track keeps the suite's own), and besides `gpu` consumes `gpu.<slug>` of its model, where
the service sends the rejudges and timing refinements of a submission already judged on that
model (flashjudge.contract.gpus). Should a job for another model reach it anyway (sent to `gpu`
by an older service, or by hand), it forwards the job to that model's queue instead of judging.
"""

from __future__ import annotations

import logging
from typing import Any

from flashjudge.contract import GPU_LANGUAGES, JudgePayload, Queue, Task, model_queue, same_model
from testcases.gpu_limits import suite_on_gpu
from testcases.suite import Suite, load_suite

log = logging.getLogger(__name__)


def judged_suite(job: JudgePayload, gpu: str) -> Suite | None:
    """The suite with this worker's model limits for a GPU language (None: the suite as shipped,
    loaded by the pipeline; the CPU track never changes its limits)."""
    if job.language not in GPU_LANGUAGES:
        return None
    return suite_on_gpu(load_suite(job.suite), gpu)


def belongs_elsewhere(job: JudgePayload, gpu: str) -> bool:
    """Whether the job must be judged on another GPU model than this worker's."""
    return (job.language in GPU_LANGUAGES and bool(job.gpu_model)
            and not same_model(job.gpu_model, gpu))


def forward(app: Any, task: Task, payload: dict[str, Any], job: JudgePayload) -> str:
    """Send the job, unchanged, to its model's queue; returns that queue."""
    queue = model_queue(job.gpu_model or "") or str(Queue.GPU)
    app.send_task(str(task), kwargs={"payload": payload}, queue=queue)
    log.info("submission %s belongs to %s: forwarded to %s", job.attempt.submission_id,
             job.gpu_model, queue)
    return queue


def queues_to_add(selected: set[str], gpu: str) -> list[str]:
    """The model queue a worker of `gpu` consumes when it consumes `gpu` (none otherwise)."""
    queue = model_queue(gpu)
    if queue is None or str(Queue.GPU) not in selected or queue in selected:
        return []
    return [queue]


def consume_model_queue(sender: str, instance: Any, **_: Any) -> None:
    """celeryd_after_setup handler: a worker of the `gpu` queue also consumes its model's queue."""
    from kombu import Exchange
    from kombu import Queue as KombuQueue

    from worker.celery_adapter.heartbeat import worker_gpu_model

    queues = instance.app.amqp.queues
    for name in queues_to_add(set(queues.consume_from or {}), worker_gpu_model()):
        queues.select_add(KombuQueue(name, Exchange(name, type="direct"), routing_key=name))
        log.info("consuming %s: rejudges of submissions judged on this model", name)
