"""evaluate --engine ray: shards of whole questions scored by Ray workers give the one-process results,
with a worker killed mid-run and with a stopped run resumed; every question is counted exactly once."""

from __future__ import annotations

import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import DISTRACTORS, FACTS, free_port

from matching.evaluation.dataset import Evaluation, chunks, evaluate, format_table
from matching.text.baselines import BASELINES
from matching.text.data import RankingList, open_ranking_file, read_ranking_file, write_toks_folder
from matching.text.shards import Chunking, read_shard, shard_ranking_file
from matching.training.checkpoint import load_checkpoint
from matching.training.reporting import evaluation_notes

PRETRAINED = Path(__file__).resolve().parent.parent / "pretrained"
CHECKPOINTS = {name: PRETRAINED / name for name in ("mvlstm", "cdssm")}
"""Two shipped checkpoints of different families (a Bi-LSTM and a convolutional one), both small."""
CHUNKING = Chunking(questions=8, pairs=30)
"""Chunks of 8 questions or 30 pairs: the generated lists (3 to 7 candidates) close some chunks by each bound."""


def generated_lists(questions: int = 60, seed: int = 11) -> list[RankingList]:
    """Invented questions resampled from the test facts: 3 to 7 candidates each (about 300 pairs),
    some with no correct one, one question without words (skipped), candidates without words, repeated texts
    (ties)."""
    rng = random.Random(seed)
    answers = [answer for _, answer, _ in FACTS] + DISTRACTORS
    lists = []
    for n in range(questions):
        question, answer, _ = FACTS[rng.randrange(len(FACTS))]
        candidates = [rng.choice(answers) for _ in range(rng.randint(2, 6))]
        place = rng.randrange(len(candidates) + 1)
        candidates.insert(place, answer if n % 9 else rng.choice(DISTRACTORS))
        if n % 11 == 5:  # a candidate without words: ranked last, counted in `wordless`
            candidates.append("\u200b")
        labels = tuple(int(c == answer) for c in candidates)
        lists.append(RankingList(f"G{n}", question if n != 17 else " ", tuple(candidates), labels))
    return lists


@pytest.fixture(scope="module")
def ranking_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_toks_folder(tmp_path_factory.mktemp("generated") / "test", generated_lists())


@pytest.fixture(scope="module")
def one_process(ranking_folder: Path) -> Evaluation:
    models = {name: load_checkpoint(folder) for name, folder in CHECKPOINTS.items()}
    return evaluate(open_ranking_file(ranking_folder), models, workers=1, chunking=CHUNKING)


@pytest.fixture(scope="module")
def ray_instance():  # type: ignore[no-untyped-def]
    """One local Ray instance for the module's runs (the engine joins it rather than starting its own)."""
    ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'matchlens[ray]'")
    pytest.importorskip("ray.data")
    # Two scoring workers and the driver on a small CI machine: logical CPUs, not a promise of cores.
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": {"PYTHONPATH": str(Path(__file__).resolve().parent.parent)}})
    yield ray
    ray.shutdown()


def assert_same(ray_result: Evaluation, expected: Evaluation) -> None:
    """The same questions, per-question AP and MAP (to 1e-9) for every model and baseline, tables and slices."""
    assert ray_result.systems == expected.systems == [*CHECKPOINTS, *BASELINES]
    assert ray_result.qids == expected.qids and ray_result.positions.tolist() == expected.positions.tolist()
    assert ray_result.skipped == expected.skipped and ray_result.slices == expected.slices
    assert ray_result.wordless.tolist() == expected.wordless.tolist()
    for system in expected.systems:
        np.testing.assert_allclose(ray_result.ap(system), expected.ap(system), rtol=0, atol=1e-9, equal_nan=True)
        assert abs(ray_result.overall[system]["MAP"] - expected.overall[system]["MAP"]) < 1e-9
        assert ray_result.first_correct(system) == expected.first_correct(system)
    assert format_table(ray_result) == format_table(expected)
    assert ray_result.slice_rows() == expected.slice_rows()
    cards = {name: {} for name in CHECKPOINTS}
    assert evaluation_notes(ray_result, cards) == evaluation_notes(expected, cards)


