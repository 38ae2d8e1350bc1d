"""What a hall takes that one server takes: a share link at the app's bound (convviz.model.state.
MAX_LINK) loads through the hall's nginx and through a plain `streamlit run`, as the page's own
request and as the Referer of its assets; an upload over the app's 5 MB is refused by nginx
(413) before Streamlit, and a 5.0 MB one passes; 20 sessions through the hall, 0 errors.
"""

from __future__ import annotations

import gzip
import http.client
import json
import re
import subprocess
import sys
import time
from urllib.parse import urlencode, urlsplit

import numpy as np
import pytest

from convviz.model.fields import encode_array
from convviz.model.state import MAX_LINK, from_query, spec_of, to_query
from tests.halls import ROOT, Hall, free_port

sys.path.insert(0, str(ROOT / "deploy"))
from hall_supervisord import answers

pytestmark = [pytest.mark.server, pytest.mark.supervisord]

# what a browser sends beside the address (Chromium's, ~0.5 kB), and the cookies it holds
BROWSER = {
    "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/156.0.0.0 Safari/537.36",
    "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,"
    "image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7",
    "Accept-Encoding": "gzip",
    "Accept-Language": "en-GB,en;q=0.9,de;q=0.8",
    "Cookie": "convviz_affinity=p1; convviz_host=h1; _streamlit_xsrf=" + "2|" + "ab" * 40,
}


def link_at_the_bound() -> dict[str, str]:
    """A view whose query, as the app writes it, is MAX_LINK characters long exactly: a
    16×16 input of 4 channels edited (1,024 values, the most a link holds), ∂L/∂y edited."""
    rng = np.random.default_rng(7)
    layer = {"H": "16", "W": "16", "cin": "4", "cout": "4", "kH": "3", "kW": "3"}
    state, _ = from_query(layer)  # a custom layer (the note says so)
    state["x"] = encode_array(rng.integers(-99, 99, 1024) / 10)
    g = list(rng.integers(-9, 9, int(np.prod(spec_of(state).output_shape))).astype(float))
    for n in range(len(g), 0, -1):  # the longest ∂L/∂y that fits, then one value's digits
        state["g"] = encode_array(np.array(g[:n] + [0.0] * (len(g) - n)))
        if len(urlencode(to_query(state))) <= MAX_LINK:
            break
    short = MAX_LINK - len(urlencode(to_query(state)))
    digits = state["g"].split(",")
    i = next(i for i, d in enumerate(digits) if d == "0")
    digits[i] = "1" + "0" * short if short else "0"  # `short` characters longer
    state["g"] = ",".join(digits)
    query = to_query(state)
    assert len(urlencode(query)) == MAX_LINK
    return query


def get(base: str, path: str, headers: dict[str, str]) -> tuple[int, bytes]:
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        body = response.read()
        if response.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        return response.status, body
    finally:
        conn.close()


def opens(base: str, query: dict[str, str]) -> None:
    """The page at this link, then one of its scripts with the link as its Referer: both 200."""
    path = f"/Forward?{urlencode(query)}"
    status, html = get(base, path, BROWSER)
    assert status == 200, (status, html[:300])
    script = re.search(rb'src="\./(static/js/[^"]+\.js)"', html).group(1).decode()
    status, _ = get(base, f"/{script}", BROWSER | {"Referer": base + path})
    assert status == 200, status


def session(base: str | None, query: dict[str, str], tmp_path) -> dict:
    """One session on that link over Streamlit's websocket (scripts/load.py): its first run
    reads the link; then it changes the stride a few times."""
    cmd = [sys.executable, "scripts/load.py", "--mix", "control", "--page", "Forward"]
    cmd += ["--query", urlencode(query), "--sessions", "1", "--duration", "6", "--json"]
    cmd += ["--think", "1", "2"]
    if base:
        cmd += ["--through", base, "--run-dir", str(tmp_path)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=240)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["errors"] == 0 and result["leaks"] == 0, (result, done.stderr[-2000:])
    return result


