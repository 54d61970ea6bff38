"""Evaluation of collections that outgrow one machine: `dataset.evaluate`'s evaluation, run as Ray Data.

The file is cut into shards of whole questions (`text.shards`); a pool of actors, each holding
the checkpoints loaded once, reads each shard from its byte offsets, scores it
(`dataset.score_lists`, the code of one chunk of the one-process pipeline, in the same chunks) and
writes its per-question results as one Parquet file named for the shard, renamed into place once
whole. A worker that dies is restarted and its shard scored again by Ray; the file it writes is
the same one, so no question is counted twice, and a stopped run resumed (`resume`) scores only
the shards without a file. The driver then reads the files back and joins them (`dataset.assemble`)
into the `Evaluation` the one-process path gives, so the metric tables, baselines, significance
tests and slices come from the same code, after checking that every question is there exactly once.

Ray is an optional extra (`pip install matchlens[ray]`): it is imported only when a run starts.
Every machine must see the ranking file, the checkpoints and `out` at the same paths (a shared
file system), and have the package and its word vectors installed.
"""

from __future__ import annotations

import json
import logging
import os
import re
import socket
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from matching.evaluation.dataset import (
    Evaluation,
    SystemResults,
    assemble,
    chunks,
    mean_over_answerable,
    score_lists,
)
from matching.evaluation.metrics import METRICS
from matching.text.baselines import BASELINES
from matching.text.data import RankingList
from matching.text.shards import CHUNKING, Chunking, Shard, ShardedFile, read_shard, shard_ranking_file

RUN_FILE = "run.json"
"""What a results folder was written for (file, shards, models): a resumed run must be the same run."""

ONEDNN_CACHE = "ONEDNN_PRIMITIVE_CACHE_CAPACITY"
"""The variable that stops a worker's torch from keeping oneDNN kernels per shape (set to 0; see the CLI's evaluate)."""

RETRIES = 4
"""Restarts of a dead worker, and retries of the shard it held, before the run fails: enough for
a machine or two lost, not endless on a shard that kills every worker it is given."""


AUTH_MODE = "RAY_AUTH_MODE"


def token_mode_for_joining() -> None:
    """Ray (2.59 on) starts a cluster, `ray start --head` included, with token authentication when a token is at
    hand (~/.ray/auth_token, which its first local start writes; RAY_AUTH_TOKEN; RAY_AUTH_TOKEN_PATH), but a
    driver joining it with RAY_AUTH_MODE unset connects without the token and is refused. Joining, this process
    does what Ray's own start does: token mode where a token is at hand. A RAY_AUTH_MODE that is set decides."""
    token_at_hand = (os.environ.get("RAY_AUTH_TOKEN") or os.environ.get("RAY_AUTH_TOKEN_PATH")
                     or (Path.home() / ".ray" / "auth_token").is_file())
    if AUTH_MODE not in os.environ and token_at_hand:
        os.environ[AUTH_MODE] = "token"


HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
"""HTTP/2's connection preface and an empty SETTINGS frame: a gRPC server (Ray's GCS) answers with its own SETTINGS
frame (type 4), whatever its authentication; a web server, a database or an SSH server does not."""


