"""The contract between the web app and the judge workers: everything both sides must agree on.

Standard library only, and importing it does nothing but define, so app/ and worker/ can both use it
without importing each other (docs/architecture.md; tests/test_architecture.py checks the rule):

- `names`: Celery task and queue names; `broker`: the Celery configuration as plain data;
- `status`: the Verdict and Status enums;
- `results`: the result dataclasses a worker sends back (to_dict / from_dict);
- `messages`: the payloads the app sends and the small messages workers send (to_dict / from_dict);
- `languages`: each language's public facts, one row per language, and the rule that decides
  when a diagnosis follows;
- `gpus`: GPU model slugs and the per-model judge queue `gpu.<slug>`;
- `paired`: the paired comparison of two neighbours on the board (payload and result);
- `uploads`: what a submission's files may be (count, size, names), held by both sides.
- `floor` (imported from its module): the start-up floor block of a whole-program result.
"""

from flashjudge.contract.broker import celery_config, make_broker_folders
from flashjudge.contract.gpus import gpu_slug, model_queue, same_model
from flashjudge.contract.languages import (
    GPU_LANGUAGES,
    LANGUAGES,
    TOOLED_LANGUAGES,
    LanguageFacts,
    Noise,
    Timer,
    diagnosis_follows,
)
from flashjudge.contract.messages import (
    Attempt,
    CustomRunPayload,
    FingerprintPayload,
    JudgePayload,
    ProfilePayload,
    ProgressEvent,
    RefinePayload,
    WorkerStatus,
)
from flashjudge.contract.names import ALL_QUEUES, JUDGE_QUEUES, LOW_PRIORITY, Queue, Task
from flashjudge.contract.paired import PairedPayload, PairedResult, PairedRound
from flashjudge.contract.results import CompileResult, JudgeResult, KernelTiming, TestResult
from flashjudge.contract.status import Status, Verdict
from flashjudge.contract.uploads import (
    MAX_FILE_BYTES,
    MAX_FILES,
    UploadProblem,
    upload_problem,
)

__all__ = [
    "ALL_QUEUES", "GPU_LANGUAGES", "JUDGE_QUEUES", "LANGUAGES", "TOOLED_LANGUAGES", "LOW_PRIORITY",
    "MAX_FILES",
    "MAX_FILE_BYTES",
    "Attempt", "CompileResult", "CustomRunPayload", "FingerprintPayload", "JudgePayload",
    "JudgeResult", "KernelTiming",
    "LanguageFacts", "Noise", "PairedPayload", "PairedResult", "PairedRound", "ProfilePayload",
    "ProgressEvent", "Queue", "RefinePayload", "Status", "Task",
    "TestResult", "Timer",
    "UploadProblem", "Verdict", "WorkerStatus", "celery_config", "diagnosis_follows", "gpu_slug",
    "make_broker_folders", "model_queue", "same_model", "upload_problem",
]
