"""Start-up time: wall time of `lore --help`, an argument error, `lore stats` and
`lore search x` next to `python -c pass`, median of `--runs` runs each.

One temporary workdir with its own `.env` (a fresh DATA_DIR, SAMPLE_DOCS_DIR empty, the
model directory given or assembled once by a warm-up `lore stats`). Every command runs as a
new process of this interpreter, so the figures include Python's own start. `--compare DIR`
measures a second source tree (e.g. `git archive main | tar -x -C /tmp/main-src`) side by
side, with PYTHONPATH pointing at it, and prints the ratio new/compared per command.

    .venv/bin/python -m benchmarks.startup [--runs 5] [--models-dir DIR] [--compare DIR]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]

REPO_ROOT = Path(__file__).resolve().parents[1]
LORE = "from bot.cli import main; import sys; sys.argv[0] = 'lore'; main()"
COMMANDS: dict[str, Sequence[str]] = {
    "python -c pass": ("-c", "pass"),
    "lore --help": ("-c", LORE, "--help"),
    "lore nosuchcommand": ("-c", LORE, "nosuchcommand"),
    "lore stats": ("-c", LORE, "stats"),
    "lore search x": ("-c", LORE, "search", "x"),
}


def wall_time(args: Sequence[str], *, source: Path, workdir: Path) -> float:
    """Seconds for one run of this interpreter with `args`, importing our code from `source`."""
    env = {**os.environ, "PYTHONPATH": str(source)}  # noqa: TID251 - the child's environment
    started = time.perf_counter()
    done = subprocess.run(  # noqa: S603 - this interpreter with our own code
        [sys.executable, *args], cwd=workdir, env=env, capture_output=True, check=False
    )
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 2):
        raise SystemExit(f"{args[-1]} failed ({done.returncode}): {done.stderr.decode()[-800:]}")
    return elapsed


def measure(sources: Sequence[Path], workdir: Path, runs: int) -> list[dict[str, float]]:
    """Median wall time per source tree and command, in seconds. Runs are interleaved (each
    round runs every command of every tree), so a busy machine slows all of them alike."""
    times: list[dict[str, list[float]]] = [{name: [] for name in COMMANDS} for _ in sources]
    for _ in range(runs):
        for name, args in COMMANDS.items():
            for tree, source in enumerate(sources):
                times[tree][name].append(wall_time(args, source=source, workdir=workdir))
    return [{name: statistics.median(v) for name, v in tree.items()} for tree in times]


def report(label: str, medians: dict[str, float], compared: dict[str, float] | None) -> None:
    bare = medians["python -c pass"]
    print(f"\n{label}")
    header = f"  {'command':<22} {'median s':>9} {'x python':>9}"
    print(header + (f" {'vs compared':>12}" if compared else ""))
    for name, seconds in medians.items():
        line = f"  {name:<22} {seconds:>9.3f} {seconds / bare:>9.1f}"
        if compared:
            line += f" {seconds / compared[name]:>11.2f}x"
        print(line)


def main() -> None:
    """Measure and print."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--models-dir", type=Path, help="an assembled MODELS_DIR to reuse")
    parser.add_argument("--compare", type=Path, help="another source tree, measured alike")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lore-startup-") as temp:
        workdir = Path(temp)
        models = options.models_dir or workdir / "models"
        (workdir / ".env").write_text(
            f"DATA_DIR={workdir / 'data'}\nMODELS_DIR={models}\nSAMPLE_DOCS_DIR=\n"
            "LOG_LEVEL=WARNING\n"
        )
        wall_time(COMMANDS["lore stats"], source=REPO_ROOT, workdir=workdir)  # warm-up
        print(f"{options.runs} runs each, median wall time; CPUs: {os.cpu_count()}")
        sources = [REPO_ROOT]
        if options.compare is not None:
            sources.append(options.compare.resolve())
        medians = measure(sources, workdir, options.runs)
        compared = medians[1] if options.compare is not None else None
        if compared is not None:
            report(f"compared: {options.compare}", compared, None)
        report(f"this tree: {REPO_ROOT}", medians[0], compared)


if __name__ == "__main__":
    main()
