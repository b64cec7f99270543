"""A TA's course setup: assignments created and changed through /api/admin with
every rule checked by field, exported and imported as TOML or JSON (never the secret seed),
one board per assignment, and terms: an archived term is read-only for every write while its
boards stay readable by TAs, and the next term starts with the same assignments and no
submissions."""

from __future__ import annotations

import pytest

from app.db.models import Submission
from app.submissions import recording
from tests.app.pages.test_pages import HTML, login
from tests.app.utils.factories import judged_result, live_worker

C = ("hw4.c", b"int main(void) { return 0; }\n")
CHALLENGE = {"name": "challenge", "title": "Kernel challenge", "suite": "hw4",
             "languages": ["cuda-kernel", "c-program"], "due_at": "2026-12-10T23:59+08:00",
             "late_policy": "penalty", "penalty_per_day": 10, "penalty_cap": 50,
             "visibility": "verdicts", "hidden_tests": True, "position": 1}


def submit(client, account, assignment=None):
    data = {"language": "c-program"} | ({"assignment": assignment} if assignment else {})
    response = client.post("/api/submissions", headers=account.headers, data=data,
                           files=[("files", C)])
    assert response.status_code == 202, response.text
    return response.json()["id"]


def test_a_ta_creates_changes_exports_and_imports_an_assignment(client, db, ta):
    made = client.post("/api/admin/assignments", headers=ta.headers, json=CHALLENGE)
    assert made.status_code == 201, made.text
    assert (made.json()["hidden_tests"], made.json()["term"]) == (True, "current")
    toml = client.get("/api/admin/assignments/challenge/export", headers=ta.headers).json()
    assert 'name = "challenge"' in toml["text"] and "hidden_tests = true" in toml["text"]
    assert "seed" not in toml["text"]
    assert 'due_at = "2026-12-10T15:59:00Z"' in toml["text"]
    again = client.post("/api/admin/assignments", headers=ta.headers, json=CHALLENGE)
    assert again.status_code == 409
    changed = toml["text"].replace('visibility = "verdicts"', 'visibility = "none"')
    imported = client.post("/api/admin/assignments/import", headers=ta.headers,
                           json={"format": "toml", "text": changed})
    assert imported.json()["visibility"] == "none"
    as_json = client.get("/api/admin/assignments/challenge/export", headers=ta.headers,
                         params={"format": "json"}).json()["text"]
    copy = as_json.replace('"challenge"', '"challenge-2"')
    assert client.post("/api/admin/assignments/import", headers=ta.headers,
                       json={"format": "json", "text": copy}).status_code == 200
    names = [a["name"] for a in client.get("/api/admin/assignments",
                                           headers=ta.headers).json()]
    assert names == ["hw4-mini", "challenge", "challenge-2"]


def test_bad_configurations_are_refused_naming_what_to_fix(client, ta):
    def refused(text, fmt="toml"):
        response = client.post("/api/admin/assignments/import", headers=ta.headers,
                               json={"format": fmt, "text": text})
        assert response.status_code == 422, response.text
        return response.json()["detail"]

    assert refused('name = "x"\nsuite = "hw9"') .startswith("suite: unknown suite 'hw9'")
    assert refused('name = "x"\nvisiblity = "none"') == (
        "TOML file: unknown key(s) visiblity; the keys are name, title, suite, languages, "
        "open, position, due_at, late_policy, penalty_per_day, penalty_cap, gpu_model, "
        "visibility, hidden_tests, libraries_allowed")
    assert refused('name = "x"\nopen = "yes"') == "TOML file: open must be bool, not str"
    assert refused('name = "x"\nvisibility = "later"').startswith(
        "visibility must be one of all, verdicts, none")
    assert refused('name = "x"\nlanguages = ["fortran"]').startswith(
        "languages: unknown fortran")
    assert refused('name = "x"\ndue_at = "2026-12-01T23:59"').startswith(
        "due_at: '2026-12-01T23:59' has no UTC offset")
    assert refused('name = "a b"').startswith("name 'a b': letters, digits")
    assert refused("name = ").startswith("not valid TOML")
    assert refused('{"title": "no name"}', "json") == "JSON file: name is missing"


def test_each_assignment_has_its_own_board(client, db, settings, student, ta):
    live_worker(db)
    client.post("/api/admin/assignments", headers=ta.headers,
                json={"name": "practice", "suite": "hw4-mini", "position": 1})
    first = submit(client, student, settings.suite)
    recording.record_result(db, settings, first, 1, judged_result(3, 0.5, 3))
    board = client.get("/api/scoreboard", headers=student.headers).json()
    assert [r["user"] for r in board["rows"]] == ["alice"]
    practice = client.get("/api/scoreboard", params={"assignment": "practice"},
                          headers=student.headers).json()
    assert practice["rows"] == []
    client.post("/api/admin/scoreboard/freeze", params={"assignment": "practice"},
                headers=ta.headers)
    second = submit(client, student, "practice")
    recording.record_result(db, settings, second, 1, judged_result(2, 0.5, 3))
    assert client.get("/api/scoreboard", params={"assignment": "practice"},
                      headers=student.headers).json()["rows"] == []  # frozen before it
    assert client.get("/api/scoreboard", headers=student.headers).json()["rows"][0][
        "passed"] == 3  # the other board is not frozen and did not move


