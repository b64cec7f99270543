"""Sign-in through the university against a real OpenID provider (panva's oidc-provider, run by
Node beside the tests): the judge served by uvicorn, httpx walking the provider's login and
consent pages as a browser does. Nothing of the protocol is mocked; the attacks change what a
browser would carry (the nonce on the way out, the state on the way back)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from app.core.config import Settings
from app.db.models import AuditLog, User
from tests.app.utils import idp
from tests.app.utils.factories import PASSWORD, Account, make_user
from tests.app.utils.live_server import free_port, live_server

pytestmark = [pytest.mark.slow, idp.needs_node]
CALLBACK = "/login/oidc/callback"


@dataclass
class University:
    """The provider and the port the judge must be served on (its registered redirect URI)."""

    issuer: str  # http://127.0.0.1:PORT
    app_port: int  # the judge's port


@pytest.fixture(scope="module")
def university(tmp_path_factory: pytest.TempPathFactory) -> Iterator[University]:
    """A provider that sends e-mail and profile claims from its userinfo endpoint only."""
    yield from started(tmp_path_factory, claims_in_id_token=False)


@pytest.fixture(scope="module", params=["userinfo", "id-token"])
def any_university(request: pytest.FixtureRequest,
                   tmp_path_factory: pytest.TempPathFactory) -> Iterator[University]:
    """Each way a provider can send the e-mail: from userinfo, or in the ID token itself."""
    yield from started(tmp_path_factory, claims_in_id_token=request.param == "id-token")


def started(tmp_path_factory: pytest.TempPathFactory,
            claims_in_id_token: bool) -> Iterator[University]:
    app_port = free_port()
    log = tmp_path_factory.mktemp("idp") / "provider.log"
    with idp.provider(free_port(), [f"http://127.0.0.1:{app_port}{CALLBACK}"], log,
                      claims_in_id_token) as issuer:
        yield University(issuer, app_port)


def with_oidc(settings: Settings, university: University, **changes: object) -> Settings:
    return settings.model_copy(update={
        "oidc_issuer": university.issuer, "oidc_client_id": idp.CLIENT_ID,
        "oidc_client_secret": idp.CLIENT_SECRET, "oidc_name": "NTU account", **changes})


@pytest.fixture
def judge(settings: Settings, university: University) -> Iterator[str]:
    """The judge with sign-in through the university, matching the roster by e-mail."""
    with live_server(with_oidc(settings, university), port=university.app_port) as url:
        yield url


def browser() -> httpx.Client:
    return httpx.Client(timeout=30, follow_redirects=False)


def test_a_student_signs_in_by_the_email_claim_and_lands_where_they_were_going(
        judge: str, student: Account, db: Session):
    with browser() as b:
        walk = idp.sign_in(b, f"{judge}/login/oidc?next=/scoreboard", "alice-sub")
        assert walk.response.status_code == 303
        assert walk.response.headers["location"] == "/scoreboard"
        assert b.get(f"{judge}/api/auth/me").json()["username"] == "alice"
        page = b.get(f"{judge}/submit").text
        assert "Signed in through NTU account as alice." in page
    assert db.scalar(select(func.count()).select_from(User)) == 1  # nobody was created


def test_the_username_claim_can_be_the_one_matched(settings: Settings, university: University,
                                                   ta: Account):
    chosen = with_oidc(settings, university, oidc_match_claim="preferred_username")
    with live_server(chosen, port=university.app_port) as url, browser() as b:
        walk = idp.sign_in(b, f"{url}/login/oidc", "tara-sub")
        assert walk.response.status_code == 303
        assert b.get(f"{url}/api/auth/me").json() == {
            "username": "tara", "display_name": "Tara", "role": "ta"}


def test_a_person_not_on_the_roster_is_told_to_ask_their_ta_and_no_account_is_made(
        judge: str, student: Account, db: Session):
    with browser() as b:
        walk = idp.sign_in(b, f"{judge}/login/oidc", "mallory-sub")
        assert walk.response.status_code == 403
        assert "you are not on this course&#39;s roster; ask your TA" in walk.response.text
        assert "Sign in with NTU account" in walk.response.text  # the other ways in, at hand
        assert b.get(f"{judge}/api/auth/me").status_code == 401
    assert db.scalar(select(User).where(User.username == "mallory")) is None
    row = db.scalar(select(AuditLog).where(AuditLog.action == "oidc-refused"))
    assert row is not None and row.target == "email mallory@example.edu"


@pytest.mark.parametrize("login", ["eve-sub", "eve-string-sub", "eve-zero-sub",
                                   "eve-missing-sub", "eve-yes-sub"])
def test_an_email_not_verified_as_exactly_true_does_not_match_the_roster(
        settings: Settings, any_university: University, other_student: Account, db: Session,
        login: str):
    """eve's IdP account claims bob's address with `email_verified` false, "false", 0, "true"
    or not at all: only JSON true vouches for it, wherever the provider puts the claims."""
    with (live_server(with_oidc(settings, any_university), port=any_university.app_port) as url,
          browser() as b):
        walk = idp.sign_in(b, f"{url}/login/oidc", login)
        assert walk.response.status_code == 403
        assert "not verified" in walk.response.text
        assert b.get(f"{url}/api/auth/me").status_code == 401
    db.expire_all()
    row = db.scalar(select(AuditLog).where(AuditLog.action == "oidc-refused"))
    assert row is not None and row.target == "email bob@example.edu" and row.detail
    assert "not verified" in row.detail["why"] and row.detail["subject"] == login


@pytest.mark.parametrize("login", ["kelvin-sub", "nul-sub", "zwj-sub"])
def test_an_address_that_only_folds_into_a_members_is_refused(
        settings: Settings, any_university: University, db: Session, login: str):
    """U+212A KELVIN SIGN lower-cases to k, a NUL or a zero-width joiner hides in the middle:
    none of them signs in as kate, and none is a server error."""
    make_user(db, "kate")
    with (live_server(with_oidc(settings, any_university), port=any_university.app_port) as url,
          browser() as b):
        walk = idp.sign_in(b, f"{url}/login/oidc", login)
        assert walk.response.status_code == 403
        assert "cannot be matched to the roster" in walk.response.text
        assert b.get(f"{url}/api/auth/me").status_code == 401
    db.expire_all()
    row = db.scalar(select(AuditLog).where(AuditLog.action == "oidc-refused"))
    assert row is not None and row.detail and row.detail["subject"] == login
    assert "\x00" not in row.target


def test_a_verified_address_in_the_id_token_signs_in(settings: Settings,
                                                     any_university: University,
                                                     student: Account):
    with (live_server(with_oidc(settings, any_university), port=any_university.app_port) as url,
          browser() as b):
        assert idp.sign_in(b, f"{url}/login/oidc", "alice-sub").response.status_code == 303
        assert b.get(f"{url}/api/auth/me").json()["username"] == "alice"


def test_a_changed_nonce_is_refused(judge: str, student: Account):
    """The ID token comes back with a nonce this browser never sent: a replayed token."""
    with browser() as b:
        walk = idp.sign_in(b, f"{judge}/login/oidc", "alice-sub",
                           to_idp=lambda url: with_param(url, nonce="someone-elses-nonce"))
        assert walk.response.status_code == 400
        assert "nonce" in walk.response.text
        assert b.get(f"{judge}/api/auth/me").status_code == 401


def test_a_changed_state_is_refused(judge: str, student: Account):
    with browser() as b:
        walk = idp.sign_in(b, f"{judge}/login/oidc", "alice-sub",
                           to_callback=lambda url: with_param(url, state="forged"))
        assert walk.response.status_code == 400
        assert "started in another browser" in walk.response.text
        assert b.get(f"{judge}/api/auth/me").status_code == 401


def test_a_callback_carried_to_another_browser_or_used_twice_is_refused(judge: str,
                                                                         student: Account):
    """Login CSRF: an attacker's own callback URL, opened in the victim's browser."""
    with browser() as attacker, browser() as victim:
        walk = idp.sign_in(attacker, f"{judge}/login/oidc", "alice-sub",
                           to_callback=lambda url: url)
        assert victim.get(walk.callback).status_code == 400
        assert victim.get(f"{judge}/api/auth/me").status_code == 401
        assert attacker.get(walk.callback).status_code == 400  # the state was used up


def test_a_discovery_document_naming_another_issuer_is_refused(settings: Settings,
                                                               university: University):
    """Configured as localhost, the provider calls itself 127.0.0.1: tokens would be checked
    against the wrong issuer."""
    other = university.issuer.replace("127.0.0.1", "localhost")
    with live_server(with_oidc(settings, university, oidc_issuer=other),
                     port=university.app_port) as url, browser() as b:
        response = b.get(f"{url}/login/oidc")
        assert response.status_code == 502
        assert "misconfigured" in response.text


def test_passwords_keep_working_beside_the_university(judge: str, student: Account):
    with browser() as b:
        assert 'href="/login/oidc?next=/submit"' in b.get(f"{judge}/login").text
        response = b.post(f"{judge}/login", data={"username": "alice", "password": PASSWORD},
                          headers={"origin": judge})
        assert response.status_code == 303
        assert b.get(f"{judge}/api/auth/me").json()["username"] == "alice"


def test_without_an_issuer_there_is_no_button_and_no_route(client, student: Account):
    assert "Sign in with" not in client.get("/login").text
    assert client.get("/login/oidc").status_code == 404
    assert client.get(CALLBACK + "?code=x&state=y").status_code == 404


def test_an_issuer_without_its_client_is_refused_at_start(tmp_path: Path):
    with pytest.raises(ValueError, match="FLASHJUDGE_OIDC_CLIENT_ID"):
        Settings(environment="test", data_dir=tmp_path, oidc_issuer="https://idp.example.edu")


def with_param(url: str, **values: str) -> str:
    parts = urlsplit(url)
    query = dict(parse_qsl(parts.query))
    query.update(values)
    return urlunsplit(parts._replace(query=urlencode(query)))
