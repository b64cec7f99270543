"""The board students want to be on: an alias or off the public board; TAs see
everyone by both names; the public JSON, CSV and page never carry an aliased or hidden
student's real name; aliases are checked with messages a student can act on."""

from __future__ import annotations

from sqlalchemy import select

from app.db.models import Assignment
from app.submissions import recording
from tests.app.utils.factories import judged_result, make_submission, make_user


def judged(db, settings, account, passed: int, seconds: float) -> None:
    sub = make_submission(db, account)
    recording.record_result(db, settings, sub.id, 1, judged_result(passed, seconds))


def public_bytes(client, account) -> str:
    """Everything a student can read of the board: JSON, CSV and the page's table."""
    client.cookies.clear()
    parts = [client.get(url, headers=account.headers).text for url in (
        "/api/scoreboard", "/api/scoreboard.csv", "/partials/scoreboard", "/scoreboard")]
    return "\n".join(parts)


def test_an_alias_replaces_the_real_name_for_everyone_but_tas(client, db, settings, student,
                                                               other_student, ta):
    judged(db, settings, student, 10, 0.5)
    judged(db, settings, other_student, 10, 0.9)
    answer = client.put("/api/scoreboard/me", headers=student.headers,
                        json={"alias": "Flash  Gordon"})
    assert answer.status_code == 200
    assert answer.json() | {} == {"on_board": True, "of": 2, "hidden": False,
                                  "alias": "Flash Gordon", "rank": 1, "rank_label": "1",
                                  "score": 60.0, "shown_as": "Flash Gordon"}
    seen = public_bytes(client, other_student)
    assert "Flash Gordon" in seen and student.username not in seen
    assert student.username.title() not in seen  # nor the display name (a tooltip)
    rows = client.get("/api/scoreboard", headers=ta.headers).json()["rows"]
    assert (rows[0]["user"], rows[0]["alias"], rows[0]["display_name"]) == (
        student.username, "Flash Gordon", student.username.title())
    client.cookies.clear()
    assert "as &ldquo;Flash Gordon&rdquo;" in client.get("/partials/scoreboard",
                                                          headers=ta.headers).text
    client.cookies.clear()
    mine = client.get("/partials/scoreboard", headers=student.headers).text
    assert 'data-user="Flash Gordon" class="mine"' in mine and "(you)" in mine


def test_a_hidden_student_is_off_the_public_board_but_sees_their_rank(client, db, settings,
                                                                      student, other_student,
                                                                      ta):
    judged(db, settings, student, 10, 0.5)
    judged(db, settings, other_student, 10, 0.9)
    client.put("/api/scoreboard/me", headers=student.headers, json={"hidden": True})
    seen = public_bytes(client, other_student)
    assert student.username not in seen and student.username.title() not in seen
    rows = client.get("/api/scoreboard", headers=other_student.headers).json()["rows"]
    assert [(r["rank"], r["user"]) for r in rows] == [(2, other_student.username)]
    me = client.get("/api/scoreboard/me", headers=student.headers).json()
    assert (me["rank_label"], me["hidden"], me["shown_as"]) == ("1", True, None)
    client.cookies.clear()
    page = client.get("/scoreboard", headers=student.headers).text
    assert "You opted out of the public board; only you and the TAs see your rank 1 of 2" in page
    ta_rows = client.get("/api/scoreboard", headers=ta.headers).json()["rows"]
    assert [(r["user"], r["hidden"]) for r in ta_rows] == [
        (student.username, True), (other_student.username, False)]
    ta_csv = client.get("/api/scoreboard.csv", headers=ta.headers).text
    assert student.username in ta_csv and ta_csv.splitlines()[0].endswith("display_name,hidden")


