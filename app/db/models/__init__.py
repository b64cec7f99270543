"""SQLAlchemy 2 models: the database is the only source of truth for the service.

One module per part of the service; everything is re-exported here, so `from app.db.models import
Submission` works everywhere and `Base.metadata` holds every table once this package is imported.
"""

from app.db.models.base import Base, utcnow
from app.db.models.course import (
    Announcement,
    Assignment,
    AuditLog,
    CourseSettings,
    Dismissal,
    Extension,
    KeyValue,
    Term,
)
from app.db.models.insight import Fingerprint, SimilaritySource
from app.db.models.judging import (
    CustomRun,
    JudgedTest,
    Profile,
    SlurmJob,
    Submission,
    SubmissionFile,
    WorkerStatus,
)
from app.db.models.live import Change
from app.db.models.people import ApiToken, LoginAttempt, LoginSession, SignInLink, User
from app.db.models.standing import BoardState, PairedRun, Standing

__all__ = [
    "Announcement", "ApiToken", "Assignment", "AuditLog", "Base", "BoardState", "Change",
    "CourseSettings", "CustomRun", "Dismissal", "Extension", "Fingerprint", "JudgedTest",
    "KeyValue",
    "LoginAttempt", "LoginSession", "PairedRun", "Profile", "SignInLink", "SimilaritySource",
    "SlurmJob", "Standing", "Submission", "SubmissionFile", "Term", "User", "WorkerStatus",
    "utcnow",
]
