"""Similarity for TAs over the API: pairs, passages, sources, on both backends."""

from __future__ import annotations

from app.similarity.suite_index import suite_index
from tests.app.similarity.variants import line_of
from tests.app.utils.factories import make_user
from tests.app.utils.queued import waiting
from tests.app.utils.similar import (  # noqa: F401 - fresh_index is a fixture
    COPY,
    NAIVE,
    STARTER,
    TILED,
    fresh_index,
    submit,
    upload,
)


def pairs(client, ta, **params) -> dict:
    response = client.get("/api/similarity/pairs", headers=ta.headers, params=params)
    assert response.status_code == 200, response.text
    return response.json()


def who(pair: dict) -> tuple[str, str]:
    return pair["a"]["who"], pair["b"]["who"]


def test_a_disguised_copy_tops_the_list_and_independent_work_does_not(client, db, settings, ta):
    alice, bob, carol = (make_user(db, n) for n in ("alice", "bob", "carol"))
    upload(db, settings, "base", "seq-flashattention.c", STARTER)  # their shared I/O code
    a = submit(db, settings, alice, TILED, passed=10)
    b = submit(db, settings, bob, COPY, passed=10)
    submit(db, settings, carol, NAIVE, passed=10)
    body = pairs(client, ta)
    assert body["documents"] == 4 and body["waiting"] == 0 and body["suite"] == settings.suite
    top = body["pairs"][0]
    assert set(who(top)) == {"alice", "bob"} and top["score"] > 0.8
    assert {top["a"]["submission_id"], top["b"]["submission_id"]} == {a, b}
    assert top["a"]["roles"] == ["latest", "best"]
    assert all(p["score"] < 0.1 for p in body["pairs"] if "carol" in who(p))


def test_starter_code_uploaded_as_base_is_nobodys_copy(client, db, settings, ta):
    alice, bob = make_user(db, "alice"), make_user(db, "bob")
    submit(db, settings, alice, STARTER + NAIVE)
    submit(db, settings, bob, STARTER + TILED)
    shared = max((p["score"] for p in pairs(client, ta)["pairs"]), default=0.0)
    assert shared > 0.4  # the starter code alone makes them look alike
    upload(db, settings, "base", "seq-flashattention.c", STARTER)
    assert max((p["score"] for p in pairs(client, ta)["pairs"]), default=0.0) < 0.2


def test_a_copy_of_a_public_source_is_reported_against_it(client, db, settings, ta):
    alice = make_user(db, "alice")
    sub = submit(db, settings, alice, COPY)
    source = upload(db, settings, "public", "last-year-tiled.cu", TILED)
    [top] = pairs(client, ta, limit=1)["pairs"]
    assert top["a"]["doc_id"] == f"s{sub}" and top["b"]["doc_id"] == f"p{source}"
    assert top["b"]["kind"] == "public" and top["b"]["who"] == "last-year-tiled.cu"


def test_only_the_latest_and_the_best_are_compared_and_never_with_each_other(client, db,
                                                                              settings, ta):
    alice, bob = make_user(db, "alice"), make_user(db, "bob")
    old = submit(db, settings, alice, TILED, passed=3)
    best = submit(db, settings, alice, TILED, passed=10)
    latest = submit(db, settings, alice, TILED, passed=5)
    body = pairs(client, ta)
    assert body["documents"] == 2 and body["pairs"] == []  # one owner: no pair
    submit(db, settings, bob, COPY)
    found = {d["doc_id"] for p in pairs(client, ta)["pairs"] for d in (p["a"], p["b"])
             if d["who"] == "alice"}
    assert found == {f"s{best}", f"s{latest}"}
    gone = client.get(f"/api/similarity/pairs/s{old}/s{latest}", headers=ta.headers)
    assert gone.status_code == 404 and gone.json()["field"] == "a"


