"""User-facing errors: one line, exit code 2, never a traceback."""

from __future__ import annotations


class UserError(Exception):
    """Bad input from the user (file, key, value). The CLI prints it on one line."""

    exit_code = 2

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))  # one line, always


def allowed(values) -> str:
    """Format a collection of allowed values for an error message (every model's parameters in full)."""
    vals = list(values)
    if len(vals) > 30:
        return ", ".join(map(str, vals[:30])) + f", ... ({len(vals)} in all)"
    return ", ".join(map(str, vals))


def pydantic_message(err, keys=None) -> str:
    """First error of a pydantic ``ValidationError`` as ``key.path: message``.

    An unknown key comes first (a misspelt ``objectives`` is the cause of the
    missing one); ``keys``: the top-level keys allowed, named after it.
    """
    errors = err.errors()
    e = next((x for x in errors if x["type"] == "extra_forbidden"), errors[0])
    loc = ".".join(str(p) for p in e["loc"] if not str(p).startswith(("function-", "tagged-union")))
    msg = e["msg"]
    if e["type"] == "extra_forbidden":
        msg = "unknown key" + (f"; allowed: {allowed(keys)}" if keys and len(e["loc"]) == 1 else "")
    ctx = e.get("ctx") or {}
    if "expected" in ctx and "expected" not in msg:
        msg = f"{msg} (allowed: {ctx['expected']})"
    return f"{loc}: {msg}" if loc else msg