def cluster_problem(address: str, seconds: float = 5.0) -> str | None:
    """Why no Ray cluster can be at a host:port address (None where one may be): nothing listens there, which Ray
    retries for minutes; or what listens does not speak gRPC as a Ray head's GCS port does, where Ray waited on
    without end (more than 5 minutes against a web server). Other forms ("auto", "ray://...") are Ray's to resolve."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or "://" in host:
        return None
    try:
        connection = socket.create_connection((host, int(port)), timeout=seconds)
    except OSError:
        return (f"no Ray cluster answers at {address}: start one there (ray start --head --port PORT, "
                "docs/deployment.md) or check the address")
    reply = b""
    with connection:
        try:
            connection.sendall(HTTP2_PREFACE)
            while len(reply) < 9 and (part := connection.recv(9 - len(reply))):
                reply += part
        except OSError:  # reset, or silent until the timeout
            pass
    if len(reply) < 9 or reply[3] != 4:
        return (f"something listens at {address}, but not a Ray cluster (it does not answer as a Ray head's GCS "
                "port does): give the port of ray start --head --port PORT (docs/deployment.md)")
    return None


class EngineError(RuntimeError):
    """A Ray run that cannot start or whose results do not add up; the message says why."""


class RunStopped(KeyboardInterrupt):
    """A run stopped by an interrupt (Ctrl-C) while its workers scored: the message says what is kept for --resume."""


def shard_path(out: Path, index: int) -> Path:
    return out / f"shard-{index:05d}.parquet"


def _column(system: int, field: str) -> str:
    # By the system's place in the run's list, so that any model name makes a valid column name.
    return f"{system}:{field}"


def results_table(part: Evaluation, lists: Sequence[RankingList], first: int, systems: Sequence[str]) -> Any:
    """A shard's per-question results as an Arrow table: one row per question of the shard, those
    left out included (with why), so that the driver can check that every question is there once."""
    import pyarrow as pa

    evaluated = {int(position): row for row, position in enumerate(part.positions)}
    reasons = iter(part.skipped)
    rows = [evaluated.get(first + n) for n in range(len(lists))]
    columns: dict[str, Any] = {
        "position": pa.array([first + n for n in range(len(lists))], pa.int64()),
        "qid": pa.array([item.qid for item in lists], pa.string()),
        "question": pa.array([item.question for item in lists], pa.string()),
        "skipped": pa.array([None if row is not None else next(reasons) for row in rows], pa.string()),
        "candidates": pa.array([len(item.candidates) for item in lists], pa.int64()),
        "correct": pa.array([sum(item.labels) for item in lists], pa.int64()),
        "slices": pa.array([None if row is None else json.dumps(part.slices[row]) for row in rows], pa.string()),
        "wordless": pa.array([0 if row is None else int(part.wordless[row]) for row in rows], pa.int64()),
    }
    for number, system in enumerate(systems):
        results = part.results[system]
        for metric in METRICS:
            columns[_column(number, metric)] = pa.array(
                [np.nan if row is None else results.metrics[metric][row] for row in rows], pa.float64())
        for field in ("first_correct", "top"):
            values = getattr(results, field)
            columns[_column(number, field)] = pa.array([0 if row is None else values[row] for row in rows], pa.int64())
    return pa.table(columns)


def results_of_table(table: Any, models: Sequence[str]) -> Evaluation:
    """`results_table`'s inverse: the `Evaluation` of a shard read back."""
    systems = [*models, *BASELINES]
    frame = table.to_pandas()
    kept = frame[frame["skipped"].isna()]
    results = {system: SystemResults({m: kept[_column(n, m)].to_numpy(np.float64) for m in METRICS},
                                     kept[_column(n, "first_correct")].to_numpy(np.int64),
                                     kept[_column(n, "top")].to_numpy(np.int64))
               for n, system in enumerate(systems)}
    return Evaluation(systems=systems, models=list(models), results=results,
                      overall={s: mean_over_answerable(values) for s, values in results.items()},
                      qids=kept["qid"].tolist(), questions=kept["question"].tolist(),
                      candidates=kept["candidates"].to_numpy(np.int64), correct=kept["correct"].to_numpy(np.int64),
                      positions=kept["position"].to_numpy(np.int64), skipped=frame["skipped"].dropna().tolist(),
                      slices=[json.loads(text) for text in kept["slices"]],
                      wordless=kept["wordless"].to_numpy(np.int64))


def write_atomically(table: Any, path: Path) -> None:
    """Write `table` to `path` whole or not at all: a worker killed while writing leaves no file
    that a resumed run would take for a finished shard."""
    import pyarrow.parquet as pq

    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    pq.write_table(table, partial)
    os.replace(partial, path)


WORKER = f"{socket.gethostname()}:{os.getpid()}"
"""This process, as the driver counts the workers that scored (a restarted worker is another process)."""


