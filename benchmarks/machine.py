"""What machine a benchmark ran on (recorded next to every number)."""

from __future__ import annotations

import datetime as _dt
import os
import platform


def describe() -> dict[str, str]:
    import numpy
    import optuna

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "date": _dt.datetime.now().strftime("%Y-%m-%d %H:%M"),
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "optuna": optuna.__version__,
        "os": f"{platform.system()} {platform.release()}",
    }
