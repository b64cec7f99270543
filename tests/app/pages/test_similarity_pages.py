"""The TAs' similarity pages: the pair list, the sources, one pair side by side."""

from __future__ import annotations

from tests.app.pages.test_pages import HTML, login
from tests.app.utils.factories import make_user
from tests.app.utils.similar import (  # noqa: F401 - fresh_index is a fixture
    COPY,
    STARTER,
    TILED,
    fresh_index,
    submit,
    upload,
)


def test_the_list_shows_the_copy_and_links_the_side_by_side_view(client, db, settings, ta):
    alice, bob = make_user(db, "alice"), make_user(db, "bob")
    a = submit(db, settings, alice, TILED, passed=10)
    b = submit(db, settings, bob, COPY)
    upload(db, settings, "base", "seq-flashattention.c", STARTER)
    login(client, ta)
    page = client.get("/similarity", headers=HTML).text
    assert "3 documents compared" in page and "waiting for fingerprints" not in page
    row = page[page.index('<tr data-a='):]
    row = row[:row.index("</tr>")]
    assert "alice" in row and "bob" in row and f"#{a}</a>" in row and "latest, best" in row
    assert f'/similarity/compare?a=s{a}&amp;b=s{b}"' in row or \
        f'/similarity/compare?a=s{b}&amp;b=s{a}"' in row
    assert '<td>seq-flashattention.c</td><td>base</td>' in page
    side = client.get("/similarity/compare", params={"a": f"s{a}", "b": f"s{b}"},
                      headers=HTML).text
    assert "alice and bob:" in side and "shared passage" in side
    assert side.count('data-passage="1"') >= 2  # passage 1 on both sides
    assert "flash_kernel" in side and "fa_forward" in side  # both texts, as submitted


def test_students_cannot_open_the_pages(client, db, settings, student):
    login(client, student)
    for path in ("/similarity", "/similarity/compare?a=s1&b=s2"):
        response = client.get(path, headers=HTML)
        assert response.status_code == 403 and "only TAs" in response.text, path


def test_missing_fingerprints_are_shown_with_a_way_to_ask_again(client, db, settings, ta):
    submit(db, settings, make_user(db, "alice"), TILED, fingerprint=False)
    login(client, ta)
    page = client.get("/similarity", headers=HTML).text
    assert "1 waiting for fingerprints" in page and "fingerprint-missing" in page
    assert "No similar pairs: fewer than two documents" in page