def test_the_index_follows_new_submissions_incrementally(client, db, settings, ta):
    alice, bob = make_user(db, "alice"), make_user(db, "bob")
    upload(db, settings, "base", "seq-flashattention.c", STARTER)
    submit(db, settings, alice, TILED)
    first = submit(db, settings, bob, NAIVE)
    assert all(p["score"] < 0.1 for p in pairs(client, ta)["pairs"])
    state = suite_index(settings.db_url, settings.suite)
    version = state.version
    copied = submit(db, settings, bob, COPY)  # bob's latest is now a copy; the naive one leaves
    [top] = pairs(client, ta, limit=1)["pairs"]
    assert f"s{copied}" in (top["a"]["doc_id"], top["b"]["doc_id"]) and top["score"] > 0.8
    assert f"s{first}" not in state.docs and state.version == version + 1
    pairs(client, ta)
    assert state.version == version + 1  # nothing changed: nothing recomputed


def test_the_passages_point_at_the_copied_lines(client, db, settings, ta):
    alice, bob = make_user(db, "alice"), make_user(db, "bob")
    a = submit(db, settings, alice, TILED)
    b = submit(db, settings, bob, COPY)
    body = client.get(f"/api/similarity/pairs/s{a}/s{b}", headers=ta.headers).json()
    assert body["pair"]["score"] > 0.8 and body["passages"]
    kernel_a = line_of(TILED, "__global__ void flash_kernel") + 1  # +1: the file header line
    kernel_b = line_of(COPY, "__global__ void fa_forward") + 1
    assert any(p["a_first"] <= kernel_a + 5 and p["a_last"] >= kernel_a + 5
               and p["b_first"] <= kernel_b + 5 and p["b_last"] >= kernel_b + 5
               for p in body["passages"])
    bad = client.get(f"/api/similarity/pairs/x{a}/s{b}", headers=ta.headers)
    assert bad.status_code == 422 and bad.json()["field"] == "a"


def test_sources_are_uploaded_checked_and_removed(client, db, settings, ta):
    response = client.post("/api/similarity/sources", headers=ta.headers,
                           data={"kind": "public"},
                           files={"file": ("last-year.cu", TILED.encode())})
    assert response.status_code == 201, response.text
    source = response.json()
    assert (source["name"], source["kind"], source["fingerprinted"]) == (
        "last-year.cu", "public", False)
    asked = [k["payload"] for t, k in waiting(settings, "control") if t == "flashjudge.fingerprint"]
    assert asked == [{"submission_id": None, "source_id": source["id"]}]
    for data, file, field in (({"kind": "secret"}, ("x.cu", b"int x;"), "kind"),
                              ({"kind": "base"}, ("x.cu", b"\xff\xfe"), "file"),
                              ({"kind": "base"}, ("x.cu", b"  \n"), "file")):
        refused = client.post("/api/similarity/sources", headers=ta.headers, data=data,
                              files={"file": file})
        assert refused.status_code == 422 and refused.json()["field"] == field
    listed = client.get("/api/similarity/sources", headers=ta.headers).json()
    assert [s["id"] for s in listed] == [source["id"]]
    assert client.delete(f"/api/similarity/sources/{source['id']}",
                         headers=ta.headers).json() == {"id": source["id"]}
    assert client.get("/api/similarity/sources", headers=ta.headers).json() == []


def test_documents_without_fingerprints_wait_and_can_be_asked_for_again(client, db, settings,
                                                                       ta):
    alice = make_user(db, "alice")
    sub = submit(db, settings, alice, TILED, fingerprint=False)
    assert pairs(client, ta)["waiting"] == 1
    assert client.post("/api/similarity/fingerprint-missing",
                       headers=ta.headers).json() == {"sent": 1}
    asked = [k["payload"] for t, k in waiting(settings, "control") if t == "flashjudge.fingerprint"]
    assert asked == [{"submission_id": sub, "source_id": None}]


def test_students_are_refused(client, student):
    for method, path in (("get", "/api/similarity/pairs"), ("get", "/api/similarity/sources"),
                         ("post", "/api/similarity/fingerprint-missing")):
        response = getattr(client, method)(path, headers=student.headers)
        assert response.status_code == 403, path
