"""Browsers ask every site for /favicon.ico: it answers an icon, and every page links one."""

from __future__ import annotations

from tests.app.pages.test_pages import HTML


def test_the_favicon_is_served_and_linked(client):
    icon = client.get("/favicon.ico")
    assert icon.status_code == 200 and icon.headers["content-type"] == "image/x-icon"
    assert icon.content[:4] == b"\x00\x00\x01\x00"  # an ICO file's header
    page = client.get("/login", headers=HTML).text
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in page
    assert client.get("/static/favicon.svg").headers["content-type"].startswith("image/svg")
