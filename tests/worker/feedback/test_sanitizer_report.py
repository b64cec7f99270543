"""compute-sanitizer's reports (memcheck, racecheck) parsed into what a student reads."""

from __future__ import annotations

from pathlib import Path

from worker.feedback.sanitizer_report import parse_report

SAMPLES = Path(__file__).with_name("feedback_samples")


def sample(name: str) -> str:
    """A report as compute-sanitizer writes it (kept as files: its lines are long)."""
    return (SAMPLES / name).read_text()


MISALIGNED_SHARED = sample("memcheck-misaligned-shared.txt")

OUT_OF_BOUNDS_GLOBAL_OLD_STYLE = sample("memcheck-out-of-bounds-old-style.txt")

RACE = sample("racecheck-shared-race.txt")

CLEAN = sample("memcheck-clean.txt")


def test_the_misaligned_shared_float4_store_names_kind_line_thread_and_address() -> None:
    report = parse_report(MISALIGNED_SHARED, "memcheck")
    first = report.findings[0]
    assert first.kind == "Invalid __shared__ write of size 16 bytes"
    assert first.location is not None and first.location.short == "hw4.cu:57"
    assert first.location.function.startswith("flash_fwd(const float *")
    assert (first.thread, first.block) == ((1, 0, 0), (3, 0, 0))
    assert first.details == ["Address 0x104 is misaligned",
                             "and is inside the nearest allocation at 0x0 of size 16640 bytes"]
    assert report.findings[1].thread == (2, 0, 0)
    assert report.summary == "3 errors"
    assert report.host_errors[0].startswith("Program hit cudaErrorLaunchFailure")
    assert not report.clean


def test_host_backtraces_never_become_locations_or_details() -> None:
    second = parse_report(MISALIGNED_SHARED).findings[1]
    assert second.details == ["Address 0x208 is misaligned"]
    assert all("Host Frame" not in d for f in parse_report(MISALIGNED_SHARED).findings
               for d in f.details or [])


def test_the_older_at_address_in_file_line_function_form() -> None:
    finding = parse_report(OUT_OF_BOUNDS_GLOBAL_OLD_STYLE).findings[0]
    assert finding.kind == "Invalid __global__ write of size 4 bytes"
    assert finding.location is not None
    assert (finding.location.short, finding.location.function) == ("hw4.cu:21",
                                                                    "scale(float*, int)")
    assert finding.block == (39, 0, 0)
    assert "Address 0x7f4c2a100000 is out of bounds" in (finding.details or [])


def test_a_race_names_both_accesses() -> None:
    report = parse_report(RACE, "racecheck")
    race = report.findings[0]
    assert race.kind == "Race reported (write race)"
    assert race.location is not None and race.location.short == "solve.cu:13"
    assert race.other_location is not None and race.other_location.short == "solve.cu:8"
    assert race.other_location.function == "reduce_rows(float *, int)"
    assert report.summary.startswith("1 hazard displayed")


def test_a_clean_run_has_no_findings_and_only_the_first_few_are_kept() -> None:
    assert parse_report(CLEAN).clean
    many = "========= COMPUTE-SANITIZER\n" + OUT_OF_BOUNDS_GLOBAL_OLD_STYLE.split("\n", 1)[1] * 9
    report = parse_report(many, keep=3)
    assert (len(report.findings), report.total) == (3, 9)
    assert report.to_dict()["findings"][0]["where"] == "hw4.cu:21"


def test_a_real_h100_memcheck_report_of_the_planted_misaligned_store() -> None:
    # captured on an H100 (compute-sanitizer 2025.3.1) from feedback_programs/misaligned-shared
    report = parse_report(sample("memcheck-h100-misaligned-shared.txt"))
    first = report.findings[0]
    assert first.kind == "Invalid __shared__ write of size 16 bytes"
    assert first.location is not None and first.location.short == "hw4.cu:23"
    assert first.location.function == "attention(const float *, float *, int, int)"
    assert (first.thread, first.block) == ((16, 0, 0), (0, 0, 0))
    assert first.details == ["Access to 0x504 is misaligned"]
    assert (len(report.findings), report.total, report.summary) == (4, 193, "193 errors")
