"""`flashjudge judge-local`: the --json object's shape, test selection, and usage errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flashjudge_cli.commands.judge_local import UsageError, parse_tests
from flashjudge_cli.main import main
from testcases.suite import load_suite
from tests.worker.hostile_corpus import CORPUS

jsonschema = pytest.importorskip("jsonschema")

SCHEMA = {
    "type": "object",
    "required": ["compile", "score", "passed", "tests"],
    "properties": {
        "compile": {"type": "object", "required": ["ok", "log"],
                    "properties": {"ok": {"type": "boolean"}, "log": {"type": "string"}}},
        "score": {"type": "integer"},
        "passed": {"type": "integer"},
        "tests": {"type": "array", "items": {
            "type": "object", "required": ["id", "verdict", "seconds", "max_error"],
            "properties": {
                "id": {"type": "string"},
                "verdict": {"enum": ["AC", "WA", "TLE", "RE", "MLE", "OLE", "NO", "BK", "CE",
                                     "SE"]},
                "seconds": {"type": "number"},
                "max_error": {"type": ["number", "null"]},
            }}},
    },
}


def test_json_output_is_exactly_one_object_of_the_documented_shape(
        engine_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = CORPUS / "crash" / "hw4.c"
    status = main(["judge-local", str(source), "--suite", "hw4-mini", "--tests", "t06-t07",
                   "--json", "--cache-dir", str(engine_cache)])
    out = capsys.readouterr().out
    data = json.loads(out)  # fails if anything else was printed
    jsonschema.validate(data, SCHEMA)
    assert [(t["id"], t["verdict"]) for t in data["tests"]] == [("t06", "RE"), ("t07", "RE")]
    assert (data["score"], data["max_score"]) == (0, 20) and status == 1


def test_table_output_shows_verdicts_and_score(engine_cache: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    source = CORPUS / "correct-seq" / "hw4.c"
    status = main(["judge-local", str(source), "--suite", "hw4-mini", "--tests", "t07",
                   "--cache-dir", str(engine_cache)])
    out = capsys.readouterr().out
    assert status == 0 and "t07" in out and "AC" in out
    assert "Score: 10/10" in out and "passed 1/1" in out


def test_unknown_suite_is_a_json_error_too(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["judge-local", str(CORPUS / "crash" / "hw4.c"), "--suite", "nope", "--json"])
    assert status == 2 and "nope" in json.loads(capsys.readouterr().out)["error"]


def test_test_ranges_follow_suite_order() -> None:
    suite = load_suite("hw4")
    assert parse_tests("t01-t03,t10", suite) == ["t01", "t02", "t03", "t10"]
    assert parse_tests("t05", suite) == ["t05"]
    assert parse_tests(None, suite) is None
    with pytest.raises(UsageError, match="t99"):
        parse_tests("t01-t99", suite)
    with pytest.raises(UsageError, match="backwards"):
        parse_tests("t05-t01", suite)
