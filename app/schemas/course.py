"""What the course offers a student now: assignments, the languages workers judge, deadlines."""

from __future__ import annotations

from pydantic import BaseModel, Field


class LanguageOut(BaseModel):
    """One language and whether a live worker can judge it now."""

    name: str = Field(description="what to send as `language`, e.g. cuda-program")
    title: str = Field(description="one line for people")
    main_file: str = Field(description="the file a student submits first, e.g. hw4.cu")
    uses_gpu: bool = Field(description="needs a GPU worker")
    available: bool = Field(description="some live worker judges it now")
    workers: int = Field(description="how many live workers judge it")
    reason: str | None = Field(None, description="why it cannot be judged now")


class LanguagesOut(BaseModel):
    """Every language; an upload in one that is not offered is refused (409)."""

    available: list[str] = Field(description="the languages that can be judged now")
    offered: list[str] = Field(description="the languages an upload is accepted in now: the "
                                           "available ones, or all while no worker is live "
                                           "(they wait for one)")
    languages: list[LanguageOut]


class DeadlineStatusOut(BaseModel):
    """Where the caller stands against the deployment's suite deadline, by the server's clock."""

    suite: str = Field(description="the assignment's name (kept under this key for older "
                                   "clients)")
    assignment: str = Field("", description="the assignment's name")
    due_at: str | None = Field(description="ISO 8601 UTC; null with no deadline")
    extended: bool = Field(description="the caller's own extension applies")
    policy: str = Field(description="refuse | penalty ('' with no deadline)")
    late: bool = Field(description="a submission now would be late")
    penalty: float = Field(description="percent a submission now would lose")
    closed: bool = Field(description="a submission now would be refused")
    seconds_left: float | None = Field(description="until the due time (negative once late)")
    message: str = Field(description="one line for people")


class AssignmentOut(BaseModel):
    """One assignment of the current term: what `assignment` to send with an upload."""

    name: str = Field(description="what to send as `assignment`, e.g. hw4")
    title: str = Field(description="one line for people")
    suite: str = Field(description="the tests it is judged on")
    open: bool = Field(description="students may submit to it now")
    languages: list[str] = Field(description="the languages it accepts ([]: every language)")
    deadline: DeadlineStatusOut
