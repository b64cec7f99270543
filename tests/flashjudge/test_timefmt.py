"""Times printed on pages and in the console keep their digits however small."""

from flashjudge.timefmt import seconds_text


def test_a_kernels_fraction_of_a_millisecond_does_not_read_zero() -> None:
    assert seconds_text(0.000196) == "0.000196"  # printed "0.000" before
    assert seconds_text(0.0256) == "0.0256"
    assert seconds_text(0.874) == "0.874"


def test_a_second_and_more_keep_milliseconds_and_nothing_is_empty() -> None:
    assert seconds_text(11.2345) == "11.235"
    assert seconds_text(0.0) == "0.000"
    assert seconds_text(None) == ""
