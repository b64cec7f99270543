"""`flashjudge submit` refuses a file the server would refuse for its size, before sending it,
saying the server's limit."""

from __future__ import annotations

from sqlalchemy import func, select

from app.db.models import Submission
from flashjudge.contract import MAX_FILE_BYTES
from flashjudge_cli.main import main
from tests.app.utils.live_server import live_server


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
