"""Shared fixtures (a real streamlit server, Debian's Chromium) and the rule that a slow test says
why it is slow.

A test that starts Chromium is marked `browser`; one that starts a server (streamlit, nginx, or
a script that starts one) `server`; one that encodes a video with ffmpeg `encoder`; one that runs
pip (a wheel, an install) or makes a venv `install`; one that runs a Jupyter kernel `kernel`, one
that starts a Jupyter server `jupyter`. The markers are
checked, not trusted: a process started by a test whose markers do not allow it is refused with
an error that names the marker (see `_refuse_unmarked`), so `-m "not browser and not server and
not encoder"` (`make check`) starts none of them.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from hypothesis import settings
from quick import CHECK_EXAMPLES, PROFILE

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "artifacts"

# --- hypothesis: `make check` runs each property on fewer examples (tests/quick.py) ---------------

settings.register_profile("check", max_examples=CHECK_EXAMPLES)
settings.load_profile(PROFILE)
if PROFILE == "check":
    # The quick tier runs as CI does, without PyTorch (importing it costs ~10 s a worker): its
    # cross-checks say "skipped". `make test` runs them wherever torch is installed.
    sys.modules.setdefault("torch", None)


# --- what a test may start ------------------------------------------------------------------------

_CURRENT: list[pytest.Item] = []  # the test being set up, run or torn down


def _needs(argv: list[str]) -> str | None:
    """The marker a process needs: 'browser', 'server', 'encoder', 'install', 'netns', 'podman',
    'debootstrap', 'supervisord', 'kernel' (a Jupyter kernel), 'jupyter' (a Jupyter server), or
    None (any test may)."""
    words = " ".join(argv)
    if "--help" in argv or (Path(argv[0]).name == "nginx" and "-t" in argv):
        return None  # a help text or nginx testing a config starts no server
    name = Path(argv[0]).name if argv else ""
    if "chromium" in name or ("playwright" in words and "driver" in words):
        return "browser"
    if "scripts/latency.py" in words:
        return "browser"
    if ("streamlit" in words and " run " in f" {words} ") or name == "nginx":
        return "server"
    if name == "ip" and "netns" in argv:
        return "netns"
    if name == "podman" and not {"--version", "image", "images"} & set(argv):
        return "podman"
    if "debootstrap" in words:
        return "debootstrap"
    if "supervisord" in words or "hall_front.py start" in words or "hall.py start" in words:
        return "supervisord"
    if "scripts/load.py" in words or "run-hall" in words:
        return "server"
    if "ffmpeg" in name:
        return "encoder"
    if "ipykernel_launcher" in words or "ipykernel" in name:
        return "kernel"
    if re.search(r"jupyter[-_ ]?(lab|notebook|server)", words):
        return "jupyter"
    if " -m venv " in f" {words} " or re.search(r" -m pip (install|wheel) ", f" {words} "):
        return "install"
    return None


def _refuse_unmarked(event: str, args: tuple) -> None:
    if event != "subprocess.Popen" or not _CURRENT:
        return
    argv = args[1]
    argv = [str(a) for a in argv] if isinstance(argv, list | tuple) else str(argv).split()
    need = _needs([str(args[0] or argv[0]), *argv[1:]] if argv else [str(args[0])])
    item = _CURRENT[-1]
    if need and item.get_closest_marker(need) is None:
        if need == "server" and item.get_closest_marker("browser"):
            return  # a browser test drives a server
        if need == "kernel" and item.get_closest_marker("jupyter"):
            return  # a Jupyter server starts the kernels of the notebooks it opens
        raise RuntimeError(
            f"{item.nodeid} starts {' '.join(argv[:3])}…: mark it @pytest.mark.{need} "
            f"(or pytestmark = pytest.mark.{need}), so that `-m 'not {need}'` means what it says"
        )


sys.addaudithook(_refuse_unmarked)


def _refuse_unmarked_apptest() -> None:
    """AppTest runs a page in this process (0.1-3 s a run): a test that runs one is marked
    `apptest`, so that `make check` (which leaves them out but for a `sample`) stays quick."""
    from streamlit.testing.v1 import AppTest

    run = AppTest.run

    def checked_run(self, *args, **kwargs):
        if _CURRENT and _CURRENT[-1].get_closest_marker("apptest") is None:
            raise RuntimeError(
                f"{_CURRENT[-1].nodeid} runs a page in AppTest: mark it @pytest.mark.apptest"
            )
        return run(self, *args, **kwargs)

    AppTest.run = checked_run


_refuse_unmarked_apptest()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _CURRENT.append(item)
    try:
        return (yield)
    finally:
        _CURRENT.pop()


BROWSER_FIXTURES = {"browser", "page", "context", "new_context", "tab", "browser_type"}


def pytest_collection_modifyitems(config, items):
    """A test that asks for a browser or a server fixture carries the marker (checked here, at
    collection, as well as when the process starts)."""
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        names -= set(getattr(getattr(item, "callspec", None), "params", ()))  # a `page` argument
        if names & BROWSER_FIXTURES and item.get_closest_marker("browser") is None:
            raise pytest.UsageError(f"{item.nodeid} uses a browser: mark it browser")
        if "app_url" in names and not (
            item.get_closest_marker("browser") or item.get_closest_marker("server")
        ):
            raise pytest.UsageError(f"{item.nodeid} uses app_url: mark it server (or browser)")


# --- a real server --------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def app_url():
    """Start `streamlit run app.py` on a free loopback port, run its first page once (the cold
    imports and caches, so no test waits for them); stop it after the session."""
    from live import warm

    port = _free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true"]
    cmd += ["--server.address", "127.0.0.1", "--server.port", str(port)]
    cmd += ["--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    # the server's log (a traceback behind "This app has encountered an error") for post-mortems
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / "server.log", "w")  # noqa: SIM115 (closed below)
    proc = subprocess.Popen(
        cmd, cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL, stderr=log
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while not _healthy(url):
            if proc.poll() is not None or time.monotonic() > deadline:
                log.flush()
                raise RuntimeError(f"streamlit did not start: {log.name} says why")
            time.sleep(0.2)  # polling a starting process: there is no event to wait on
        warm(url)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
        log.close()


def _healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as r:
            return r.read() == b"ok"
    except OSError:
        return False


# --- Debian's Chromium ----------------------------------------------------------------------------


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing: `make test` installs Debian's chromium")
        pytest.skip(f"{CHROMIUM} is missing (run `make test` to install it)")
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-quic",
        ],
    }


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {
        **browser_context_args,
        "viewport": {"width": 1280, "height": 1400},
        "accept_downloads": True,
    }


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


@pytest.fixture(scope="module")
def tab(browser, browser_context_args):
    """One browser tab for a whole test module, built on pytest-playwright's `browser`.

    A goto in a tab that has already loaded the app draws its first chart in ~3 s instead of
    ~6 s in a fresh context (plotly.js and Streamlit's bundle stay compiled). Every goto still
    starts a new Streamlit session, so tests stay independent as long as each begins with a goto.
    """
    from live import open_tab

    page = open_tab(browser, **browser_context_args)
    yield page
    page.context.close()
