"""`python -m matching evaluate` on large files: wall time and peak memory of the command itself.

(a) N generated pairs (default 100,000) of WikiQA-like lists (the generator of bench/common.py:
    ~10.5 candidates per question, answers of ~25 words drawn from GloVe's 20,000 most frequent
    words, 12 % correct), written by this script as a WikiQA TSV in a temporary folder; with
    --candidates C, lists of MS MARCO's shape instead: C candidates a question (1,000 there), --correct
    of them correct (1 there);
(b) the real QA data at hand: every split (train, dev, test) of each --data folder concatenated
    into one line-aligned .toks folder (qids prefixed with the folder and split, so no two
    questions merge): WikiQA + TrecQA hold ~19,000 pairs.

Each file is evaluated by `python -m matching evaluate --data FILE` with every shipped model
(or --models), run as a child process of this script in this checkout and, with --before COMMIT,
in a `git worktree` of that commit made under /tmp (removed afterwards) on the same files in the
same run: its wall time and its peak resident memory (ru_maxrss of that child, from os.wait4) are
printed, with how many lines of output it wrote (the progress display, piped: a few plain lines).

Run: python bench/evaluate_stream.py [--pairs 100000] [--candidates 1000] [--data ../shared/data/wikiqa ...]
                                    [--before COMMIT] [--skip-generated] [--skip-data]
"""

from __future__ import annotations

import argparse
import functools
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from common import ROOT, marco_like, wikiqa_like

from matching.text.data import read_toks_folder
from matching.text.embeddings import load_glove

print = functools.partial(print, flush=True)  # noqa: A001  (each figure shows as it comes, piped or not)

SPLITS = ("train", "dev", "test")
TSV_HEADER = ("QuestionID", "Question", "DocumentID", "DocumentTitle", "SentenceID", "Sentence", "Label")


@dataclass(frozen=True)
class Run:
    seconds: float
    peak_mib: float
    exit_status: int
    output_lines: int
    control_characters: bool
    summary: str


