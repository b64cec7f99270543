"""People: users and the roster, passwords, sign-in links, sessions, tokens, login throttling,
and the audit log of TA actions."""
