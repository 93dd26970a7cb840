"""report.html and compare.html rendered in headless Chromium: every section and image present, nothing broken.

Needs Debian's ``chromium`` package (``.ci/run`` installs it). Skipped with a
message when it is missing, except under DSE_REQUIRE_INTEGRATION=1 (CI),
where that is a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from .test_report import SECTIONS, run_study

REQUIRED = os.environ.get("DSE_REQUIRE_INTEGRATION") == "1"
CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        if REQUIRED:
            pytest.fail("headless browser test cannot run: chromium not installed (apt-get install chromium)")
        pytest.skip("chromium not installed (apt-get install chromium); the browser test runs in CI")
    return CHROMIUM


def _flags(tmp: Path) -> list[str]:
    return ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
            "--hide-scrollbars", f"--user-data-dir={tmp / 'profile'}", "--virtual-time-budget=5000",
            "--enable-logging=stderr", "--v=0"]


def render(browser: str, html: Path, tmp: Path) -> tuple[str, str, Path]:
    """(DOM after load, browser log, screenshot) of ``html``."""
    url = html.resolve().as_uri()
    dom = subprocess.run([browser, *_flags(tmp), "--dump-dom", url], capture_output=True, text=True, timeout=180)
    assert dom.returncode == 0, dom.stderr[-2000:]
    shot = tmp / (html.stem + ".png")
    proc = subprocess.run([browser, *_flags(tmp), "--window-size=1400,3000", f"--screenshot={shot}", url],
                          capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return dom.stdout, dom.stderr + proc.stderr, shot


def _check(dom: str, log: str, shot: Path, sections: list[str], min_images: int) -> None:
    for s in sections:
        assert f'<section id="{s}">' in dom, s
    m = re.search(r'data-images="(\d+)" data-images-broken="(\d+)"', dom)
    assert m, "the page's load handler did not run"
    assert int(m.group(1)) >= min_images
    assert m.group(2) == "0", "an image failed to decode"
    for bad in ("Failed to load resource", "net::ERR_", "Uncaught"):
        assert bad not in log, bad
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 50_000  # a rendered page, not a blank one


def test_report_renders_in_chromium(browser, tmp_path):
    st = run_study(tmp_path, "browser")
    dom, log, shot = render(browser, st.out_dir / "report.html", tmp_path)
    _check(dom, log, shot, list(SECTIONS), min_images=6)
    assert "Design-space exploration report" in dom


def test_compare_renders_in_chromium(browser, tmp_path):
    from dse import compare

    out = compare.run("lenet", archs="emaxvr,rena", trials=10, budget="area_mm2<=30", out_dir=tmp_path / "cmp",
                      progress=False)
    dom, log, shot = render(browser, out["html"], tmp_path)
    _check(dom, log, shot, ["table", "charts", "pareto", "method"], min_images=2)
    assert "lenet across architectures" in dom
