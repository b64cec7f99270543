"""Service settings: one pydantic-settings class read from FLASHJUDGE_* environment variables.

Built through the cached `get_settings()` so nothing happens at import time and tests can swap
the environment and call `get_settings.cache_clear()`.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DEV_SECRET = "dev-insecure-secret-change-me"
SAMPLE_SECRET_OK = ("development", "test")  # environments that may sign with a sample key

def is_sample_secret(value: str) -> bool:
    """Whether a secret key is one anybody can read: the built-in key, or a placeholder such
    as .env.example's `change-me-session-signing-key` left unreplaced."""
    return value == DEV_SECRET or "change-me" in value.lower()


class Settings(BaseSettings):
    """Everything the service reads from its environment."""

    model_config = SettingsConfigDict(env_prefix="FLASHJUDGE_", extra="ignore")

    environment: Literal["development", "test", "production"] = "development"
    data_dir: Path = Path("data")
    database_url: str | None = None  # default: sqlite under data_dir (WAL)
    broker_url: str | None = None  # default: kombu filesystem transport under data_dir
    secret_key: str = DEV_SECRET
    suite: str = "hw4"
    submit_interval_s: float = Field(30.0, ge=0)  # per-user minimum gap between submissions
    max_input_bytes: int = 1100 * 1024 * 1024  # custom-run uploads (t12 is ~944 MB)
    session_max_age_s: int = 12 * 3600
    token_max_age_s: int = 12 * 3600  # OAuth2 password-flow tokens
    queued_timeout_s: float = 1800.0  # re-send a submission queued this long (same attempt)
    running_timeout_s: float = 120.0  # a running one with no heartbeat this long may be lost
    max_attempts: int = 3  # system errors reported by workers before a submission ends as SE
    max_lost_attempts: int = Field(10, ge=1)  # judgings lost (worker died) before SE
    sweep_interval_s: float = 15.0  # 0 turns the in-process sweeper (and broker watch) off
    broker_check_s: float = Field(5.0, ge=0)  # how often queued work is looked for in the
    # broker (app/upkeep/broker_watch.py; 0: off, lost messages wait for queued_timeout_s)
    broker_loss_wait_s: float = Field(15.0, ge=0)  # a lost message is re-sent after this: more
    # than the workers' heartbeat_s, so a worker judging it has claimed it again by then
    custom_run_queue: str = "gpu"  # "gpu" or "cpu": custom runs wait on custom-gpu/custom-cpu
    custom_runs_per_hour: int = Field(5, ge=0)  # per student (TAs exempt); 0: no limit
    custom_run_time_limit_s: float = Field(120.0, gt=0)  # the reference computation at most
    custom_run_keep_h: float = Field(24.0, gt=0)  # a custom run's files are deleted after this
    custom_run_disk_per_student_gb: float = Field(3.0, ge=0)  # what one student's unexpired
    # runs may keep (uploads and reference outputs; TAs exempt); 0: no limit
    custom_run_disk_total_gb: float = Field(30.0, ge=0)  # what all runs together may keep
    default_language: str = "cuda-program"  # preselected on the submit page
    admin_password: str | None = None  # first start with no users: the "admin" TA's password
    judge_tests: str = ""  # comma-separated test ids to judge (quick checks, CI); empty: all
    migrate_on_start: bool = True  # run the Alembic migrations when the app starts
    freeze_gc_at_start: bool = True  # start-up's objects out of the collector's sight (pauses)
    public_name: str = "flashjudge"
    course_name: str = "flashjudge"  # first part of downloaded files' names, e.g. CS-5xx
    course_timezone: str = "UTC"  # IANA name, e.g. Asia/Taipei: pages show times in it
    refine_timing: bool = True  # after the verdicts, re-run passed tests for times to rank by
    paired_budget_s: float = 300.0  # GPU seconds one paired comparison of two neighbours may hold
    paired_margin: float = 0.01  # two totals within this share of each other are tied (1%)
    paired_on_freeze: bool = True  # freezing the board starts the paired comparisons
    paired_least_band: float = 0.04  # a total's band is at least this share of it (pairs to run)
    slurm_autoscale: bool = False  # submit worker jobs to Slurm when judgings wait (opt-in;
    # app/upkeep/slurm_scaler.py; the app's host needs sbatch, squeue and scancel)
    slurm_script: Path = Path("deploy/slurm/flashjudge-worker.sbatch")  # the jobs' sbatch script
    slurm_sbatch_args: str = ""  # sbatch options for every job, e.g. "--partition=gpu
    # --account=cs101 --time=4:00:00" (they win over the script's #SBATCH lines)
    slurm_gpu_gres: str = "gpu:1"  # --gres of a job for the gpu queue (a cpu-queue job: none)
    slurm_queues: str = "gpu"  # the judge queues (gpu, cpu) the jobs serve, comma-separated
    slurm_max_jobs: int = Field(3, ge=1)  # worker jobs of ours at once, pending ones included
    slurm_wait_s: float = Field(120.0, ge=0)  # judgings waiting this long with no idle live
    # worker of their queue get a job submitted
    slurm_idle_s: float = Field(600.0, ge=0)  # a queue empty this long: its jobs drain and end
    slurm_retry_s: float = Field(1800.0, ge=0)  # after a refused or failed job, no new job for
    # that queue for this long (shown on the TA page, never retried in a loop)
    slurm_interval_s: float = Field(30.0, gt=0)  # how often the scaler looks
    slurm_job_env: str = ""  # NAME=value pairs (blank-separated) every job gets, e.g.
    # "FLASHJUDGE_ENV_FILE=/home/ta/.config/flashjudge/worker.env FLASHJUDGE_HOME=/home/ta/fj"
    ready_queues: str = ""  # /readyz: comma-separated queues that need a live worker (default:
    # control and at least one judge queue, which fits a laptop's cpu and a cluster's gpu)
    ready_timeout_s: float = 1.0  # /readyz and /metrics: how long to wait for workers' answers
    worker_live_s: float = Field(35.0, gt=0)  # a worker whose last heartbeat is this recent is
    # live (~3 of its 10 s heartbeats): only languages some live worker judges are offered
    student_profiles: bool = False  # students may ask for ncu profiles (TAs can also allow it
    # at run time on the admin page); TAs always may
    # accounts and the front door: sign-in links, token lifetimes, throttling
    public_url: str = ""  # e.g. https://judge.example.edu: the base of the sign-in links the
    # CLI prints (the pages use the address the browser came in by when this is empty)
    signin_link_max_age_s: int = Field(72 * 3600, gt=0)  # invitation and reset links
    personal_token_days: int = Field(120, gt=0)  # default lifetime of a personal API token
    max_tokens_per_user: int = Field(20, gt=0)  # per kind (personal, password-flow login): a
    # new one past this revokes the oldest
    max_sessions_per_user: int = Field(10, gt=0)  # browser sessions: a new login past this
    # ends the oldest
    login_max_failures: int = Field(5, gt=0)  # wrong passwords per username from one address
    # (or one browser that signed in as that user before) per window, before the waits begin
    login_max_failures_per_address: int = Field(30, gt=0)  # per client address (a lab behind
    # one NAT address shares it, hence more than per username)
    login_user_failures: int = Field(10, gt=0)  # per username from all addresses together
    login_backoff_max_s: int = Field(60, gt=0)  # past a limit, one check per 4, 8 ... s up to
    # this: a slowdown, never a lockout (an attacker's failures cannot lock the owner out)
    login_window_s: int = Field(900, gt=0)  # the throttling window
    trusted_proxies: str = ""  # comma-separated addresses of reverse proxies whose
    # X-Forwarded-Proto / X-Forwarded-For are believed ("*": any; empty: none)
    secure_cookies: bool = False  # always mark the session cookie Secure (else: when HTTPS)
    max_request_bytes: int = 1 << 20  # the body of any request that is not an upload
    upload_drain_bytes: int = 64 << 20  # how much of a refused body is read and dropped so
    # the client reads the answer instead of a connection reset
    # slow clients: what uvicorn and the body guard allow before dropping one
    http_header_timeout_s: float = Field(10.0, gt=0)  # request line and headers, from the
    # first byte (app/core/http_server.py)
    http_keep_alive_s: int = Field(5, gt=0)  # an idle kept-alive connection is closed after
    http_max_connections: int = Field(2000, gt=0)  # per API process; past it: 503 (open pages
    # hold one event stream each, so keep it well above the number of students)
    http_max_connections_per_address: int = Field(256, ge=0)  # open from one address at once
    # (a lab behind one NAT address fits; a trusted proxy's is exempt); past it: 503; 0: no cap
    body_idle_timeout_s: float = Field(30.0, gt=0)  # the longest wait for the next part of a
    # request body (408 after it)
    body_min_rate_bytes_s: int = Field(16 * 1024, ge=0)  # past body_idle_timeout_s, a body
    # must have come at least this fast on average (a drip of a byte a second is dropped)
    # sign-in through the university: OpenID Connect, off while oidc_issuer is empty
    oidc_issuer: str = ""  # e.g. https://login.example.edu/realms/students: its discovery
    # document (ISSUER/.well-known/openid-configuration) names every endpoint and the keys
    oidc_client_id: str = ""  # what the IdP registered the judge as
    oidc_client_secret: str = ""  # the registration's secret (client_secret_basic)
    oidc_name: str = "your university account"  # the login page's "Sign in with <name>"
    oidc_match_claim: Literal["email", "preferred_username"] = "email"  # the ID token's claim
    # matched to the roster: a user's e-mail (case-insensitive) or username
    oidc_scopes: str = "openid email profile"  # asked for at the IdP
    # live pages: one poller per API process reads the change feed (app/live/)
    live_poll_s: float = Field(0.25, gt=0)  # how often; a change reaches a page about this late
    live_keepalive_s: float = Field(15.0, gt=0)  # a comment on an idle stream this often
    live_keep_s: float = Field(3600.0, gt=0)  # the sweeper deletes change rows older than this
    live_board_every_s: float = Field(5.0, ge=0)  # scoreboard pushes per process at most this
    # often: every open tab refetches on a push, so 500 tabs cost at most what 5 s polling did

    @property
    def profiles_dir(self) -> Path:
        """Where kept .ncu-rep files live (one folder per profile id)."""
        return (self.data_dir / "profiles").resolve()

    @property
    def course_zone(self) -> ZoneInfo:
        """The course's time zone: deadlines and times on the pages are shown in it."""
        return ZoneInfo(self.course_timezone)

    @field_validator("course_timezone")
    @classmethod
    def _known_zone(cls, name: str) -> str:
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"FLASHJUDGE_COURSE_TIMEZONE: unknown time zone {name!r}; use an "
                             "IANA name such as Asia/Taipei, Europe/Berlin or UTC") from exc
        return name

    @model_validator(mode="after")
    def _refuse_default_secret(self) -> Settings:
        # sessions signed with a published key can be forged: only the developer's own machine
        # and the test suite's throwaway environments may run on one
        if self.environment not in SAMPLE_SECRET_OK and is_sample_secret(self.secret_key):
            raise ValueError(
                f"FLASHJUDGE_SECRET_KEY is the built-in development key or a 'change-me' "
                f"placeholder, refused with FLASHJUDGE_ENVIRONMENT={self.environment}: set it "
                f"to a random value, e.g. the output of `openssl rand -hex 32`"
            )
        return self

    @model_validator(mode="after")
    def _oidc_complete(self) -> Settings:
        if self.oidc_issuer and not (self.oidc_client_id and self.oidc_client_secret):
            raise ValueError("FLASHJUDGE_OIDC_ISSUER is set but FLASHJUDGE_OIDC_CLIENT_ID or "
                             "FLASHJUDGE_OIDC_CLIENT_SECRET is empty: set both to what the "
                             "university's IdP registered (docs/deployment.md)")
        return self

    @property
    def oidc_enabled(self) -> bool:
        """Whether the login page offers "Sign in with <oidc_name>"."""
        return bool(self.oidc_issuer)

    @property
    def db_url(self) -> str:
        """The SQLAlchemy URL: the configured one, or SQLite under the data dir."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'flashjudge.db').resolve()}"

    @property
    def judge_test_ids(self) -> list[str] | None:
        ids = [t.strip() for t in self.judge_tests.split(",") if t.strip()]
        return ids or None

    @property
    def trusted_proxy_set(self) -> frozenset[str]:
        return frozenset(a.strip() for a in self.trusted_proxies.split(",") if a.strip())

    @property
    def custom_dir(self) -> Path:
        return (self.data_dir / "custom").resolve()


@lru_cache
def get_settings() -> Settings:
    """The process-wide settings, read once from the environment."""
    return Settings()