class ShardScorer:
    """The Ray Data actor: loads the checkpoints once, then reads, scores and writes one shard a call.

    Subclassed by the tests to make a worker die or a run stop at a chosen shard (`score`)."""

    def __init__(self, sharded: ShardedFile, checkpoints: Mapping[str, str], out: str, device: str) -> None:
        # Before this worker's first torch operation, when oneDNN reads it (see the CLI's evaluate). Set here, not as
        # a runtime environment of the job: a job with one has its workers started through Ray's runtime-environment
        # agent, later to their first shard (`bench/ray_worker_start.py`; docs/deployment.md).
        os.environ.setdefault(ONEDNN_CACHE, "0")
        import torch

        from matching.explain.matcher import choose_device
        from matching.text.embeddings import load_glove
        from matching.training.checkpoint import load_checkpoint

        # One torch thread per worker: workers, not threads, are what the engine adds (see docs/deployment.md).
        torch.set_num_threads(1)
        self.sharded, self.out = sharded, Path(out)
        vectors = load_glove()
        chosen = choose_device(device)
        self.models = {}
        for name, folder in checkpoints.items():
            matcher = load_checkpoint(folder, vectors).to(chosen)
            matcher.name = name  # the name the driver gave (a repeated name is its folder's)
            self.models[name] = matcher
        self.systems = [*self.models, *BASELINES]

    def score(self, shard: Shard, lists: Sequence[RankingList]) -> Evaluation:
        """One shard's results, scored in the chunks the one-process path scores (same pairs, same batches)."""
        return assemble(list(self.models), [score_lists(first, chunk, self.models)
                                            for first, chunk in chunks(lists, self.sharded.chunking, shard.before)])

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        shards = [self.sharded.shards[int(index)] for index in batch["shard"]]
        for shard in shards:
            lists = read_shard(self.sharded, shard)
            write_atomically(results_table(self.score(shard, lists), lists, shard.first, self.systems),
                             shard_path(self.out, shard.index))
        return {"shard": np.array([s.index for s in shards], dtype=np.int64),
                "pairs": np.array([s.pairs for s in shards], dtype=np.int64),
                "worker": np.array([WORKER] * len(shards))}


@dataclass(frozen=True)
class RayRun:
    """A finished Ray evaluation: the results, and which shards this run scored (the others were
    already written when it was resumed)."""

    evaluation: Evaluation
    scored: list[int]
    resumed: list[int]
    workers: int
    """The worker processes that scored a shard (the pool asked for may not all start: a cluster's free CPUs)."""


def run_record(sharded: ShardedFile, checkpoints: Mapping[str, str]) -> dict[str, Any]:
    """What `RUN_FILE` holds: a resumed run must find the same file, shards and models."""
    stat = sharded.path.stat()
    chunking = sharded.chunking
    return {"file": str(sharded.path.resolve()), "modified": stat.st_mtime_ns, "questions": sharded.questions,
            "pairs": sharded.pairs, "chunking": [chunking.questions, chunking.pairs],
            "shards": [[s.first, s.questions] for s in sharded.shards], "models": dict(checkpoints),
            "systems": [*checkpoints, *BASELINES]}


