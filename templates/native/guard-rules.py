"""The commands {{name}} refuses: patterns matched as plain text inside the command.

Edit the list, then run `hookbox test` (and add a case to tests/ for each new pattern).
"""

DENY = ["rm -rf /", "git push --force", "mkfs"]


def denied(command: str):
    """The first pattern `command` contains, or None."""
    return next((p for p in DENY if p in command), None)
