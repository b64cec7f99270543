"""Settings: environment variables with the FLASHJUDGE_ prefix, safe defaults, no default secret."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from app.core.config import Settings


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
    with pytest.raises(ValidationError, match="FLASHJUDGE_SECRET_KEY must be set"):
        Settings(environment="production")
    assert Settings(environment="production", secret_key="x" * 32).secret_key == "x" * 32
    assert Settings(environment="development", data_dir=Path("d")).secret_key