def prepare_out(out: Path, record: dict[str, Any], resume: bool) -> set[int]:
    """Make `out` ready for the run `record` describes; the shards already written there when resuming."""
    if out.exists() and not out.is_dir():
        raise EngineError(f"{out} is a file: --out needs a folder for the shards' results")
    run_file = out / RUN_FILE
    written = {int(path.stem.split("-")[1]) for path in out.glob("shard-*.parquet")} if out.is_dir() else set()
    if run_file.is_file():
        try:
            previous = json.loads(run_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise EngineError(f"{run_file} cannot be read ({error}): give an empty --out") from None
        if previous != record and (resume or written):
            # Another run's shards: --resume (what a folder of this run's shards is told to use) cannot finish them.
            before = previous if isinstance(previous, dict) else {}
            changed = sorted(key for key in record if before.get(key) != record[key])
            raise EngineError(f"{out} holds the results of another run (its {', '.join(changed)} differ); "
                              "give another --out, or run the same file and models again")
        if not resume and written:
            raise EngineError(f"{out} already holds {len(written)} shards of this run: pass --resume to finish it, "
                              "or give an empty --out")
    elif written:
        raise EngineError(f"{out} holds shard files without {RUN_FILE}: give an empty --out")
    try:
        out.mkdir(parents=True, exist_ok=True)
        run_file.write_text(json.dumps(record, indent=1), encoding="utf-8")
    except OSError as error:
        raise EngineError(f"--out {out} cannot be written: {error.strerror or error}") from None
    return written if resume else set()


def read_results(out: Path, sharded: ShardedFile, models: Sequence[str]) -> Evaluation:
    """The `Evaluation` of every shard's file under `out`, after checking that each question of the
    file is in exactly one of them, once."""
    import pyarrow.parquet as pq

    seen = np.zeros(sharded.questions, dtype=np.int64)
    parts = []
    for shard in sharded.shards:
        path = shard_path(out, shard.index)
        if not path.is_file():
            raise EngineError(f"{path}: shard {shard.index} was not written")
        table = pq.read_table(path)
        positions = table["position"].to_numpy()
        if len(positions) != shard.questions or not np.array_equal(
                positions, np.arange(shard.first, shard.first + shard.questions)):
            raise EngineError(f"{path}: holds questions other than the shard's {shard.questions} from {shard.first}")
        np.add.at(seen, positions, 1)
        parts.append(results_of_table(table, models))
    if not (seen == 1).all():
        raise EngineError(f"{int((seen == 0).sum())} questions missing and {int((seen > 1).sum())} counted twice")
    return assemble(list(models), parts)


def importable_in_workers() -> None:
    """A local instance's workers inherit this process's environment but not its `sys.path`: a checkout that is
    not installed, run from another folder (`cd bench && python ray_evaluate.py`, a notebook elsewhere), gave
    workers that could not unpickle the scorer ("No module named 'matching'"). Its folder goes on PYTHONPATH; an
    installed package needs nothing (a cluster's machines install it: docs/deployment.md)."""
    root = str(Path(__file__).resolve().parents[2])
    if Path(root).name in ("site-packages", "dist-packages"):
        return
    paths = [path for path in os.environ.get("PYTHONPATH", "").split(os.pathsep) if path]
    if root not in paths:
        os.environ["PYTHONPATH"] = os.pathsep.join([root, *paths])


def refused(address: str) -> str:
    """The cluster at `address` refused this process's token: what to give it."""
    return (f"the Ray cluster at {address} refused this process's token ({AUTH_MODE} is "
            f"{os.environ.get(AUTH_MODE, 'unset')}): give it the head's token (~/.ray/auth_token or "
            f"RAY_AUTH_TOKEN); a head started with {AUTH_MODE}=disabled needs {AUTH_MODE}=disabled here too "
            "(docs/deployment.md)")


def not_joined(address: str, error: BaseException) -> str:
    """Why joining the cluster at `address` failed, in one line: a refused token said as such (Ray names it in the
    errors under its ConnectionError, whose own text names the head's node address, not the one given)."""
    causes, seen = [], error
    while seen is not None and len(causes) < 10:
        causes.append(seen)
        seen = seen.__cause__ or seen.__context__
    if any("InvalidAuthToken" in str(cause) or type(cause).__name__ == "AuthenticationError" for cause in causes):
        return refused(address)
    return (f"could not join the Ray cluster at {address}. Is it running ({AUTH_MODE}=token ray status --address "
            f"{address})? A cluster with token authentication needs its token here too: ~/.ray/auth_token or "
            "RAY_AUTH_TOKEN (docs/deployment.md)")


def token_refused(address: str) -> bool:
    """Whether the cluster at `address` refuses this process's token, asked once: Ray's own join asks 20 times a second
    apart, printing a line of its log each time, before it gives up (Ray 2.60). Anything but a refused token (another
    failure, or a Ray whose client moved) answers False and is left to the join, which says it as before."""
    try:
        from ray._raylet import GcsClient
        from ray.exceptions import AuthenticationError
    except ImportError:
        return False
    try:
        GcsClient(address=address)
    except AuthenticationError:
        return True
    except Exception:  # noqa: BLE001  (the join that follows reports it)
        return False
    return False


def failure(error: BaseException) -> str:
    """What went wrong in a worker, in one line: the first exception of the user's code that a Ray error's message
    quotes ("ModuleNotFoundError: No module named 'matching'"), not Ray's pages of its own traceback around it."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    quoted = [line for line in lines if re.match(r"[A-Za-z_]\w*(Error|Exception): ", line)]
    return (quoted or lines or [type(error).__name__])[0]


def default_workers(address: str | None) -> int:
    """Scoring workers: one per CPU of the cluster joined, or of this machine."""
    import ray

    return max(1, int(ray.cluster_resources().get("CPU", 1))) if address else max(1, os.cpu_count() or 1)


def evaluate_ray(path: str | Path, checkpoints: Mapping[str, str | Path], out: str | Path, *,
                 address: str | None = None, workers: int | None = None, resume: bool = False,
                 device: str = "cpu", chunking: Chunking = CHUNKING,
                 progress: Callable[[int, int], None] | None = None,
                 scorer: type[ShardScorer] = ShardScorer) -> RayRun:
    """`dataset.evaluate` of the ranking file at `path` by the models of `checkpoints` (name ->
    checkpoint folder), on Ray: a local instance of this machine's cores, or the cluster at `address`.

    `workers` actors score the shards, each one chunk of `chunking` (`text.shards`), scored as the
    one-process path scores that chunk. `progress(pairs done, pairs)` is called as shards are written.
    """
    if workers is not None and workers < 1:
        raise EngineError(f"{workers} workers: give at least 1, or None for one per CPU")
    if address:
        problem = cluster_problem(address)
        if problem:
            raise EngineError(problem)
        token_mode_for_joining()  # before Ray is imported: it reads its settings once
    import ray

    out = Path(out)
    folders = {name: str(Path(folder).resolve()) for name, folder in checkpoints.items()}
    sharded = shard_ranking_file(path, chunking)
    written = prepare_out(out, run_record(sharded, folders), resume)
    todo = [shard.index for shard in sharded.shards if shard.index not in written]
    scored: list[int] = []
    scorers: set[str] = set()
    if todo:
        started = not ray.is_initialized()
        if started:
            if address:
                if token_refused(address):
                    raise EngineError(refused(address))
                try:
                    ray.init(address=address, log_to_driver=False, logging_level=logging.WARNING)
                except ConnectionError as error:
                    raise EngineError(not_joined(address, error)) from error
            else:  # as many logical CPUs as workers, so that the pool starts whole even on a small machine
                importable_in_workers()
                local = workers or max(1, os.cpu_count() or 1)
                ray.init(num_cpus=max(local, os.cpu_count() or 1), include_dashboard=False, log_to_driver=False,
                         logging_level=logging.WARNING)
        try:
            if device == "cuda" and not ray.cluster_resources().get("GPU"):
                # Each worker asks for a GPU: on a cluster without one, Ray would wait for it without end.
                raise EngineError("--device cuda: the Ray cluster has no GPU (ray status lists what it has); give "
                                  "--device cpu, or auto to use a GPU where a worker's machine has one")
            pool = workers or default_workers(address)
            context = ray.data.DataContext.get_current()
            context.enable_progress_bars = False
            logging.getLogger("ray.data").setLevel(logging.WARNING)  # one line per dataset run otherwise
            # nor its warning that progress bars are off: this engine turns them off and prints its own progress
            logging.getLogger("ray.data._internal.progress").setLevel(logging.ERROR)
            done = sum(sharded.shards[index].pairs for index in written)
            if progress:
                progress(done, sharded.pairs)
            dataset = ray.data.from_items([{"shard": index} for index in todo], override_num_blocks=len(todo))
            with warnings.catch_warnings():
                # Ray 2.60 names no parameter for an actor's restarts and retries yet: they go as remote
                # args, which it warns are deprecated (hence ray<2.64 in the extra).
                warnings.simplefilter("ignore", DeprecationWarning)
                results = dataset.map_batches(
                    scorer, batch_size=1, compute=ray.data.ActorPoolStrategy(size=min(pool, len(todo))),
                    fn_constructor_kwargs={"sharded": sharded, "checkpoints": folders, "out": str(out),
                                           "device": device},
                    num_cpus=1, num_gpus=1 if device == "cuda" else None,
                    max_restarts=RETRIES, max_task_retries=RETRIES)
            try:
                # Each shard's row as its worker writes it: iter_rows() fetches one batch ahead, so with one worker
                # every row came a shard late (the last two together) and the progress ran a shard behind.
                for batch in results.iter_batches(batch_size=None, prefetch_batches=0, batch_format="numpy"):
                    scorers.update(str(worker) for worker in batch["worker"])
                    for shard_index, pairs in zip(batch["shard"], batch["pairs"], strict=True):
                        scored.append(int(shard_index))
                        done += int(pairs)
                        if progress:
                            progress(done, sharded.pairs)
            except KeyboardInterrupt:
                kept = len(list(out.glob("shard-*.parquet")))
                raise RunStopped(f"stopped: {kept} of {len(sharded.shards)} shards are written in {out} (--resume "
                                 "goes on from them)") from None
            except ray.exceptions.RayError as error:  # the shards written so far stay: --resume goes on from them
                kept = len(list(out.glob("shard-*.parquet")))
                raise EngineError(f"the Ray workers failed: {failure(error)}. {kept} of {len(sharded.shards)} shards "
                                  f"are written in {out} (--resume goes on from them); every machine needs the "
                                  "package and its word vectors installed (docs/deployment.md)") from error
        finally:
            if started:
                ray.shutdown()
    evaluation = read_results(out, sharded, list(folders))
    return RayRun(evaluation, scored, sorted(written), len(scorers))

