"""`flashjudge term list | archive | next NAME | rename OLD NEW`: a course's terms
(flashjudge_cli/commands/assignment.py holds the actions, shared with `flashjudge assignment`)."""

from __future__ import annotations

import argparse

from flashjudge_cli.commands.assignment import register_terms


def register(subparsers: argparse._SubParsersAction) -> None:
    register_terms(subparsers)
