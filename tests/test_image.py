"""The container image (`make image`: deploy/image/) run for real with podman: it serves the app
as a non-root user, answers /_stcore/health, signs with the cookie secret mounted from a file,
carries no secret, no build-time CA and no pip, and stops by itself on SIGTERM. One session is
driven through it with scripts/load.py (the websocket protocol a browser speaks).

`make ci` builds the image first (`make image`); elsewhere the test skips when it is missing.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.halls import ROOT, free_port

pytestmark = [pytest.mark.podman, pytest.mark.server, pytest.mark.full]

IMAGE = "localhost/convviz:latest"
ENV = os.environ | {"CONTAINERS_CONF": str(ROOT / "deploy" / "image" / "containers.conf")}
UID = 10001


def podman(*args: str, check: bool = True, timeout: float = 120) -> str:
    done = subprocess.run(
        ["podman", *args], capture_output=True, text=True, env=ENV, timeout=timeout
    )
    if check and done.returncode:
        raise AssertionError(f"podman {' '.join(args)}: {done.stderr}")
    return done.stdout


@pytest.fixture(scope="module")
def image() -> str:
    found = shutil.which("podman") and subprocess.run(
        ["podman", "image", "exists", IMAGE], env=ENV, capture_output=True
    )
    if not found or found.returncode:
        if os.environ.get("CI"):
            pytest.fail(f"{IMAGE} is missing: `make ci` runs `make image` first")
        pytest.skip(f"{IMAGE} is missing: `make image` builds it")
    return IMAGE


def answers(url: str) -> bool:
    with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=2) as r:
        return r.read() == b"ok"
    return False


def test_the_image_carries_no_secret_no_build_ca_and_no_pip(image):
    config = json.loads(podman("image", "inspect", image))[0]["Config"]
    names = {e.split("=", 1)[0] for e in config.get("Env", [])}
    assert not {"STREAMLIT_SERVER_COOKIE_SECRET", "CONVVIZ_COOKIE_SECRET_FILE"} & names
    assert config["User"] == f"{UID}:{UID}" and config["Entrypoint"][0] == "/usr/bin/tini"
    gone = "/usr/local/share/build-ca.crt /opt/venv/bin/pip /usr/lib/python3/dist-packages/pip"
    script = f"for f in {gone}; do test -e $f && echo $f; done; true"
    assert podman("run", "--rm", "--entrypoint", "/bin/sh", image, "-c", script) == ""


def test_the_image_serves_a_session_as_a_non_root_user_and_stops_on_sigterm(image, tmp_path):
    port, name = free_port(), f"convviz-test-{os.getpid()}"
    secret = tmp_path / "cookie-secret"
    secret.write_text(os.urandom(32).hex())
    secret.chmod(0o400)
    os.chown(secret, UID, UID)  # the container's user reads it (the tests run as root)
    podman(
        "run", "--detach", "--network=host", "--name", name,
        "--volume", f"{secret}:/run/secrets/convviz-cookie:ro",
        "--env", "CONVVIZ_COOKIE_SECRET_FILE=/run/secrets/convviz-cookie",
        image, "127.0.0.1", str(port),
    )  # fmt: skip
    try:
        end = time.monotonic() + 120
        while time.monotonic() < end and not answers(f"http://127.0.0.1:{port}/_stcore/health"):
            assert podman("inspect", "--format", "{{.State.Running}}", name).strip() == "true"
            time.sleep(0.3)
        assert answers(f"http://127.0.0.1:{port}/_stcore/health"), podman("logs", name)
        users = podman("top", name, "user", "args").splitlines()[1:]
        assert users and all(line.split()[0] == "convviz" for line in users), users
        assert "streamlit run app.py" in " ".join(users)
        # Streamlit signs with the mounted secret: the process's environment has it
        environ = podman(
            "exec", name, "/bin/sh", "-c",
            "for p in /proc/[0-9]*; do grep -q streamlit $p/cmdline 2>/dev/null && "
            "tr '\\0' '\\n' < $p/environ; done",
        )  # fmt: skip
        assert f"STREAMLIT_SERVER_COOKIE_SECRET={secret.read_text()}" in environ.splitlines()

        cmd = [sys.executable, "scripts/load.py", "--through", f"http://127.0.0.1:{port}"]
        cmd += ["--run-dir", str(tmp_path), "--sessions", "1", "--duration", "15"]
        cmd += ["--think", "0.5", "1.5", "--json"]
        load = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=200)
        result = json.loads(load.stdout.strip().splitlines()[-1])
        assert result["errors"] == 0 and result["leaks"] == 0, result["error_samples"]
        assert result["reruns"] >= 3 and result["lost_changes"] == 0, result

        began = time.monotonic()
        podman("kill", "--signal", "TERM", name)
        code = int(podman("wait", name, timeout=30).strip())
        took = time.monotonic() - began
        print(f"SIGTERM → the container exited with {code} in {took:.2f} s")
        assert code in (0, 143), code  # it stopped itself; 137 would be podman's KILL
    finally:
        podman("rm", "--force", "--ignore", name, check=False)
