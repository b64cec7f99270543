"""What the TAs tell everyone: announcements on every page, in the API and in the CLI."""
