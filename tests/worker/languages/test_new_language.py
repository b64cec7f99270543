"""Adding a language is one row and one class: a toy CPU language written here (its row and its
class, nothing else) is offered by a worker of its queue, inferred from its files, judged for real
(bubblewrap, gcc) and given its start-up floor, through a registry of its own; the worker's own
registry is left as it was."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from flashjudge.contract import LanguageFacts, Noise, Queue, Timer, Verdict
from tests.worker.hostile_corpus import load_case
from worker.celery_adapter.heartbeat import judged_languages
from worker.languages import REGISTRY, BuildPlan, BuildSettings, Language
from worker.pipeline import JudgeConfig, JudgeRequest, judge
from worker.running.submission import SubmissionError
from worker.sandbox.bwrap import Sandbox
from worker.timing.floor import FloorMeter
from worker.timing.stats import NoiseModel, noise_for

TOY = LanguageFacts("toy-c", uses_gpu=False, suffixes=(".toy",),
                    title="Toy C: hw4.toy, plain C built by gcc, run as ./hw4 IN OUT",
                    main_file="hw4.toy", timer=Timer.PROGRAM, noise=Noise.PROGRAM,
                    floor_built_as="hw4.toy")


class ToyC(Language):
    """C in a file named .toy, built without OpenMP: the whole of the toy language."""

    facts: ClassVar[LanguageFacts] = TOY

    @classmethod
    def claims(cls, files: Mapping[str, bytes]) -> bool:
        return "hw4.toy" in files

    def plan(self, files: Mapping[str, bytes], settings: BuildSettings) -> BuildPlan:
        if "hw4.toy" not in files:
            raise SubmissionError("hw4.toy", "toy-c needs hw4.toy")
        return BuildPlan(files=dict(files), argv=["gcc", "-x", "c", "-O2", "-o", "hw4",
                                                  "hw4.toy", "-lm"], product="hw4")


WITH_TOY = REGISTRY.with_language(ToyC, first=True)
SOURCE = load_case("correct-seq").files["hw4.c"]


def test_the_toy_is_known_only_to_the_registry_it_was_added_to() -> None:
    assert "toy-c" in WITH_TOY.names and WITH_TOY.facts("toy-c") is TOY
    assert "toy-c" not in REGISTRY.names and REGISTRY.facts("toy-c") is None
    assert WITH_TOY.infer({"hw4.toy": SOURCE}) == "toy-c"
    assert WITH_TOY.get("toy-c").name == "toy-c" and not WITH_TOY.get("toy-c").uses_gpu


def test_the_toy_is_offered_by_a_worker_of_its_queue_and_routed_by_its_row() -> None:
    assert TOY.queue == Queue.CPU
    assert "toy-c" in judged_languages("cpu", "cpu", WITH_TOY)
    assert "toy-c" not in judged_languages("gpu", "NVIDIA H100 80GB HBM3", WITH_TOY)
    assert "toy-c" not in judged_languages("cpu", "cpu")  # the worker's own registry
    assert noise_for(TOY) == NoiseModel()  # a whole program's noise, from its row


def test_the_toy_is_judged_and_gets_its_start_up_floor(engine_cache: Path,
                                                       judge_config: JudgeConfig,
                                                       cpu_sandbox: Sandbox) -> None:
    config = dataclasses.replace(judge_config, languages=WITH_TOY)
    request = JudgeRequest(None, {"hw4.toy": SOURCE}, "hw4-mini", ["t07"])
    result = judge(request, engine_cache, sandbox=cpu_sandbox, config=config)
    assert result.language == "toy-c" and result.compile.ok, result.compile.log
    assert [t.verdict for t in result.tests] == [Verdict.AC]
    floor = FloorMeter(runs=1).measure(request, result, engine_cache, config, cpu_sandbox)
    assert floor is not None and floor.error is None and list(floor.tests) == ["t07"]
    assert "reads the test's input" in floor.what  # a CPU program's floor, from its row
