"""User-facing errors: one line, exit code 2, never a traceback."""

from __future__ import annotations


class UserError(Exception):
    """Bad input from the user (file, key, value). The CLI prints it on one line."""

    exit_code = 2

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))  # one line, always


def allowed(values) -> str:
    """Format a collection of allowed values for an error message."""
    vals = list(values)
    if len(vals) > 12:
        return ", ".join(map(str, vals[:12])) + f", ... ({len(vals)} in all)"
    return ", ".join(map(str, vals))


def pydantic_message(err) -> str:
    """First error of a pydantic ``ValidationError`` as ``key.path: message``."""
    e = err.errors()[0]
    loc = ".".join(str(p) for p in e["loc"] if not str(p).startswith(("function-", "tagged-union")))
    msg = e["msg"]
    if e["type"] == "extra_forbidden":
        msg = "unknown key"
    ctx = e.get("ctx") or {}
    if "expected" in ctx and "expected" not in msg:
        msg = f"{msg} (allowed: {ctx['expected']})"
    return f"{loc}: {msg}" if loc else msg
