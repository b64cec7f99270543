"""`flashjudge submit` refuses a file the server would refuse for its size, before sending it,
saying the server's limit; says what to do without a token or a server, never with a traceback;
and follows a judging through an API restart to a whole final table."""

from __future__ import annotations

import io
import threading

import httpx
import pytest
from rich.console import Console
from sqlalchemy import func, select

from app.course import assignments
from app.db.models import Assignment, Submission
from app.submissions import recording
from flashjudge.contract import MAX_FILE_BYTES
from flashjudge_cli.commands import submit as submit_command
from flashjudge_cli.main import main
from tests.app.utils.factories import judged_result
from tests.app.utils.live_server import free_port, live_server
from tests.app.utils.processes import wait_for
from tests.app.utils.served_site import crash, served, start


def test_a_too_large_file_is_refused_before_sending(settings, db, student, tmp_path, capsys):
    source = tmp_path / "hw4.c"
    source.write_text("/*" + "x" * MAX_FILE_BYTES + "*/\nint main(void) { return 0; }\n")
    token = student.headers["Authorization"].split()[1]
    with live_server(settings) as url:
        code = main(["submit", str(source), "--server", url, "--token", token, "--no-wait"])
    err = capsys.readouterr().err
    assert code == 2
    size = source.stat().st_size
    assert (f"{source} has {size} bytes; the server takes at most {MAX_FILE_BYTES} bytes per "
            "source file") in err
    assert "nothing was sent" in err
    assert db.scalar(select(func.count()).select_from(Submission)) == 0


def test_a_file_within_the_limit_is_sent(settings, db, student, tmp_path, capsys):
    source = tmp_path / "hw4.c"
    source.write_text("int main(void) { return 0; }\n")
    token = student.headers["Authorization"].split()[1]
    with live_server(settings) as url:
        code = main(["submit", str(source), "--server", url, "--token", token, "--no-wait"])
    assert code == 0 and "submitted c-program as #" in capsys.readouterr().out
    assert db.scalar(select(func.count()).select_from(Submission)) == 1


def test_the_tas_announcements_are_printed_before_the_output(settings, db, student, ta,
                                                             tmp_path, capsys):
    source = tmp_path / "hw4.c"
    source.write_text("int main(void) { return 0; }\n")
    token = student.headers["Authorization"].split()[1]
    with live_server(settings) as url:
        posted = httpx.post(f"{url}/api/announcements", headers=ta.headers,
                            json={"title": "Deadline moved", "body": "Now Friday 23:59."})
        assert posted.status_code == 201
        code = main(["submit", str(source), "--server", url, "--token", token, "--no-wait"])
    out = capsys.readouterr().out
    assert code == 0
    assert "Announcement: Deadline moved" in out and "Now Friday 23:59." in out
    assert out.index("Now Friday 23:59.") < out.index("submitted c-program as #")


def test_no_token_and_no_terminal_says_what_to_do_instead_of_a_traceback(tmp_path, capsys,
                                                                         monkeypatch):
    monkeypatch.delenv("FLASHJUDGE_TOKEN", raising=False)
    source = tmp_path / "hw4.c"
    source.write_text("int main(void) { return 0; }\n")
    code = main(["submit", str(source), "--server", "http://127.0.0.1:9"])  # stdin: no tty
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and "EOFError" not in err
    assert ("no API token and no terminal to ask for a password: make a token on "
            "http://127.0.0.1:9/account and set FLASHJUDGE_TOKEN (or pass --token)") in err


