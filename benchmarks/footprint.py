"""Peak memory and time of `lore run` ingesting and answering, current defaults vs a baseline.

Each configuration runs `lore run` as a subprocess on its own fresh DATA_DIR (the
embedded engine, the offline answerer, no chat edge configured) with
SAMPLE_DOCS_DIR pointing at a folder that holds one ~10 MB PDF (text pages from the
SciFact corpus plus an embedded binary stream, as scanned figures make real PDFs large)
and 200 Markdown files (SciFact abstracts, several a file). Lore ingests the folder at
start, prints "Knowledge base: ...", then reads the questions (the first SciFact claims)
from its piped stdin and answers each. psutil samples the RSS of the whole process tree
(Lore plus its extraction workers; "lore alone" is the main process) every 50 ms;
the ingest phase ends at the "Knowledge base:" line, the chat phase at the process's
exit.

Configurations, side by side in one run:

- `baseline`: the settings that reproduce the old embedding path's memory behaviour,
  ONNX Runtime's growing CPU arena on (`EMBEDDING_MEMORY_ARENA=true`) and runs of 32 texts
  of up to 256 tokens (`EMBEDDING_BATCH_TOKENS=8192`);
- `default`: the current defaults;
- `default+MALLOC_ARENAS=0`: the defaults but glibc's own malloc arena rule (up to eight
  per core) instead of Lore's two;
- `default+EXTRACT_WORKERS=1`: the defaults with one extraction worker process, not two;
- `--baseline-tree DIR` adds `tree` (e.g. `git archive main | tar -x -C DIR`): that source
  tree's `lore run` with its own defaults.

The model directory is assembled once beforehand (MODELS_DIR shared), so no run measures
model assembly.

    .venv/bin/python -m benchmarks.footprint [--questions 50] [--notes 200]
        [--pdf-mb 10] [--pdf-pages 150] [--baseline-tree DIR] [--only default,baseline]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from storage.model_files import DEFAULT_MODEL, ensure_model_dir, model_choice

REPO = Path(__file__).resolve().parents[1]
SCIFACT = REPO / "../shared/datasets/scifact"
READY = "Knowledge base:"
_EDGE_VARIABLES = ("TELEGRAM", "SLACK", "DISCORD", "OPENAI", "ANTHROPIC", "LLM_")


@dataclass
class Config:
    label: str
    env: dict[str, str]
    tree: Path = REPO


@dataclass
class Measured:
    label: str
    ingest_peak_mb: float = 0.0
    chat_peak_mb: float = 0.0
    main_peak_mb: float = 0.0
    ingest_s: float = 0.0
    chat_s: float = 0.0
    answers: int = 0
    chunks_line: str = ""
    errors: list[str] = field(default_factory=list)


def _abstracts(count: int) -> list[tuple[str, str]]:
    texts: list[tuple[str, str]] = []
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            texts.append((record.get("title") or record["_id"], record["text"]))
            if len(texts) == count:
                break
    return texts


def _questions(count: int) -> list[str]:
    questions: list[str] = []
    with (SCIFACT / "queries.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            questions.append(" ".join(json.loads(line)["text"].split()))
            if len(questions) == count:
                break
    return questions


def _pdf_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _wrap(text: str, width: int = 90) -> list[str]:
    lines: list[str] = []
    current = ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}".strip()
    if current:
        lines.append(current)
    return lines


def build_pdf(pages: list[list[str]], total_bytes: int) -> bytes:
    """A valid PDF: one text object per page, plus a binary stream that brings it to size."""
    first_page = 4
    page_ids = [first_page + 2 * number for number in range(len(pages))]
    kids = " ".join(f"{page_id} 0 R" for page_id in page_ids)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for page_id, lines in zip(page_ids, pages, strict=True):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (page_id + 1)
        )
        operators = ["BT", "/F1 9 Tf", "11 TL", "40 760 Td"]
        operators += [f"({_pdf_escape(line)}) Tj T*" for line in lines]
        stream = "\n".join([*operators, "ET"]).encode("latin-1", "replace")
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
    used = sum(len(body) for body in objects)
    padding = os.urandom(max(total_bytes - used - 4096, 0))  # like an embedded image
    objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(padding), padding))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref_at = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{offset:010d} 00000 n \n".encode() for offset in offsets)
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\n".encode()
    out += f"startxref\n{xref_at}\n%%EOF\n".encode()
    return bytes(out)


def build_corpus(folder: Path, *, notes: int, pdf_mb: float, pdf_pages: int) -> None:
    per_note = 4
    abstracts = _abstracts(notes * per_note + pdf_pages * 2)
    folder.mkdir(parents=True)
    for number in range(notes):
        part = abstracts[number * per_note : (number + 1) * per_note]
        body = "\n\n".join(f"## {title}\n\n{text}" for title, text in part)
        (folder / f"note-{number:03d}.md").write_text(f"# Note {number}\n\n{body}\n", "utf-8")
    rest = abstracts[notes * per_note :]
    pages = []
    for number in range(pdf_pages):
        lines: list[str] = []
        for title, text in rest[number * 2 : number * 2 + 2]:
            lines += [title[:90], *_wrap(text)][:32]
        pages.append(lines)
    pdf = build_pdf(pages, int(pdf_mb * 1024 * 1024))
    (folder / "handbook.pdf").write_bytes(pdf)


def _tree_rss(process: psutil.Process) -> tuple[int, int]:
    """RSS of the process and its descendants, and of the process alone."""
    total = main = 0
    try:
        members = [process, *process.children(recursive=True)]
    except psutil.Error:
        return 0, 0
    for member in members:
        try:
            rss = member.memory_info().rss
        except psutil.Error:
            continue
        total += rss
        main = rss if member is process else main
    return total, main


def _environment(config: Config, data_dir: Path, docs: Path, models: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()  # noqa: TID251 - the child's environment
        if not key.startswith(_EDGE_VARIABLES) and not key.startswith("EMBEDDING_")
    }
    env.update(
        PYTHONPATH=str(config.tree),
        PYTHONDONTWRITEBYTECODE="1",
        DATA_DIR=str(data_dir),
        SAMPLE_DOCS_DIR=str(docs),
        MODELS_DIR=str(models),
        LOG_LEVEL="WARNING",
    )
    env.update(config.env)
    return env


class _Run:
    """One `lore run` subprocess: its output read in threads, its tree's RSS sampled."""

    def __init__(self, config: Config, process: subprocess.Popen[str]) -> None:
        self.result = Measured(config.label)
        self.process = process
        self.ready = threading.Event()
        self.ready_at = 0.0

    def read_stdout(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith(READY) and not self.ready.is_set():
                self.ready_at = time.perf_counter()
                self.result.chunks_line = line.strip()
                self.ready.set()
            elif self.ready.is_set() and line.strip() and not line.startswith("Lore is ready"):
                self.result.answers += 1

    def read_stderr(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            if "error" in line.lower():
                self.result.errors.append(line.strip())

    def sample(self) -> None:
        watched = psutil.Process(self.process.pid)
        while self.process.poll() is None:
            tree, main = _tree_rss(watched)
            rss = tree / 2**20
            self.result.main_peak_mb = max(self.result.main_peak_mb, main / 2**20)
            if self.ready.is_set():
                self.result.chat_peak_mb = max(self.result.chat_peak_mb, rss)
            else:
                self.result.ingest_peak_mb = max(self.result.ingest_peak_mb, rss)
            time.sleep(0.05)


def measure(config: Config, work: Path, docs: Path, models: Path, questions: list[str]) -> Measured:
    data_dir = work / f"data-{config.label.replace('+', '-').replace('=', '-')}"
    command = [sys.executable, "-c", "from bot.cli import main; main()", "run"]
    started = time.perf_counter()
    process = subprocess.Popen(  # noqa: S603 - our own interpreter and module
        command,
        cwd=work,  # no .env here
        env=_environment(config, data_dir, docs, models),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    run = _Run(config, process)
    readers = [threading.Thread(target=run.read_stdout), threading.Thread(target=run.read_stderr)]
    for reader in readers:
        reader.start()
    assert process.stdin is not None
    process.stdin.write("".join(f"{question}\n" for question in questions))
    process.stdin.close()
    run.sample()
    for reader in readers:
        reader.join()
    ended = time.perf_counter()
    result = run.result
    if run.ready.is_set():
        result.ingest_s = run.ready_at - started
        result.chat_s = ended - run.ready_at
    else:
        result.errors.append(f"no {READY!r} line; exit code {process.returncode}")
    return result


def _print(results: list[Measured]) -> None:
    base = next((r for r in results if r.label == "baseline"), results[0])
    print(
        f"\n{'configuration':<28} {'ingest peak MB':>14} {'ingest s':>9} "
        f"{'chat peak MB':>12} {'chat s':>7} {'lore alone MB':>13}  {'answer lines':>12}"
        f"  ratios vs {base.label}"
    )
    for r in results:
        ratios = (
            f"ingest RSS {r.ingest_peak_mb / base.ingest_peak_mb:.2f}x, "
            f"chat RSS {r.chat_peak_mb / max(base.chat_peak_mb, 1e-9):.2f}x, "
            f"time {(r.ingest_s + r.chat_s) / max(base.ingest_s + base.chat_s, 1e-9):.2f}x"
        )
        print(
            f"{r.label:<28} {r.ingest_peak_mb:>14.0f} {r.ingest_s:>9.1f} "
            f"{r.chat_peak_mb:>12.0f} {r.chat_s:>7.1f} {r.main_peak_mb:>13.0f}  {r.answers:>12}"
            f"  {ratios}"
        )
    for r in results:
        print(f"{r.label}: {r.chunks_line}")
        for error in r.errors[:3]:
            print(f"  {r.label} stderr: {error}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--notes", type=int, default=200)
    parser.add_argument("--pdf-mb", type=float, default=10.0)
    parser.add_argument("--pdf-pages", type=int, default=150)
    parser.add_argument("--baseline-tree", type=Path, default=None)
    parser.add_argument("--only", default="", help="comma-separated labels to run")
    args = parser.parse_args()
    configs = [
        Config("baseline", {"EMBEDDING_MEMORY_ARENA": "true", "EMBEDDING_BATCH_TOKENS": "8192"}),
        Config("default", {}),
        Config("default+MALLOC_ARENAS=0", {"MALLOC_ARENAS": "0"}),
        Config("default+EXTRACT_WORKERS=1", {"EXTRACT_WORKERS": "1"}),
    ]
    if args.baseline_tree is not None:
        configs.insert(0, Config("tree", {}, args.baseline_tree.resolve()))
    if args.only:
        wanted = set(args.only.split(","))
        configs = [c for c in configs if c.label in wanted]
    questions = _questions(args.questions)
    with tempfile.TemporaryDirectory(prefix="lore-footprint-") as tmp:
        work = Path(tmp)
        docs = work / "docs"
        build_corpus(docs, notes=args.notes, pdf_mb=args.pdf_mb, pdf_pages=args.pdf_pages)
        size = sum(path.stat().st_size for path in docs.iterdir()) / 2**20
        print(f"corpus: {args.notes} Markdown + 1 PDF, {size:.1f} MB; {len(questions)} questions")
        models = work / "models"
        asyncio.run(ensure_model_dir(models, model_choice(DEFAULT_MODEL)))
        results = []
        for config in configs:
            result = measure(config, work, docs, models, questions)
            print(
                f"  {config.label}: ingest {result.ingest_peak_mb:.0f} MB"
                f" / {result.ingest_s:.1f} s, chat {result.chat_peak_mb:.0f} MB"
                f" / {result.chat_s:.1f} s",
                flush=True,
            )
            results.append(result)
        _print(results)


if __name__ == "__main__":
    main()
