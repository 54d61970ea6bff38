"""Several app processes behind nginx: the plain script starts two, and a session runs through the proxy.

The plain script (deploy/run-processes.sh) runs here and in CI (.ci/run installs Debian's nginx).
The Docker path is checked only where `docker compose` exists (its file must be valid); elsewhere
it is skipped with the reason.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import free_port

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from sessions import one_session, session_link, wait_healthy  # noqa: E402

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


@dataclass(frozen=True)
class Deployment:
    url: str
    ports: list[int]
    run_dir: Path


@pytest.fixture(scope="module")
def proxy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    if not os.access(NGINX, os.X_OK):
        if os.environ.get("CI"):
            pytest.fail("nginx is missing in CI: .ci/run installs it")
        pytest.skip("nginx is not installed (apt-get install -y nginx); .ci/run installs it")
    run_dir = tmp_path_factory.mktemp("matchlens-run")
    listen, first = free_port(), free_port()
    ports = [first, first + 1]
    env = {**os.environ, "MATCHLENS_PROCESSES": "2", "MATCHLENS_LISTEN": f"127.0.0.1:{listen}",
           "MATCHLENS_FIRST_PORT": str(first), "MATCHLENS_RUN_DIR": str(run_dir), "PYTHON": sys.executable}
    log = (run_dir / "script.log").open("w")
    script = subprocess.Popen(["bash", str(ROOT / "deploy" / "run-processes.sh")], cwd=ROOT, env=env,
                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{listen}"
        for port in ports:
            wait_healthy(f"http://127.0.0.1:{port}")
        wait_healthy(url)
        yield Deployment(url, ports, run_dir)
    finally:
        script.terminate()  # the script stops its apps and nginx
        try:
            script.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(script.pid, signal.SIGKILL)
        log.close()
        assert script.poll() is not None


def test_two_processes_behind_nginx_serve_a_session(proxy: Deployment) -> None:
    url, ports = proxy.url, proxy.ports
    for port in ports:  # both app processes are up on their own ports
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=10) as response:
            assert response.read() == b"ok"
    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=10) as response:
        route = response.headers.get_all("Set-Cookie") or []
    assert any(cookie.startswith("matchlens_route=") for cookie in route), "the proxy sets the sticky cookie"
    # One session through the proxy: the websocket is upgraded and the page runs to the end.
    runs = asyncio.run(one_session(url, session_link(1, False), ["rank", "interactions"], timeout=120))
    assert [r.page for r in runs] == ["rank", "interactions"]
    assert all(not r.errors for r in runs), [r.errors for r in runs]


def test_a_sticky_cookie_keeps_a_browser_on_one_process(proxy: Deployment) -> None:
    """Requests carrying the same route cookie are all answered by the same process (nginx's log says which)."""
    url, log = proxy.url, proxy.run_dir / "logs" / "nginx-access.log"
    for route in ("student-7", "student-8", "student-9"):
        request = urllib.request.Request(f"{url}/_stcore/health", headers={"Cookie": f"matchlens_route={route}"})
        for _ in range(4):
            with urllib.request.urlopen(request, timeout=10) as response:
                cookies = response.headers.get_all("Set-Cookie") or []
            assert f"matchlens_route={route}; Path=/; HttpOnly; SameSite=Lax" in cookies
        upstreams = {line.split("upstream=")[1].split()[0] for line in log.read_text().splitlines()
                     if f"route={route}" in line}
        assert len(upstreams) == 1, f"{route} reached {upstreams}"


def test_compose_file_is_valid() -> None:
    docker = shutil.which("docker")
    if docker is None or subprocess.run([docker, "compose", "version"], capture_output=True).returncode != 0:
        pytest.skip("docker compose is not available here: deploy/compose.yaml is not checked "
                    "(the plain script above is the path tested in CI)")
    result = subprocess.run([docker, "compose", "-f", str(ROOT / "deploy" / "compose.yaml"), "config", "--quiet"],
                            capture_output=True, text=True, env={**os.environ, "MATCHLENS_PROCESSES": "3"})
    assert result.returncode == 0, result.stderr