@pytest.fixture(scope="module")
def hall(tmp_path_factory):
    running = Hall(tmp_path_factory.mktemp("hall-limits"), processes=1)
    try:
        yield running
    finally:
        running.stop()


def test_a_link_at_the_bound_loads_through_the_hall(hall, tmp_path):
    query = link_at_the_bound()
    opens(hall.url, query)
    assert session(hall.url, query, tmp_path)["reruns"] >= 1
    assert not [x for x in hall.access_log() if re.search(r'" (400|414|431|494) ', x)]


def test_a_link_at_the_bound_loads_through_a_plain_server(tmp_path):
    """`make run` alone: Streamlit's own server (h11 takes a 16 KiB head)."""
    query = link_at_the_bound()
    assert session(None, query, tmp_path)["reruns"] >= 1
    # the GETs a browser sends, on a server of the test's own
    port = free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true"]
    cmd += ["--server.address", "127.0.0.1", "--server.port", str(port)]
    cmd += ["--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false"]
    server = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        base = f"http://127.0.0.1:{port}"
        end = time.monotonic() + 90
        while not answers(f"{base}/_stcore/health") and time.monotonic() < end:
            time.sleep(0.2)
        opens(base, query)
    finally:
        server.terminate()
        server.wait(20)


def upload(hall: Hall, size: int) -> tuple[int, bool]:
    """A file of `size` bytes posted as the browser's uploader posts it (multipart, PUT); the
    status and whether nginx passed it to Streamlit (the access log names an upstream)."""
    boundary = "----convvizUploadBoundary7MA4YWxkTrZu0gW"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
        f'filename="{"a" * 200}.png"\r\nContent-Type: image/png\r\n\r\n'
    ).encode()
    body = head + b"\0" * size + f"\r\n--{boundary}--\r\n".encode()
    conn = http.client.HTTPConnection("127.0.0.1", hall.port, timeout=60)
    seen = len(hall.access_log())
    try:
        conn.putrequest("PUT", f"/_stcore/upload_file/no-session/file-{size}")
        conn.putheader("Content-Type", f"multipart/form-data; boundary={boundary}")
        conn.putheader("Content-Length", str(len(body)))
        conn.putheader("User-Agent", f"upload-{size}")
        conn.endheaders()
        conn.send(body)
        status = conn.getresponse().status
    except (BrokenPipeError, ConnectionResetError):  # nginx answered before the body's end
        status = 413
    finally:
        conn.close()
    # nginx writes the request's line once it has answered: wait for it, not for a time
    for _ in range(200):
        lines = [x for x in hall.access_log()[seen:] if f'"upload-{size}"' in x]
        if lines:
            break
        time.sleep(0.05)
    return status, bool(lines) and hall.upstream_of(lines[-1]) is not None


def test_an_upload_over_5_mb_is_refused_by_nginx_and_5_mb_passes(hall):
    status, passed = upload(hall, 5_000_000)  # the app's limit (convviz/ui/editors.py), a
    assert passed and status != 413, status  # 200-character name: Streamlit answers it
    status, passed = upload(hall, 5_001_024)  # anything larger than the limit and 1 KiB
    assert status == 413 and not passed
    status, passed = upload(hall, 5_500_000)
    assert status == 413 and not passed


@pytest.mark.full  # `make ci`: a smoke load through the hall
def test_twenty_sessions_through_the_hall_without_an_error(hall, tmp_path):
    cmd = [sys.executable, "scripts/load.py", "--through", hall.url, "--run-dir", str(hall.run)]
    cmd += ["--sessions", "20", "--arrive", "5", "--duration", "30", "--json"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["errors"] == 0 and result["leaks"] == 0, result["error_samples"]
    assert result["lost_changes"] == 0 and result["reconnects"] == 0, result
    assert result["fewest_reruns_per_session"] >= 3, result