def write_generated_tsv(path: Path, pairs: int, seed: int = 1, candidates: int | None = None, correct: int = 1) -> int:
    """`pairs` WikiQA-like pairs as a WikiQA TSV (MS MARCO-like lists of `candidates` each where given); the last
    question is cut to make the count exact."""
    vectors = load_glove()
    if candidates:
        lists = marco_like(vectors, questions=-(-pairs // candidates), candidates=candidates, correct=correct,
                           seed=seed)
    else:
        lists = wikiqa_like(vectors, questions=pairs * 2 // 21 + 1, seed=seed)  # 10.5 candidates a question
    while sum(len(item.candidates) for item in lists) < pairs:
        lists += wikiqa_like(vectors, questions=pairs // 100 + 1, seed=seed + len(lists))
    written = 0
    # Written as WikiQA's TSV is, fields unquoted (its sentences hold bare double quotes too);
    # GloVe words hold no tab or line break.
    with path.open("w", encoding="utf-8", newline="") as handle:
        handle.write("\t".join(TSV_HEADER) + "\n")
        for number, item in enumerate(lists):
            for index, (candidate, label) in enumerate(zip(item.candidates, item.labels, strict=True)):
                if written == pairs:
                    return written
                handle.write(f"Q{number}\t{item.question}\tD{number}\tgenerated\tD{number}-{index}\t"
                             f"{candidate}\t{label}\n")
                written += 1
    return written


def write_concatenated_toks(folder: Path, sources: list[Path]) -> tuple[int, list[str]]:
    """Every split of every source folder as one .toks folder; (pairs, the folders read)."""
    folder.mkdir(parents=True, exist_ok=True)
    columns: dict[str, list[str]] = {"a.toks": [], "b.toks": [], "id.txt": [], "sim.txt": []}
    read = []
    for source in sources:
        for split in SPLITS:
            if not (source / split).is_dir():
                continue
            read.append(f"{source.name}/{split}")
            for item in read_toks_folder(source / split):
                for candidate, label in zip(item.candidates, item.labels, strict=True):
                    columns["a.toks"].append(item.question)
                    columns["b.toks"].append(candidate)
                    columns["id.txt"].append(f"{source.name}/{split}/{item.qid}")
                    columns["sim.txt"].append(str(label))
    for name, lines in columns.items():
        (folder / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(columns["sim.txt"]), read


def run_evaluate(repo: Path, data: Path, models: list[str] | None) -> Run:
    """`python -m matching evaluate --data DATA` in `repo`, its output piped; (seconds, peak RSS, ...)."""
    command = [sys.executable, "-m", "matching", "evaluate", "--data", str(data)]
    if models:
        command += ["--models", *models]
    with tempfile.TemporaryFile() as output:
        start = time.perf_counter()
        child = subprocess.Popen(command, cwd=repo, stdout=output, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(child.pid, 0)  # this child's own rusage (Linux: ru_maxrss in KiB)
        seconds = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        output.seek(0)
        text = output.read().decode("utf-8", errors="replace")
    table = [line for line in text.splitlines() if line.startswith("| ") and "MAP" not in line][:3]
    return Run(seconds, usage.ru_maxrss / 1024, child.returncode, len(text.splitlines()),
               any(c in text for c in "\r\x1b"), "\n".join(table))


def report(what: str, run: Run) -> None:
    print(f"    {what}: {run.seconds:.1f} s, peak RSS {run.peak_mib:.0f} MiB, exit status {run.exit_status}; "
          f"{run.output_lines} lines of output, {'with' if run.control_characters else 'no'} \\r or escape "
          f"characters")
    if run.exit_status:
        print(run.summary or "(no table printed)")


def compare(checkouts: dict[str, Path], data: Path, models: list[str] | None) -> None:
    runs = {}
    for name, repo in checkouts.items():
        runs[name] = run_evaluate(repo, data, models)
        report(name, runs[name])
    if len(runs) == 2 and all(run.exit_status == 0 for run in runs.values()):
        after, before = runs["this checkout"], runs["before"]
        print(f"    before / this checkout: {before.seconds / after.seconds:.2f}x the time, "
              f"{before.peak_mib / after.peak_mib:.2f}x the peak memory")


@contextmanager
def worktree(commit: str | None) -> Iterator[Path | None]:
    """A detached `git worktree` of `commit` under /tmp for the length of the block (None: no commit)."""
    if commit is None:
        yield None
        return
    folder = Path(tempfile.mkdtemp(prefix="matchlens-before-"))
    subprocess.run(["git", "worktree", "add", "--detach", str(folder), commit], cwd=ROOT, check=True,
                   capture_output=True)
    try:
        yield folder
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(folder)], cwd=ROOT, check=False,
                       capture_output=True)


def described(repo: Path) -> str:
    commit = subprocess.run(["git", "log", "-1", "--format=%h %s"], cwd=repo, text=True, capture_output=True)
    return commit.stdout.strip()[:70]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", type=int, default=100_000, help="pairs of the generated file")
    parser.add_argument("--candidates", type=int, help="candidates a question in the generated file (MS MARCO: "
                                                       "1000); default: WikiQA's ~10.5")
    parser.add_argument("--correct", type=int, default=1, help="correct candidates a question with --candidates")
    parser.add_argument("--data", type=Path, nargs="*", default=[ROOT.parent / "shared/data/wikiqa",
                                                                 ROOT.parent / "shared/data/trecqa"],
                        help="folders with train/, dev/, test/ of .toks files, concatenated for (b)")
    parser.add_argument("--before", help="a commit to measure too, in a git worktree under /tmp")
    parser.add_argument("--models", nargs="*", help="default: every shipped model")
    parser.add_argument("--skip-generated", action="store_true")
    parser.add_argument("--skip-data", action="store_true")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}; {os.cpu_count()} CPUs")
    with worktree(args.before) as old, tempfile.TemporaryDirectory(prefix="matchlens-stream-") as temporary:
        checkouts = {"this checkout": ROOT, **({"before": old} if old else {})}
        for name, repo in checkouts.items():
            print(f"{name}: {repo} ({described(repo)})")
        folder = Path(temporary)
        if not args.skip_generated:
            path = folder / "generated.tsv"
            pairs = write_generated_tsv(path, args.pairs, candidates=args.candidates, correct=args.correct)
            shape = (f"MS MARCO-like ({args.candidates:,} a question, {args.correct} correct)" if args.candidates
                     else "WikiQA-like")
            print(f"(a) {pairs:,} generated {shape} pairs ({path.stat().st_size / 2**20:.1f} MiB TSV)")
            compare(checkouts, path, args.models)
        if not args.skip_data:
            sources = [source for source in args.data if source.is_dir()]
            if not sources:
                print(f"(b) skipped: none of {[str(s) for s in args.data]} is a folder")
                return
            pairs, read = write_concatenated_toks(folder / "concatenated", sources)
            print(f"(b) {pairs:,} pairs of {', '.join(read)} in one .toks folder")
            compare(checkouts, folder / "concatenated", args.models)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