def assert_each_question_once(run, ranking_folder: Path) -> None:  # type: ignore[no-untyped-def]
    checked = open_ranking_file(ranking_folder)
    positions = sorted([*run.evaluation.positions.tolist(),
                        *(n for n in range(checked.questions) if n not in set(run.evaluation.positions.tolist()))])
    assert positions == list(range(checked.questions))
    assert run.evaluation.evaluated + len(run.evaluation.skipped) == checked.questions
    assert len(set(run.evaluation.positions.tolist())) == run.evaluation.evaluated


def test_shards_hold_whole_questions_and_read_back_the_file(ranking_folder: Path, tmp_path: Path) -> None:
    sharded = shard_ranking_file(ranking_folder, CHUNKING)
    lists = read_ranking_file(ranking_folder)
    # One shard a chunk of the one-process path (8 questions or 30 pairs, whichever first, as many as those
    # bounds need for the file's pairs, of even size): the same cuts, each shard resuming the cutting.
    assert sharded.chunking == CHUNKING.for_file(len(lists), sharded.pairs)
    cut = list(chunks(lists, sharded.chunking))
    assert [(shard.first, shard.questions) for shard in sharded.shards] == [(first, len(chunk)) for first, chunk in cut]
    assert len(cut) == -(-sharded.pairs // CHUNKING.pairs)
    longest = max(len(item.candidates) for item in lists)  # a cut falls within a question of each even share
    assert all(abs(shard.pairs - sharded.pairs / len(cut)) < longest for shard in sharded.shards)
    assert sum(shard.pairs for shard in sharded.shards) == sharded.pairs
    for shard in sharded.shards:
        assert shard.before == (shard.first, sum(len(item.candidates) for item in lists[:shard.first]))
        own = read_shard(sharded, shard)
        assert list(chunks(own, sharded.chunking, shard.before)) == [(shard.first, own)]
    read = [read_shard(sharded, shard) for shard in sharded.shards]
    assert [len(lists) for lists in read] == [shard.questions for shard in sharded.shards]
    assert [item for lists in read for item in lists] == read_ranking_file(ranking_folder)
    # A CSV file with a header, a quoted candidate over two lines and Windows line ends: the same lists.
    csv_file = tmp_path / "upload.csv"
    csv_file.write_bytes(b'question,candidate,label\r\nwho wrote hamlet,"shakespeare\nwrote it",1\r\n'
                         b"who wrote hamlet,a play,0\r\nwhat do bees make,honey,1\r\nwhat color is the sky,blue,1\r\n")
    sharded = shard_ranking_file(csv_file, Chunking(questions=1))
    assert [shard.questions for shard in sharded.shards] == [1, 1, 1]
    assert [item for shard in sharded.shards for item in read_shard(sharded, shard)] == read_ranking_file(csv_file)


def test_a_shard_of_several_chunks_is_scored_in_the_one_process_chunks(tmp_path: Path) -> None:
    """Where no shard can begin (a row ended by a lone carriage return, the next one on the same line of
    bytes), a shard holds several chunks; its worker cuts them where the one-process path does, resuming
    the file's even cutting where the shard begins."""
    rows = [f"q{n},a{n},1\nq{n},b{n},0" + ("\r" if n == 7 else "\n") for n in range(1, 11)]
    upload = tmp_path / "upload.csv"
    upload.write_text("question,candidate,label\n" + "".join(rows), encoding="utf-8", newline="")
    chunking = Chunking(questions=4)  # 10 questions: 3 chunks, closed at 4, 7 and 10 questions read
    lists = read_ranking_file(upload)
    expected = list(chunks(lists, chunking.for_file(len(lists), 20)))
    assert [len(chunk) for _, chunk in expected] == [4, 3, 3]
    sharded = shard_ranking_file(upload, chunking)
    assert [(shard.first, shard.questions, shard.before) for shard in sharded.shards] == [(0, 4, (0, 0)),
                                                                                            (4, 6, (4, 8))]
    assert [cut for shard in sharded.shards for cut in chunks(read_shard(sharded, shard), sharded.chunking,
                                                               shard.before)] == expected
    # A file whose rows of one question lie apart is one shard, cut into the same chunks.
    apart = tmp_path / "apart.csv"
    apart.write_text("question,candidate,label\nq1,a,1\nq2,b,1\nq1,c,0\n", encoding="utf-8")
    sharded = shard_ranking_file(apart, Chunking(questions=1))
    shard, = sharded.shards
    assert list(chunks(read_shard(sharded, shard), sharded.chunking, shard.before)) == list(
        chunks(read_ranking_file(apart), Chunking(questions=1).for_file(2, 3)))


def test_a_worker_turns_off_the_onednn_kernel_cache_itself(ranking_folder: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Each worker sets the setting before its first torch operation, so a cluster's workers have it without a
    runtime environment of the job (one made Ray start the workers through its runtime-environment agent)."""
    from matching.evaluation.ray_engine import ONEDNN_CACHE, ShardScorer

    sharded, checkpoint = shard_ranking_file(ranking_folder, CHUNKING), {"cdssm": str(CHECKPOINTS["cdssm"])}
    monkeypatch.delenv(ONEDNN_CACHE, raising=False)
    ShardScorer(sharded, checkpoint, str(tmp_path), "cpu")
    assert os.environ[ONEDNN_CACHE] == "0"
    monkeypatch.setenv(ONEDNN_CACHE, "64")  # a value the user set is theirs
    ShardScorer(sharded, checkpoint, str(tmp_path), "cpu")
    assert os.environ[ONEDNN_CACHE] == "64"


def test_ray_gives_the_one_process_results(ray_instance, ranking_folder: Path, one_process: Evaluation,  # type: ignore[no-untyped-def]
                                           tmp_path: Path) -> None:
    from matching.evaluation.ray_engine import evaluate_ray

    reports: list[tuple[int, int]] = []
    run = evaluate_ray(ranking_folder, CHECKPOINTS, tmp_path / "out", workers=2, chunking=CHUNKING,
                       progress=lambda done, pairs: reports.append((done, pairs)))
    shards = len(shard_ranking_file(ranking_folder, CHUNKING).shards)
    assert sorted(run.scored) == list(range(shards)) and run.resumed == []
    assert len(list((tmp_path / "out").glob("shard-*.parquet"))) == shards
    assert reports[-1] == (one_process_pairs(ranking_folder),) * 2
    assert_each_question_once(run, ranking_folder)
    assert_same(run.evaluation, one_process)


def one_process_pairs(folder: Path) -> int:
    return open_ranking_file(folder).pairs


def test_a_worker_killed_mid_run_gives_the_same_tables(ray_instance, ranking_folder: Path,  # type: ignore[no-untyped-def]
                                                       one_process: Evaluation, tmp_path: Path) -> None:
    from matching.evaluation.ray_engine import ShardScorer, evaluate_ray

    killed = tmp_path / "killed"

    class DyingScorer(ShardScorer):
        """Kills its own process (SIGKILL, no clean-up) while scoring shard 2, the first time any worker does."""

        def score(self, shard, lists):  # type: ignore[no-untyped-def]
            if shard.index == 2:
                try:
                    os.close(os.open(killed, os.O_CREAT | os.O_EXCL))
                except FileExistsError:
                    pass
                else:
                    os.kill(os.getpid(), signal.SIGKILL)
            return super().score(shard, lists)

    run = evaluate_ray(ranking_folder, CHECKPOINTS, tmp_path / "out", workers=2, chunking=CHUNKING,
                       scorer=DyingScorer)
    assert killed.exists()  # a worker did die, and its shard was scored again by another
    assert 2 in run.scored
    assert_each_question_once(run, ranking_folder)
    assert_same(run.evaluation, one_process)


def test_a_stopped_run_resumed_gives_the_same_tables(ray_instance, ranking_folder: Path,  # type: ignore[no-untyped-def]
                                                     one_process: Evaluation, tmp_path: Path) -> None:
    from matching.evaluation.ray_engine import EngineError, ShardScorer, evaluate_ray

    class StoppingScorer(ShardScorer):
        """Stops the run (an error Ray does not retry) at its second shard, after writing the first."""

        calls = 0

        def score(self, shard, lists):  # type: ignore[no-untyped-def]
            self.calls += 1
            if self.calls == 2:
                raise RuntimeError("the run is stopped here")
            return super().score(shard, lists)

    out = tmp_path / "out"
    stopped = r"workers failed: RuntimeError: the run is stopped here\. \d+ of \d+ shards are written .*--resume"
    with pytest.raises(EngineError, match=stopped) as failed:
        evaluate_ray(ranking_folder, CHECKPOINTS, out, workers=1, chunking=CHUNKING,
                     scorer=StoppingScorer)
    shards = len(shard_ranking_file(ranking_folder, CHUNKING).shards)
    written = sorted(int(path.stem.split("-")[1]) for path in out.glob("shard-*.parquet"))
    # The first shard at least; the actor may also finish the shard queued behind the one that stopped the run
    # (Ray Data gives an actor two at a time) before the driver sees the error, or until Ray stops.
    assert 1 <= len(written) < shards
    counted = re.search(r"(\d+) of (\d+) shards", str(failed.value))
    assert counted and 1 <= int(counted[1]) <= len(written) and int(counted[2]) == shards
    with pytest.raises(EngineError, match="--resume"):  # not resumed: refused rather than mixed
        evaluate_ray(ranking_folder, CHECKPOINTS, out, workers=1, chunking=CHUNKING)
    run = evaluate_ray(ranking_folder, CHECKPOINTS, out, workers=2, chunking=CHUNKING, resume=True)
    # Each shard scored exactly once over the two runs: those written before, then the others.
    assert run.resumed == written
    assert sorted(run.scored) == sorted(set(range(shards)) - set(written))
    assert_each_question_once(run, ranking_folder)
    assert_same(run.evaluation, one_process)
    # Resumed again with every shard written, nothing is scored and the tables are read back the same.
    again = evaluate_ray(ranking_folder, CHECKPOINTS, out, chunking=CHUNKING, resume=True)
    assert again.scored == [] and again.resumed == list(range(shards))
    assert_same(again.evaluation, one_process)


def test_cuda_on_a_cluster_without_a_gpu_is_refused(ray_instance, ranking_folder: Path,  # type: ignore[no-untyped-def]
                                                     tmp_path: Path) -> None:
    """Each worker asks Ray for a GPU with --device cuda: where the cluster has none, Ray waited for one without end
    (the driver's own machine is not asked: a cluster's GPUs may be on other machines)."""
    from matching.evaluation.ray_engine import EngineError, evaluate_ray

    if ray_instance.cluster_resources().get("GPU"):
        pytest.skip("this machine has a GPU")
    with pytest.raises(EngineError, match="--device cuda: the Ray cluster has no GPU"):
        evaluate_ray(ranking_folder, CHECKPOINTS, tmp_path / "out", workers=1, chunking=CHUNKING, device="cuda")


def test_a_results_folder_of_another_run_is_refused(ranking_folder: Path, tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    from matching.evaluation.ray_engine import EngineError, prepare_out, run_record

    sharded = shard_ranking_file(ranking_folder, CHUNKING)
    out = tmp_path / "out"
    record = run_record(sharded, {"mvlstm": str(CHECKPOINTS["mvlstm"])})
    assert prepare_out(out, record, resume=True) == set()
    (out / "shard-00000.parquet").write_bytes(b"")
    assert prepare_out(out, record, resume=True) == {0}
    other = run_record(sharded, {"cdssm": str(CHECKPOINTS["cdssm"])})
    with pytest.raises(EngineError, match="another run .*models"):
        prepare_out(out, other, resume=True)
    # Without --resume too: it was told to pass --resume, which then refused the folder for the same reason.
    with pytest.raises(EngineError, match="another run .*models"):
        prepare_out(out, other, resume=False)
    with pytest.raises(EngineError, match="of this run: pass --resume"):
        prepare_out(out, record, resume=False)
    # A file where the folder should be, a folder inside a file, a run file that is not JSON: one clear error each.
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    with pytest.raises(EngineError, match="is a file"):
        prepare_out(afile, record, resume=False)
    with pytest.raises(EngineError, match="cannot be written"):
        prepare_out(afile / "sub", record, resume=False)
    (out / "run.json").write_text("{", encoding="utf-8")
    with pytest.raises(EngineError, match="cannot be read"):
        prepare_out(out, record, resume=True)


def test_cli_ray_engine_prints_the_local_tables(ray_instance, ranking_folder: Path, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from matching.__main__ import main

    common = ["evaluate", "--pretrained", str(PRETRAINED), "--models", *CHECKPOINTS, "--data", str(ranking_folder)]
    main(common)
    local = capsys.readouterr().out
    main([*common, "--engine", "ray", "--workers", "2", "--out", str(tmp_path / "out")])
    on_ray = capsys.readouterr().out
    assert "Ray: 1 shard scored by 1 worker" in on_ray  # the workers that scored: one shard keeps one busy
    # Everything after the Ray line is the local output, table for table.
    assert on_ray.split("\n", 1)[1] == local
    main([*common, "--engine", "ray", "--out", str(tmp_path / "out"), "--resume"])
    resumed = capsys.readouterr().out
    assert "Ray: nothing to score, its shard is already written" in resumed and resumed.split("\n", 1)[1] == local


def test_cli_joins_a_cluster_started_beforehand(ranking_folder: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The documented path (docs/deployment.md): `ray start --head`, then `evaluate --address` from a fresh process,
    which prints the local tables. Ray (2.59 on) starts such a cluster with token authentication when a token is at
    hand, and a process joining it must use the token too (`token_mode_for_joining`)."""
    pytest.importorskip("ray.data", reason="Ray is an optional extra: pip install 'matchlens[ray]'")
    from matching.__main__ import main

    root = str(PRETRAINED.parent)
    env = {key: value for key, value in os.environ.items() if key != "RAY_AUTH_MODE"} | {"PYTHONPATH": root}
    port = free_port()
    # --block in a session of its own: the head's processes are this session, and are stopped with it (not by
    # `ray stop`, which would stop every Ray of this user, the module's own instance too). Its own temporary
    # folder (a short path: Ray's sockets live there): the address file it leaves would otherwise make a later
    # `ray.init()` join this cluster.
    temp = tempfile.mkdtemp(prefix="ray-")
    head = subprocess.Popen([sys.executable, "-m", "ray.scripts.scripts", "start", "--head", "--port", str(port),
                             "--num-cpus", "2", "--include-dashboard", "false", "--disable-usage-stats",
                             "--temp-dir", temp, "--block"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                            start_new_session=True)
    try:
        assert head.stdout is not None
        said = []
        for line in head.stdout:
            said.append(line)
            if "Ray runtime started" in line:
                break
        else:  # what `ray start` said, to tell a busy machine (a port taken, a timeout) from a change of Ray's
            pytest.fail("ray start --head ended before the runtime started:\n" + "".join(said[-40:]))
        common = ["evaluate", "--pretrained", str(PRETRAINED), "--models", *CHECKPOINTS, "--data", str(ranking_folder)]
        main(common)
        local = capsys.readouterr().out
        joined = subprocess.run([sys.executable, "-m", "matching", *common, "--engine", "ray", "--address",
                                 f"127.0.0.1:{port}", "--workers", "2", "--out", str(tmp_path / "out")],
                                capture_output=True, text=True, env=env, cwd=root, timeout=240)
        assert joined.returncode == 0, joined.stderr[-2000:]
        assert "1 shard scored by 1 worker" in joined.stdout
        assert "Progress bars disabled" not in joined.stderr  # Ray Data's notice of what the engine turned off itself
        assert joined.stdout.split("\n", 1)[1] == local
        # Another token: refused at once, in one line of ours (Ray's own join asked 20 times over 20 s, a line each).
        refused = subprocess.run([sys.executable, "-m", "matching", *common, "--engine", "ray", "--address",
                                  f"127.0.0.1:{port}", "--out", str(tmp_path / "refused")], capture_output=True,
                                 text=True, env=env | {"RAY_AUTH_TOKEN": "0" * 32}, cwd=root, timeout=240)
        assert refused.returncode != 0
        assert f"error: the Ray cluster at 127.0.0.1:{port} refused this process's token" in refused.stderr
        assert refused.stderr.count("Failed to get cluster ID") <= 1, refused.stderr[-2000:]
    finally:  # killed: stopped gently, the head waits some 30 s for its processes; it holds nothing to keep
        os.killpg(head.pid, signal.SIGKILL)
        head.wait(timeout=60)
        shutil.rmtree(temp, ignore_errors=True)


def test_a_local_instance_from_another_folder_of_a_checkout_not_installed(ranking_folder: Path, tmp_path: Path) -> None:
    """The bench's way (`sys.path` set by the script, run from another folder, the checkout not installed): the local
    instance's workers import the package too (they died unpickling the scorer: "No module named 'matching'")."""
    pytest.importorskip("ray.data", reason="Ray is an optional extra: pip install 'matchlens[ray]'")
    root = PRETRAINED.parent
    code = (f"import sys; sys.path.insert(0, {str(root)!r})\n"
            "from matching.evaluation.ray_engine import evaluate_ray\n"
            f"run = evaluate_ray({str(ranking_folder)!r}, {{'mvlstm': {str(CHECKPOINTS['mvlstm'])!r}}}, "
            f"{str(tmp_path / 'out')!r}, workers=1)\n"
            "print('scored', len(run.scored), 'questions', len(run.evaluation.qids))\n")
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "RAY_ADDRESS")}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=elsewhere,
                          timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"scored 1 questions {len(generated_lists()) - 1}" in done.stdout  # the question without words skipped


SLOW_CLI = """
import signal, sys, time
import matching.evaluation.ray_engine as engine
from matching.__main__ import main

# As in a terminal: a CI that runs the tests in the background (a shell's `&`) starts them with SIGINT ignored,
# and Python then leaves it ignored.
signal.signal(signal.SIGINT, signal.default_int_handler)


class Slow(engine.ShardScorer):  # defined here, so Ray ships it to the workers by value
    def score(self, shard, lists):
        time.sleep(1.5)  # a shard takes long enough for the interrupt to land mid-run on any machine
        return super().score(shard, lists)


engine.evaluate_ray.__kwdefaults__["scorer"] = Slow
main(sys.argv[1:])
"""
"""The command line, its workers' shards slowed down (on a fast machine the whole run ended before the interrupt)."""


def test_ctrl_c_stops_a_run_with_one_line_that_says_what_is_kept(tmp_path: Path) -> None:
    """The documented flow, Ctrl-C then --resume: the stop is one line naming the shards kept (it was Ray Data's
    traceback), with the status a shell gives an interrupt, and the run then resumes from them."""
    pytest.importorskip("ray.data", reason="Ray is an optional extra: pip install 'matchlens[ray]'")
    folder = write_toks_folder(tmp_path / "large" / "test", generated_lists(questions=8_000))
    shards = len(shard_ranking_file(folder, Chunking()).shards)
    out = tmp_path / "out"
    arguments = ["evaluate", "--pretrained", str(PRETRAINED), "--models", "mvlstm", "--data", str(folder),
                 "--engine", "ray", "--workers", "1", "--out", str(out)]
    env = {key: value for key, value in os.environ.items() if key != "RAY_ADDRESS"}
    run = subprocess.Popen([sys.executable, "-c", SLOW_CLI, *arguments], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env=env, cwd=PRETRAINED.parent)
    try:
        for _ in range(1200):  # the first shard written (a local instance starts first), 2 minutes at most
            if list(out.glob("shard-*.parquet")) or run.poll() is not None:
                break
            threading.Event().wait(0.1)
        run.send_signal(signal.SIGINT)
        _, stderr = run.communicate(timeout=120)
    finally:
        run.kill()
    assert run.returncode == 130, stderr[-2000:]
    assert "Traceback" not in stderr
    kept = re.search(rf"^stopped: (\d+) of {shards} shards are written in {re.escape(str(out))} \(--resume goes on "
                     r"from them\)$", stderr, re.MULTILINE)
    assert kept and 1 <= int(kept[1]) < shards, stderr[-2000:]
    resumed = subprocess.run([sys.executable, "-m", "matching", *arguments, "--resume"], capture_output=True,
                             text=True, env=env, cwd=PRETRAINED.parent, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert re.search(rf"Ray: \d+ shards? scored by 1 worker, {kept[1]} already written", resumed.stdout)


def test_an_address_where_something_else_listens_is_a_clear_error_at_once() -> None:
    """A web server (or anything not a Ray head's GCS port) at --address: Ray waited on it for more than 5 minutes.
    The engine asks for gRPC's first frame, which a head sends whatever its authentication (the cluster test above
    joins one), and says at once what is wrong; a server that stays silent is told apart within the timeout."""
    import http.server
    import socketserver

    from matching.evaluation.ray_engine import cluster_problem

    with http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler) as web:
        threading.Thread(target=web.serve_forever, daemon=True).start()
        said = cluster_problem(f"127.0.0.1:{web.server_address[1]}")
        web.shutdown()
    assert said is not None and "but not a Ray cluster" in said

    class Silent(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            threading.Event().wait(3)

    with socketserver.ThreadingTCPServer(("127.0.0.1", 0), Silent) as silent:
        threading.Thread(target=silent.serve_forever, daemon=True).start()
        said = cluster_problem(f"127.0.0.1:{silent.server_address[1]}", seconds=0.5)
        silent.shutdown()
    assert said is not None and "but not a Ray cluster" in said
    assert cluster_problem(f"127.0.0.1:{free_port()}", seconds=0.5).startswith("no Ray cluster answers")  # type: ignore[union-attr]
    assert cluster_problem("auto") is None  # Ray's to resolve


def test_a_refused_token_is_said_as_such() -> None:
    """Joining with the wrong token (or none), Ray retries for 20 s and raises ConnectionError naming the head's node
    address; the token error is under it, as Ray 2.60 chains them (seen joining a head with a token)."""
    exceptions = pytest.importorskip("ray.exceptions", reason="Ray is an optional extra: pip install 'matchlens[ray]'")
    from matching.evaluation.ray_engine import not_joined

    try:
        try:
            try:
                raise exceptions.AuthenticationError("RPC error: InvalidAuthToken: Authentication token is missing")
            except exceptions.AuthenticationError as refused:
                raise RuntimeError("Failed to connect to GCS") from refused
        except RuntimeError as lost:
            raise ConnectionError("Failed to connect to Ray cluster at 192.0.2.2:6391") from lost
    except ConnectionError as error:
        said = not_joined("127.0.0.1:6391", error)
    assert said.startswith("the Ray cluster at 127.0.0.1:6391 refused this process's token")
    assert "192.0.2.2" not in said and "RAY_AUTH_MODE=disabled" in said
    other = not_joined("127.0.0.1:6391", ConnectionError("Failed to connect"))
    assert other.startswith("could not join the Ray cluster at 127.0.0.1:6391. Is it running")


def test_fewer_than_one_worker_is_refused_before_ray_starts(ranking_folder: Path, tmp_path: Path) -> None:
    pytest.importorskip("ray.data", reason="Ray is an optional extra: pip install 'matchlens[ray]'")
    from matching.evaluation.ray_engine import EngineError, evaluate_ray

    with pytest.raises(EngineError, match="0 workers: give at least 1"):
        evaluate_ray(ranking_folder, {name: str(path) for name, path in CHECKPOINTS.items()}, tmp_path / "out",
                     workers=0)
    assert not (tmp_path / "out").exists()  # refused before anything was written