def test_an_archived_term_is_read_only_and_the_next_starts_empty(client, db, settings,
                                                                  student, ta):
    live_worker(db)
    client.post("/api/admin/assignments", headers=ta.headers, json=CHALLENGE)
    sub_id = submit(client, student, settings.suite)
    busy = client.post("/api/admin/terms/archive", headers=ta.headers)
    assert busy.status_code == 409 and "still queued or running" in busy.json()["detail"]
    recording.record_result(db, settings, sub_id, 1, judged_result(3, 0.5, 3))
    started = client.post("/api/admin/terms", headers=ta.headers, json={"name": "spring"})
    assert started.status_code == 201, started.text
    assert started.json()["assignments"] == ["hw4-mini", "challenge"]
    terms = client.get("/api/admin/terms", headers=ta.headers).json()
    assert [(t["name"], t["current"], t["archived_at"] is not None) for t in terms] == [
        ("spring", True, False), ("current", False, True)]
    writes = [client.post(f"/api/admin/submissions/{sub_id}/rejudge", headers=ta.headers),
              client.post(f"/api/admin/submissions/{sub_id}/cancel", headers=ta.headers)]
    assert [w.status_code for w in writes] == [409, 409]
    assert "term current is archived" in writes[0].json()["detail"]
    old = client.get("/api/scoreboard", headers=ta.headers,
                     params={"term": "current", "assignment": settings.suite}).json()
    assert [r["user"] for r in old["rows"]] == ["alice"]  # still readable by TAs
    assert client.get("/api/scoreboard", headers=student.headers).json()["rows"] == []
    new_id = submit(client, student, settings.suite)
    db.expire_all()
    new_sub, old_sub = db.get(Submission, new_id), db.get(Submission, sub_id)
    assert new_sub.assignment.term.name == "spring" and old_sub.assignment.term.name == "current"
    listed = client.get("/api/admin/assignments", headers=ta.headers).json()
    assert [(a["name"], a["submissions"], a["hidden_tests"]) for a in listed] == [
        ("hw4-mini", 1, False), ("challenge", 0, True)]


def test_similarity_compares_within_the_named_assignments_suite(client, ta):
    client.post("/api/admin/assignments", headers=ta.headers,
                json={"name": "challenge", "suite": "hw4", "position": 1})
    there = client.get("/api/similarity/pairs", params={"assignment": "challenge"},
                       headers=ta.headers)
    assert there.status_code == 200 and there.json()["suite"] == "hw4"
    assert client.get("/api/similarity/pairs", headers=ta.headers).json()["suite"] == "hw4-mini"
    missing = client.get("/api/similarity/pairs", params={"assignment": "nope"},
                         headers=ta.headers)
    assert missing.status_code == 404


@pytest.mark.parametrize(("fmt", "text"), [
    ("json", "[" * 100_000 + "]" * 100_000),
    ("json", '{"name": ' + '{"a": ' * 50_000 + "1" + "}" * 50_000 + "}"),
    ("toml", "name = " + "[" * 100_000 + "]" * 100_000),
    ("toml", "name = " + "{a = " * 50_000 + "1" + "}" * 50_000),
    ("toml", "name." + ".".join(["a"] * 5_000) + " = 1"),  # dotted keys: tables, no brackets
])
def test_a_deeply_nested_configuration_is_refused_not_a_server_error(client, ta, fmt, text):
    response = client.post("/api/admin/assignments/import", headers=ta.headers,
                           json={"format": fmt, "text": text})
    assert response.status_code == 422, response.text[:300]
    assert response.json() == {"detail": f"{fmt.upper()}: nested deeper than 8 levels of arrays "
                                          "or tables; a configuration needs far fewer",
                               "field": "file"}


def test_brackets_inside_strings_and_comments_are_not_nesting(client, ta):
    text = ('name = "deep"  # [[[[[[[[[[[[ a comment\n'
            'title = "[[[[[[[[[[[[ {{{{{{{{{{ \\" [[[[[[[[["\n')
    response = client.post("/api/admin/assignments/import", headers=ta.headers,
                           json={"format": "toml", "text": text})
    assert response.status_code == 200, response.text


def test_an_archived_terms_board_is_a_page_and_a_term_can_be_renamed(client, db, settings,
                                                                      student, ta):
    """The first term is made as "current": a TA renames it, and reads its board as a page
    (it was a JSON link only; the page's ?term= showed the new term's empty board)."""
    live_worker(db)
    sub_id = submit(client, student, settings.suite)
    recording.record_result(db, settings, sub_id, 1, judged_result(3, 0.5, 3))
    renamed = client.post("/api/admin/terms/current/rename", headers=ta.headers,
                          json={"name": "2026-fall"})
    assert renamed.status_code == 200 and renamed.json()["name"] == "2026-fall"
    taken = client.post("/api/admin/terms/2026-fall/rename", headers=ta.headers,
                        json={"name": "bad name"})
    assert taken.status_code == 422 and taken.json()["field"] == "name"
    assert client.post("/api/admin/terms/2026-fall/rename", headers=student.headers,
                       json={"name": "x"}).status_code == 403
    client.post("/api/admin/terms", headers=ta.headers, json={"name": "2027-spring"})
    login(client, ta)
    page = client.get("/scoreboard", headers=HTML, params={"term": "2026-fall"}).text
    assert "alice" in page and "Term 2026-fall is archived" in page
    assert 'href="/scoreboard?term=2026-fall"' in page  # the term tabs
    assert "/partials/scoreboard?term=2026-fall" in page  # its refreshes stay on that term
    now = client.get("/scoreboard", headers=HTML).text
    assert "alice" not in now and "is archived" not in now
    client.cookies.clear()
    login(client, student)  # students see the current term's board, whatever they ask
    theirs = client.get("/scoreboard", headers=HTML, params={"term": "2026-fall"}).text
    assert "is archived" not in theirs and 'id="term-tabs"' not in theirs
    audit = client.get("/api/admin/audit", headers=ta.headers).json()
    assert any(e["action"] == "term-rename" and e["target"] == "2026-fall"
               for e in audit["entries"])
