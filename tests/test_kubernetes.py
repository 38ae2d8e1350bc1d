"""deploy/kubernetes.yaml, validated offline against Kubernetes' own schemas (the
kubernetes-validate package bundles them; --strict refuses a field the schema does not have),
and read for what the image and the hall need: health probes, a non-root user, the shared
cookie secret from a Secret, cookie affinity and a lecture's websocket timeouts.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = ROOT / "deploy" / "kubernetes.yaml"
VALIDATE = [sys.executable, "-m", "kubernetes_validate", "--strict", "--quiet"]


def docs() -> dict[str, dict]:
    return {d["kind"]: d for d in yaml.safe_load_all(MANIFEST.read_text())}


def test_the_manifest_validates_strictly_against_kubernetes_schemas():
    done = subprocess.run([*VALIDATE, str(MANIFEST)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert set(docs()) == {"Secret", "Deployment", "Service", "Ingress"}


def test_strict_validation_would_refuse_a_misspelt_field(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(MANIFEST.read_text().replace("readinessProbe:", "readinesProbe:"))
    done = subprocess.run([*VALIDATE, str(bad)], capture_output=True, text=True)
    assert done.returncode != 0 and "readinesProbe" in done.stdout + done.stderr


def test_the_deployment_runs_the_image_as_built():
    pod = docs()["Deployment"]["spec"]["template"]["spec"]
    (app,) = pod["containers"]
    for probe in ("readinessProbe", "livenessProbe"):
        assert app[probe]["httpGet"]["path"] == "/_stcore/health"
    port = app["ports"][0]["containerPort"]
    assert app["args"] == ["0.0.0.0", str(port)]
    containerfile = (ROOT / "deploy" / "image" / "Containerfile").read_text()
    uid = re.search(r"^USER (\d+):(\d+)$", containerfile, re.M)
    assert pod["securityContext"]["runAsUser"] == int(uid.group(1))
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert f"EXPOSE {port}" in containerfile
    # the secret: a file from the Secret, named by the variable deploy/serve.sh reads
    env = {e["name"]: e["value"] for e in app["env"]}
    mount = next(m for m in app["volumeMounts"] if m["name"] == "cookie")
    secret = next(v for v in pod["volumes"] if v["name"] == "cookie")["secret"]["secretName"]
    assert secret == docs()["Secret"]["metadata"]["name"]
    key = next(iter(docs()["Secret"]["stringData"]))
    assert env["CONVVIZ_COOKIE_SECRET_FILE"] == f"{mount['mountPath']}/{key}"
    assert "CONVVIZ_COOKIE_SECRET_FILE" in (ROOT / "deploy" / "serve.sh").read_text()


def test_the_ingress_pins_browsers_and_keeps_websockets_for_a_lecture():
    notes = docs()["Ingress"]["metadata"]["annotations"]
    prefix = "nginx.ingress.kubernetes.io/"
    assert notes[prefix + "affinity"] == "cookie"
    assert int(notes[prefix + "proxy-read-timeout"]) >= 3 * 3600
    hall = (ROOT / "deploy" / "nginx.conf").read_text()
    body = re.search(r"client_max_body_size (\d+);", hall).group(1)
    assert notes[prefix + "proxy-body-size"] == body  # the hall's upload limit
