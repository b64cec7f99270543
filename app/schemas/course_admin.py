"""An assignment's configuration and a term, as the TA API reads and writes them."""

from __future__ import annotations

from pydantic import BaseModel, Field


class AssignmentConfigIn(BaseModel):
    """What a TA sets; every key but name may be left out (its default)."""

    name: str = Field(description="unique in its term, e.g. hw4 (what students send)")
    title: str = ""
    suite: str = Field("hw4", description="the tests: a shipped suite")
    languages: list[str] = Field(default_factory=list, description="[]: every language")
    open: bool = Field(True, description="students may submit")
    position: int = Field(0, description="order on pages")
    due_at: str | None = Field(None, description="ISO 8601 with its offset; null: none")
    late_policy: str = Field("refuse", description="refuse | penalty")
    penalty_per_day: float = 0.0
    penalty_cap: float = 100.0
    gpu_model: str = Field("", description="'': any GPU model judges it")
    visibility: str = Field("all", description="what students see before the due time: "
                                               "all | verdicts | none")
    hidden_tests: bool = Field(False, description="judged on a secret seed (never shown)")
    libraries_allowed: bool = Field(False, description="library kernels (cuBLAS, cuDNN, ...) "
                                    "may compute the answer: the suite's own-kernels rule "
                                    "lifted for this assignment")


class AssignmentOutTA(AssignmentConfigIn):
    """An assignment as a TA sees it: its configuration, its term, how much it holds."""

    term: str
    archived: bool = Field(description="its term is archived: read-only")
    submissions: int


class ConfigText(BaseModel):
    """An exported configuration file, or one to import."""

    format: str = Field("toml", description="toml | json")
    text: str


class TermOut(BaseModel):
    name: str
    current: bool
    archived_at: str | None
    assignments: list[str]


class TermIn(BaseModel):
    name: str = Field(description="the new term, e.g. 2027-spring")