def test_a_server_that_is_not_there_is_named_with_how_to_choose_another(tmp_path, capsys):
    source = tmp_path / "hw4.c"
    source.write_text("int main(void) { return 0; }\n")
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens
    code = main(["submit", str(source), "--server", url, "--token", "fj_x"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert f"cannot reach the flashjudge server at {url}" in err
    assert "pass --server URL or set FLASHJUDGE_SERVER" in err


def test_the_final_table_of_an_empty_state_is_blank_not_a_key_error():
    table = submit_command.final_table({})
    assert table.row_count == 0 and "submission ?" in str(table.title)


def test_the_final_table_shows_each_time_above_the_start_up_floor():
    state = {"id": 7, "verdict": "AC", "passed": 1, "score": 10, "time": 0.25,
             "floor": {"total_s": 0.21, "above_s": 0.04, "what": "", "runs": 3, "error": None},
             "tests": [{"id": "t01", "verdict": "AC", "seconds": 0.25, "floor_s": 0.21,
                        "above_floor_s": 0.04, "time_limit": 2.0, "max_error": 1e-6}]}
    shown = io.StringIO()
    Console(file=shown, width=200).print(submit_command.final_table(state))
    text = shown.getvalue()
    assert "above start-up" in text and "0.0400" in text
    assert "start-up floor 0.210 s, 0.0400 s above it; ranks use the whole time" in text
    shown = io.StringIO()
    Console(file=shown, width=200).print(submit_command.final_table({**state, "floor": None}))
    assert "above start-up" not in shown.getvalue()


def test_times_hidden_before_the_due_time_are_left_blank_not_shown_as_zero(capsys):
    """An assignment with visibility `verdicts` sends no times (null) to a student before the
    due time: the table must not claim every test ran in 0.000 s."""
    state = {"id": 2, "status": "done", "verdict": "AC", "passed": 1, "score": 10, "time": None,
             "tests": [{"id": "t01", "verdict": "AC", "seconds": None, "time_limit": 10.0}]}
    shown = io.StringIO()
    Console(file=shown, width=200).print(submit_command.final_table(state))
    assert "0.000" not in shown.getvalue() and "time 0.00" not in shown.getvalue()
    submit_command.show_progress(state, set())
    assert "t01: AC" in capsys.readouterr().out


@pytest.mark.slow
def test_the_live_stream_survives_an_api_restart_and_the_table_is_whole(tmp_path, monkeypatch):
    """The API dies while the CLI follows a queued submission; the verdicts are recorded while
    it is down; it comes back on the same port. The CLI reconnects and prints every test."""
    shown = io.StringIO()
    monkeypatch.setattr(submit_command, "console", Console(file=shown, width=200))
    source = tmp_path / "hw4.c"
    source.write_text("int main(void) { return 0; }\n")
    with served(tmp_path / "site") as site:
        token = site.accounts["alice"].headers["Authorization"].split()[1]
        codes: list[int] = []
        cli = threading.Thread(target=lambda: codes.append(main(
            ["submit", str(source), "--server", site.url, "--token", token])))
        cli.start()
        wait_for(lambda: "/events HTTP/1.1" in site.log.read_text(), 30, "the CLI's stream")
        crash(site)
        with site.db() as db:
            sub_id = db.scalar(select(Submission.id))
            assert sub_id is not None
            recording.record_result(db, site.settings, sub_id, 1, judged_result(10, 0.25))
        start(site)
        cli.join(timeout=120)
    assert not cli.is_alive() and codes == [0], shown.getvalue()
    out = shown.getvalue()
    assert "reconnecting" in out
    assert f"submission {sub_id}: AC" in out
    assert all(f"t{i:02d}" in out for i in range(1, 11))


def test_assignment_names_the_board_and_without_it_the_server_says_which(
        settings, db, student, tmp_path, capsys):
    first = assignments.in_term(db, settings.suite)[0]
    db.add(Assignment(term_id=first.term_id, name="challenge", suite="hw4", position=1))
    db.commit()
    source = tmp_path / "hw4.c"
    source.write_text("int main(void) { return 0; }\n")
    token = student.headers["Authorization"].split()[1]
    with live_server(settings) as url:
        unnamed = main(["submit", str(source), "--server", url, "--token", token, "--no-wait"])
        assert unnamed == 1 and "choose one of hw4-mini, challenge" in capsys.readouterr().err
        code = main(["submit", str(source), "--server", url, "--token", token, "--no-wait",
                     "--assignment", "challenge"])
    assert code == 0 and "to challenge on" in capsys.readouterr().out
    assert [s.suite for s in db.scalars(select(Submission))] == ["hw4"]
