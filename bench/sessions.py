"""Session load: N students open a shared link at once, over Streamlit's own websocket protocol.

No browser: each session is a websocket client speaking the `streamlit.proto` messages the
browser speaks (a BackMsg `rerun_script` with the link's query string and the page, then the
ForwardMsgs up to `script_finished`), so the client costs little and the server does all the
work a browser would make it do. Each session opens a shared link of its own (its own question,
20 candidates) on the first chosen page, then moves through the other chosen pages.

Printed per page: p50 / p95 / max seconds from the request to the finished run, over every
session of every round; the exceptions and error boxes seen; the server's CPU seconds and peak
memory (when the bench started the server, or with --server-pid). With --cpu-runs K it also
runs K fresh sessions one at a time per page and prints the median server CPU per page run.

Run: python bench/sessions.py                       # starts the app on 127.0.0.1:8610
     python bench/sessions.py --url http://127.0.0.1:8080 --server-pid 123 456   # a running server
Options: --sessions 20 --rounds 3 --pages rank interactions --cpu-runs 0 --same-link --warmup 1
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from common import CANDIDATES, QUESTION, ROOT
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from matching.explain.urlstate import SharedState, encode

PAGES = {"rank": "", "attention": "attention", "interactions": "interactions", "pooled": "pooled",
         "evaluate": "evaluate", "models": "models"}
"""Page name -> its URL path (the router's url_path; Rank is the default page)."""
ERROR_TEXTS = ("unexpected problem", "could not start", "Traceback")
"""Words of the app's own error boxes (its guard turns an exception into one of these)."""
WORDS = ("empire", "republic", "city", "army", "senate", "emperor", "law", "trade", "church", "barbarians",
         "taxes", "roads", "legions", "province", "coins", "plague", "borders", "gods", "slaves", "grain")


# ---------------------------------------------------------------- the links

def session_link(number: int, same: bool) -> str:
    """The query string of a shared link: its own question (unless `same`), 20 candidates."""
    question = QUESTION if same else f"{QUESTION[:-2]} {WORDS[number % len(WORDS)]} {number}?"
    params = encode(SharedState(question=question, candidates=tuple(CANDIDATES), gold=(), pick=0, models=None))
    assert params is not None, "the bench's link must fit in a URL"
    return urllib.parse.urlencode(params)


# ---------------------------------------------------------------- the server

@dataclass
class Server:
    url: str
    pids: list[int]
    process: subprocess.Popen[bytes] | None = None

    def cpu_seconds(self) -> float | None:
        """User + system CPU seconds of the server processes so far (all their threads)."""
        if not self.pids:
            return None
        ticks = os.sysconf("SC_CLK_TCK")
        total = 0.0
        for pid in self.pids:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks
        return total

    def memory_mib(self) -> float | None:
        """Resident memory of the server processes now, MiB."""
        if not self.pids:
            return None
        total = 0
        for pid in self.pids:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        return total / 1024


def wait_healthy(url: str, timeout: float = 90.0, process: subprocess.Popen[bytes] | None = None) -> None:
    """Wait for the server at `url` to answer its health check (giving up at once if `process` exits)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the server for {url} exited with status {process.returncode}")
        time.sleep(0.3)
    raise RuntimeError(f"{url} did not answer /_stcore/health within {timeout:.0f} s")


@contextmanager
def started_app(port: int, log: Path | None = None, root: Path = ROOT) -> Iterator[Server]:
    """`streamlit run app.py` as the README runs it (its .streamlit/config.toml), on 127.0.0.1:port;
    its output goes to `log` when given. `root` is the checkout served (another one, to compare)."""
    command = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
               "--server.address", "127.0.0.1", "--server.headless", "true"]
    if log:
        log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") if log else contextlib.nullcontext() as output:
        process = subprocess.Popen(command, cwd=root, stdout=output or subprocess.DEVNULL,
                                   stderr=subprocess.STDOUT if output else subprocess.DEVNULL)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_healthy(url, process=process)
            yield Server(url, [process.pid], process)
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


# ---------------------------------------------------------------- one session

@dataclass
class Run:
    page: str
    seconds: float
    errors: list[str] = field(default_factory=list)


def _errors_in(message: ForwardMsg) -> list[str]:
    if not message.HasField("delta") or not message.delta.HasField("new_element"):
        return []
    element = message.delta.new_element
    kind = element.WhichOneof("type")
    if kind == "exception":
        return [f"exception {element.exception.type}: {element.exception.message[:120]}"]
    if kind == "alert" and any(text in element.alert.body for text in ERROR_TEXTS):
        return [f"error box: {element.alert.body[:120]}"]
    return []


class Session:
    """One browser tab's worth of protocol: rerun requests out, forward messages in."""

    def __init__(self, url: str, query: str) -> None:
        self.stream = url.replace("http", "ws", 1) + "/_stcore/stream"
        self.query = query

    async def open(self, timeout: float) -> None:
        self.socket = await asyncio.wait_for(
            # No keepalive pings (the browser sends none): a busy server would be counted as gone.
            connect(self.stream, subprotocols=["streamlit"], max_size=None, open_timeout=timeout,
                    ping_interval=None), timeout)

    async def run_page(self, page: str, timeout: float) -> Run:
        request = BackMsg()
        request.rerun_script.query_string = self.query
        request.rerun_script.page_name = PAGES[page]
        start = time.perf_counter()
        await self.socket.send(request.SerializeToString())
        errors: list[str] = []
        deadline = start + timeout
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                errors.append(f"no finished run within {timeout:.0f} s")
                break
            message = ForwardMsg()
            message.ParseFromString(await asyncio.wait_for(self.socket.recv(), remaining))
            errors += _errors_in(message)
            if message.HasField("page_info_changed"):
                self.query = message.page_info_changed.query_string  # the app rewrites the link
            if message.HasField("script_finished"):
                status = message.script_finished
                if status == ForwardMsg.FINISHED_SUCCESSFULLY:
                    break
                if status != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                    errors.append(f"script finished with status {ForwardMsg.ScriptFinishedStatus.Name(status)}")
                    break
        return Run(page, time.perf_counter() - start, errors)

    async def close(self) -> None:
        with contextlib.suppress(ConnectionClosed, OSError, TimeoutError):
            await self.socket.close()


async def one_session(url: str, query: str, pages: Sequence[str], timeout: float) -> list[Run]:
    session = Session(url, query)
    try:
        await session.open(timeout)
    except (OSError, TimeoutError, InvalidHandshake) as error:
        return [Run(pages[0], timeout, [f"could not connect: {type(error).__name__}: {error}"])]
    runs = []
    try:
        for page in pages:
            try:
                runs.append(await session.run_page(page, timeout))
            except (OSError, TimeoutError, ConnectionClosed) as error:
                runs.append(Run(page, timeout, [f"{type(error).__name__}: {error}"]))
                break
    finally:
        await session.close()
    return runs


# ---------------------------------------------------------------- the figures

def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def load_rounds(server: Server, sessions: int, rounds: int, pages: Sequence[str], same: bool,
                      timeout: float) -> None:
    print(f"load: {sessions} concurrent sessions x {rounds} rounds, pages {' -> '.join(pages)}, "
          f"{'one shared link for all' if same else 'each session on a link with its own question'}, "
          f"{len(CANDIDATES)} candidates")
    runs: list[Run] = []
    peak = server.memory_mib()
    cpu_start, wall_start = server.cpu_seconds(), time.perf_counter()
    for round_number in range(rounds):
        tasks = [one_session(server.url, session_link(round_number * sessions + n + 1, same), pages, timeout)
                 for n in range(sessions)]
        gathered = asyncio.gather(*tasks)
        while not gathered.done():
            await asyncio.sleep(0.25)
            memory = server.memory_mib()
            peak = max(peak or 0.0, memory or 0.0) if memory is not None else None
        for session_runs in gathered.result():
            runs += session_runs
    wall = time.perf_counter() - wall_start
    for page in pages:
        times = [r.seconds for r in runs if r.page == page]
        if times:
            print(f"  {page:<12} runs {len(times):>3}: p50 {percentile(times, 0.5):6.2f} s  "
                  f"p95 {percentile(times, 0.95):6.2f} s  max {max(times):6.2f} s")
    errors = [f"{r.page}: {e}" for r in runs for e in r.errors]
    print(f"  errors: {len(errors)}" + "".join(f"\n    {e}" for e in sorted(set(errors))[:10]))
    cpu_end = server.cpu_seconds()
    if cpu_start is not None and cpu_end is not None:
        print(f"  server CPU: {cpu_end - cpu_start:.1f} s over {wall:.1f} s wall "
              f"({(cpu_end - cpu_start) / max(len(runs), 1):.2f} s per page run); peak memory {peak:,.0f} MiB")
    else:
        print("  server CPU and memory: not measured (give --server-pid for a server the bench did not start)")


async def cpu_per_run(server: Server, pages: Sequence[str], count: int, same: bool, timeout: float) -> None:
    """Fresh sessions one at a time, each opening its link straight on `page`: server CPU per run."""
    if server.cpu_seconds() is None:
        print("CPU per page run: not measured (give --server-pid)")
        return
    print(f"server CPU per page run: {count} fresh sessions per page, one at a time, each opening "
          f"{'the same link' if same else 'a link with its own question'} on that page")
    for index, page in enumerate(pages):
        costs = []
        for number in range(count):
            link = session_link(10_000 + index * count + number, same)
            before = server.cpu_seconds()
            runs = await one_session(server.url, link, [page], timeout)
            await asyncio.sleep(0.3)  # let the server finish sending and closing the session
            after = server.cpu_seconds()
            assert before is not None and after is not None
            if not any(r.errors for r in runs):
                costs.append(after - before)
        if costs:
            print(f"  {page:<12} median {statistics.median(costs):.3f} s CPU (min {min(costs):.3f}, "
                  f"max {max(costs):.3f}, {len(costs)} runs)")
        else:
            print(f"  {page:<12} every run failed")


async def main_async(args: argparse.Namespace, server: Server) -> None:
    # A teacher's server has been opened before the class comes in: the models are loaded (behind
    # a proxy, several warm-up sessions so that every process has served one).
    for number in range(args.warmup):
        await one_session(server.url, session_link(-1 - number, False), list(PAGES), args.timeout)
    if args.cpu_runs:
        await cpu_per_run(server, args.pages, args.cpu_runs, args.same_link, args.timeout)
    if args.sessions and args.rounds:
        await load_rounds(server, args.sessions, args.rounds, args.pages, args.same_link, args.timeout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", help="target a running app (default: start one on 127.0.0.1:--port)")
    parser.add_argument("--port", type=int, default=8610)
    parser.add_argument("--server-pid", type=int, nargs="*", default=[],
                        help="processes to measure CPU and memory of, with --url")
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pages", nargs="+", default=["rank", "interactions"], choices=list(PAGES))
    parser.add_argument("--cpu-runs", type=int, default=0, help="fresh sessions per page for the CPU figure")
    parser.add_argument("--same-link", action="store_true", help="every session opens the same link")
    parser.add_argument("--warmup", type=int, default=1,
                        help="untimed sessions first, each through every page (more behind a proxy)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds a page run may take")
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} CPUs")
    if args.url:
        server = Server(args.url.rstrip("/"), list(args.server_pid))
        wait_healthy(server.url)
        asyncio.run(main_async(args, server))
    else:
        with started_app(args.port) as server:
            asyncio.run(main_async(args, server))


if __name__ == "__main__":
    main()
