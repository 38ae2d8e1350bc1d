"""Hosts on one machine for the tests: each one a network namespace of its own (`ip netns`, root),
joined to a front namespace by a veth link, with an address in RFC 2544's benchmarking range
(198.18.0.0/15) and no route anywhere else: traffic stays on the links the test makes.

    front ── veth ── h1 (198.18.1.2)
          └─ veth ── h2 (198.18.2.2)

The front's side of link i is 198.18.i.1. Everything is removed at the end, whatever happened:
the processes started in a namespace (by their pids), then the namespaces (their veth links go
with them).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest

IP = shutil.which("ip") or "/usr/sbin/ip"


def need_netns() -> None:
    """Root and iproute2's `ip netns`; skipped (failed under CI) without them."""
    why = None
    if os.geteuid() != 0:
        why = "network namespaces need root"
    elif not Path(IP).exists():
        why = "iproute2's ip is missing"
    if why:
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)


def ip(*args: str) -> None:
    subprocess.run([IP, *args], check=True, capture_output=True, text=True)


class Hosts:
    """A front namespace and `count` host namespaces, each host on its own veth link."""

    def __init__(self, count: int = 2) -> None:
        need_netns()
        tag = f"cv{os.getpid() % 100000}"
        self.front = f"{tag}-front"
        self.names = [f"{tag}-h{i + 1}" for i in range(count)]
        self.links = [f"{tag}h{i + 1}" for i in range(count)]  # the front's side of each link
        self.made: list[str] = []
        try:
            self._make()
        except BaseException:
            self.remove()
            raise

    def address(self, i: int) -> str:
        """Host i's address (0-based)."""
        return f"198.18.{i + 1}.2"

    def _make(self) -> None:
        for ns in (self.front, *self.names):
            ip("netns", "add", ns)
            self.made.append(ns)
            ip("-n", ns, "link", "set", "lo", "up")
        for i, (ns, link) in enumerate(zip(self.names, self.links)):
            peer = f"{link}p"
            ip("link", "add", link, "netns", self.front, "type", "veth", "peer", peer, "netns", ns)
            ip("-n", self.front, "addr", "add", f"198.18.{i + 1}.1/24", "dev", link)
            ip("-n", ns, "addr", "add", f"{self.address(i)}/24", "dev", peer)
            ip("-n", self.front, "link", "set", link, "up")
            ip("-n", ns, "link", "set", peer, "up")

    def link(self, i: int, up: bool) -> None:
        """Host i's link to the front, up or down (down: its machine is gone from the network)."""
        ip("-n", self.front, "link", "set", self.links[i], "up" if up else "down")

    def run(self, ns: str, argv: list[str], **kwargs) -> list[str]:
        """argv as it runs inside namespace `ns` (`ip netns exec`)."""
        return [IP, "netns", "exec", ns, *argv]

    def remove(self) -> None:
        for ns in reversed(self.made):
            for pid in self.pids(ns):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, 9)
            subprocess.run([IP, "netns", "delete", ns], capture_output=True)
        self.made = []

    def pids(self, ns: str) -> list[int]:
        done = subprocess.run([IP, "netns", "pids", ns], capture_output=True, text=True)
        return [int(p) for p in done.stdout.split()]