def test_aliases_are_checked_with_a_message_to_act_on(client, db, settings, student,
                                                      other_student):
    make_user(db, "carol")

    def refused(alias: str) -> tuple[int, str]:
        answer = client.put("/api/scoreboard/me", headers=student.headers, json={"alias": alias})
        return answer.status_code, answer.json()["detail"]

    assert refused("ab") == (422, "alias: 3 to 24 characters, not 2")
    assert refused("x" * 25)[1] == "alias: 3 to 24 characters, not 25"
    assert refused("<b>bold</b>")[1].startswith("alias: use letters, digits, spaces and . _ -")
    assert refused("=HYPERLINK")[0] == 422  # no spreadsheet formula either
    assert refused("CAROL")[0] == 409  # another user's username, in any case
    assert refused("B.o.b")[0] == 409  # another user's display name, punctuation aside
    assert "belongs to another user" in refused("Carol")[1]
    client.put("/api/scoreboard/me", headers=other_student.headers, json={"alias": "Nova"})
    assert refused("nova")[0] == 409  # another student's alias
    ok = client.put("/api/scoreboard/me", headers=student.headers, json={"alias": "Zoë 42"})
    assert ok.status_code == 200 and ok.json()["alias"] == "Zoë 42"
    cleared = client.put("/api/scoreboard/me", headers=student.headers, json={"alias": " "})
    assert cleared.json()["alias"] is None


def test_the_account_page_sets_the_alias_and_shows_errors(client, db, settings, student,
                                                          other_student):
    client.cookies.clear()
    page = client.get("/account", headers=student.headers).text
    assert 'id="board-form"' in page and 'name="alias"' in page
    sent = client.post("/account/board", headers=student.headers,
                       data={"alias": other_student.username})
    assert "belongs to another user" in sent.text and 'role="alert"' in sent.text
    sent = client.post("/account/board", headers=student.headers,
                       data={"alias": "Comet", "hidden": "1"})
    assert "You are off the public scoreboard." in sent.text and "checked" in sent.text
    me = client.get("/api/scoreboard/me", headers=student.headers).json()
    assert (me["alias"], me["hidden"]) == ("Comet", True)


def test_a_look_alike_of_a_classmates_name_is_refused(client, db, settings, student,
                                                      other_student):
    """alice cannot show as bob (or carol) with letters that only look like theirs."""
    make_user(db, "carol")

    def answer(alias: str) -> tuple[int, str]:
        put = client.put("/api/scoreboard/me", headers=student.headers, json={"alias": alias})
        return put.status_code, put.json().get("detail", "")

    mixed = answer("B\u043eb")  # Latin B and b around a Cyrillic о
    assert mixed == (422, "alias: write it in one script, not a mix of cyrillic, latin letters "
                          "(mixed, a name can pass for someone else's)")
    assert answer("\u0391\u0399ice")[0] == 422  # Greek Alpha and Iota before Latin "ice"
    for look_alike in ("\u0412\u043e\u0432",  # all Cyrillic: Вов
                       "B0b", "\uff42\uff4f\uff42",  # a zero; full-width letters
                       "CaroI", "Caro1"):  # a capital I or a one for the l
        assert answer(look_alike)[0] == 409, look_alike
    assert answer("山田たろう")[0] == 200  # Han with Hiragana is one writing
    assert answer("Zoë 42")[0] == 200


def test_my_place_is_on_the_board_of_the_assignment_named(client, db, settings, student, ta):
    """`?assignment=` was ignored: a student on the challenge's board read "not on the board"."""
    created = client.post("/api/admin/assignments", headers=ta.headers,
                          json={"name": "challenge", "suite": settings.suite})
    assert created.status_code == 201, created.text
    sub = make_submission(db, student)
    sub.assignment_id = db.scalar(select(Assignment.id).where(Assignment.name == "challenge"))
    db.commit()
    recording.record_result(db, settings, sub.id, 1, judged_result(10, 0.5))
    default = client.get("/api/scoreboard/me", headers=student.headers).json()
    named = client.get("/api/scoreboard/me", headers=student.headers,
                       params={"assignment": "challenge"}).json()
    assert (default["on_board"], named["on_board"], named["rank"]) == (False, True, 1)
    missing = client.get("/api/scoreboard/me", headers=student.headers,
                         params={"assignment": "hw9"})
    assert missing.status_code == 404 and "hw9" in missing.json()["detail"]
