"""Ingest throughput: Lore's whole ingest pipeline against raw embedding of the same chunks.

One run, side by side: (1) ingest documents through the real ingest graph (extract,
chunk, embed, SQLite, the embedded Qdrant engine) and count chunks/s; (2) embed the
very same chunk texts with the same embedder in batches of 32 and count chunks/s.
The ratio is the pipeline's own overhead. Two corpora: many small notes (one SciFact
abstract each) and a few large Markdown files (the same abstracts, 100 per file).

    .venv/bin/python benchmarks/ingest.py [CORPUS_JSONL] [--documents 400]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import tempfile
import time
from pathlib import Path

from bot.app import Lore, open_lore
from bot.settings import load_settings
from bot.sources import Source
from graphs.ingest.points import embedding_text

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CORPUS = REPO / "../shared/datasets/scifact/corpus.jsonl"


def read_abstracts(corpus: Path, count: int) -> list[str]:
    texts = []
    with corpus.open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            texts.append(f"# {record.get('title') or record['_id']}\n\n{record['text']}")
            if len(texts) == count:
                break
    return texts


async def chunk_texts(lore: Lore) -> list[str]:
    rows = await lore.database.fetch_all(
        "SELECT d.title, c.heading_path, c.text FROM chunks c"
        " JOIN documents d ON d.id = c.document_id ORDER BY c.id"
    )
    return [
        embedding_text(row["title"], json.loads(row["heading_path"]), row["text"]) for row in rows
    ]


async def measure(label: str, requests: list[Source], settings_dir: Path) -> None:
    settings = load_settings(_env_file=None, data_dir=settings_dir, sample_docs_dir="")
    async with open_lore(settings) as lore:
        started = time.perf_counter()
        for request in requests:
            await lore.bot.maintenance.load_shared(request)
        pipeline_s = time.perf_counter() - started
        texts = await chunk_texts(lore)
        started = time.perf_counter()
        for start in range(0, len(texts), 32):
            await lore.embedder.embed_passages(texts[start : start + 32])
        raw_s = time.perf_counter() - started
    pipeline_rate, raw_rate = len(texts) / pipeline_s, len(texts) / raw_s
    print(
        f"{label:<28} {len(texts):>6} chunks  pipeline {pipeline_rate:6.1f}/s  "
        f"raw embedding {raw_rate:6.1f}/s  ratio {pipeline_rate / raw_rate:.2f}"
    )


async def run(corpus: Path, documents: int) -> None:
    abstracts = read_abstracts(corpus, documents)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        notes = [Source(text=text) for text in abstracts]
        await measure(f"{len(notes)} small notes", notes, root / "notes")
        files = []
        for number in range(0, len(abstracts), 100):
            path = root / f"bundle-{number:05d}.md"
            path.write_text("\n\n".join(abstracts[number : number + 100]), encoding="utf-8")
            files.append(Source(path=path))
        await measure(f"{len(files)} large markdown files", files, root / "files")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak_mb:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--documents", type=int, default=400)
    args = parser.parse_args()
    asyncio.run(run(args.corpus.resolve(), args.documents))


if __name__ == "__main__":
    main()
