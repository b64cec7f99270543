"""What every process that writes to the database installs on its sessions when it starts.

Session listeners keep derived state in the writer's own transaction, so no writer has to
remember them: the change feed (app/changefeed/tracking.py: live pages follow whichever process
wrote), the scoreboard's standing (app/scoreboard/standing/hooks.py), and the sessions the
board remembers, forgotten when a user's role changes (app/accounts/sessions.py). The database
module (app/db/session.py) sits below them and installs nothing; whoever starts a process installs
them here, once: the app factory (app/main.py), the control worker (app/control/entry.py), the
console commands that write, and the tests' fixtures. Nothing is installed on import.
"""

from __future__ import annotations

from sqlalchemy.orm import Session, sessionmaker

from app.accounts.sessions import forget_on_role_change
from app.changefeed.tracking import track_submissions
from app.db.session import session_factory
from app.scoreboard.standing import hooks


def install_listeners(factory: sessionmaker[Session]) -> sessionmaker[Session]:
    """Install the change feed's and the standing's listeners on the sessions `factory` makes;
    installing them again changes nothing. Returns `factory`."""
    track_submissions(factory)
    hooks.install(factory)
    forget_on_role_change(factory)
    return factory


def wired_sessions(url: str) -> sessionmaker[Session]:
    """This process's session factory for `url` (one per URL), its listeners installed."""
    return install_listeners(session_factory(url))
