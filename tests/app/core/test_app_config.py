"""Settings: environment variables with the FLASHJUDGE_ prefix, safe defaults, no default secret."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest
from pydantic import ValidationError

from app.core.config import DEV_SECRET, SAMPLE_SECRET_OK, Settings

ENVIRONMENTS = get_args(Settings.model_fields["environment"].annotation)


def test_defaults_put_sqlite_under_the_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("FLASHJUDGE_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("FLASHJUDGE_DATABASE_URL", raising=False)
    settings = Settings()
    assert settings.db_url == f"sqlite:///{tmp_path.resolve() / 'flashjudge.db'}"
    assert settings.broker_url is None  # the embedded broker


def test_environment_variables_override(monkeypatch):
    monkeypatch.setenv("FLASHJUDGE_DATABASE_URL", "postgresql+psycopg://db/fj")
    monkeypatch.setenv("FLASHJUDGE_SUBMIT_INTERVAL_S", "5")
    monkeypatch.setenv("FLASHJUDGE_JUDGE_TESTS", "t01, t02")
    settings = Settings()
    assert settings.db_url == "postgresql+psycopg://db/fj"
    assert settings.submit_interval_s == 5.0
    assert settings.judge_test_ids == ["t01", "t02"]


def test_the_default_secret_is_refused_in_production():
    with pytest.raises(ValidationError, match="FLASHJUDGE_SECRET_KEY") as refused:
        Settings(environment="production")
    assert "openssl rand -hex 32" in str(refused.value)
    assert Settings(environment="production", secret_key="x" * 32).secret_key == "x" * 32
    assert Settings(environment="development", data_dir=Path("d")).secret_key


@pytest.mark.parametrize("secret", [DEV_SECRET, "change-me-session-signing-key",
                                    "please-CHANGE-ME-later"])
def test_a_sample_secret_is_refused_outside_development_and_tests(secret):
    """.env.example's placeholder, left in a deployment's .env, must not sign real sessions."""
    for environment in ("production", *(e for e in ENVIRONMENTS if e not in SAMPLE_SECRET_OK)):
        with pytest.raises(ValidationError, match="FLASHJUDGE_SECRET_KEY"):
            Settings(environment=environment, secret_key=secret)
    for environment in SAMPLE_SECRET_OK:
        assert Settings(environment=environment, secret_key=secret).secret_key == secret


def test_every_environment_is_either_guarded_or_a_sample_one():
    """A new environment (say "staging") is refused a sample key unless listed on purpose."""
    assert set(SAMPLE_SECRET_OK) == {"development", "test"}
    assert "production" in ENVIRONMENTS and set(SAMPLE_SECRET_OK) < set(ENVIRONMENTS)


def test_the_environment_variable_is_what_is_checked(monkeypatch):
    monkeypatch.setenv("FLASHJUDGE_ENVIRONMENT", "production")
    monkeypatch.setenv("FLASHJUDGE_SECRET_KEY", "change-me-session-signing-key")
    with pytest.raises(ValidationError, match="FLASHJUDGE_ENVIRONMENT=production"):
        Settings()
    monkeypatch.setenv("FLASHJUDGE_SECRET_KEY", "0f" * 32)
    assert Settings().environment == "production"


def test_the_course_time_zone_is_utc_unless_named_and_a_wrong_name_is_refused(monkeypatch):
    assert Settings().course_zone.key == "UTC"
    monkeypatch.setenv("FLASHJUDGE_COURSE_TIMEZONE", "Asia/Taipei")
    assert Settings().course_zone.key == "Asia/Taipei"
    monkeypatch.setenv("FLASHJUDGE_COURSE_TIMEZONE", "Taipei+8")
    with pytest.raises(ValidationError, match="FLASHJUDGE_COURSE_TIMEZONE: unknown time zone "
                                              "'Taipei\\+8'; use an IANA name"):
        Settings()
