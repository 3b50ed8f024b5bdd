"""Text recognition as Lore runs it (rapidocr's packaged PP-OCRv6 models, one thread, in a
process of its own): character error rate on pictures of public text in several fonts and
sizes, photographed-style (blur, a small rotation, JPEG) and as scanned-style PDF pages,
with seconds per picture or page and the process's peak RSS, side by side in one run.

The text is Lore's own documentation (docs/getting-started.md), drawn with the DejaVu fonts
Debian ships (`fonts-dejavu-core`); pages are A4 at 150 dpi, black and white, in a PDF with
no text layer, read the way Lore reads a scan (rendered at 200 dpi by pypdfium2).

    python benchmarks/ocr.py
"""

from __future__ import annotations

import io
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter, ImageFont

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ROOT = Path(__file__).resolve().parent.parent
FONTS = Path("/usr/share/fonts/truetype/dejavu")
STYLES = ("DejaVuSans.ttf", "DejaVuSerif.ttf", "DejaVuSansMono.ttf")
SIZES = (14, 20, 28)


def lines_of_text(count: int) -> list[str]:
    text = (ROOT / "docs" / "getting-started.md").read_text("utf-8")
    clean = [" ".join(line.strip("#*`|> -").split()) for line in text.splitlines()]
    return [line[:70] for line in clean if len(line) > 30][:count]


def picture(lines: list[str], font_file: str, size: int) -> Image.Image:
    font = ImageFont.truetype(str(FONTS / font_file), size)
    width = int(size * 0.62 * 72) + 40
    image = Image.new("RGB", (width, int(size * 1.6) * len(lines) + 40), "white")
    draw = ImageDraw.Draw(image)
    for number, line in enumerate(lines):
        draw.text((20, 20 + int(size * 1.6) * number), line, fill="black", font=font)
    return image


def photographed(image: Image.Image) -> bytes:
    """Blurred, turned by 2 degrees, saved as a JPEG of quality 60."""
    turned = image.filter(ImageFilter.GaussianBlur(0.8)).rotate(2, expand=True, fillcolor="white")
    buffer = io.BytesIO()
    turned.save(buffer, "JPEG", quality=60)
    return buffer.getvalue()


def png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def scan(pages: list[list[str]]) -> bytes:
    font = ImageFont.truetype(str(FONTS / "DejaVuSerif.ttf"), 22)
    images = []
    for lines in pages:
        image = Image.new("RGB", (1240, 1754), "white")
        draw = ImageDraw.Draw(image)
        for number, line in enumerate(lines):
            draw.text((120, 140 + 36 * number), line, fill="black", font=font)
        images.append(image.convert("1"))
    buffer = io.BytesIO()
    images[0].save(buffer, "PDF", save_all=True, append_images=images[1:], resolution=150)
    return buffer.getvalue()


def char_errors(reference: str, heard: str) -> tuple[int, int]:
    ref, hyp = " ".join(reference.split()), " ".join(heard.split())
    row = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, 1):
        previous, row[0] = row[0], i
        for j, h in enumerate(hyp, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, previous + (r != h))
    return row[-1], len(ref)


def child(jobs_file: str) -> None:
    """Read each job as Lore's worker would; print JSON results and the peak RSS."""
    from graphs.ingest.extract import extract_text  # noqa: PLC0415 - only in the child
    from graphs.ingest.formats import SourceFormat  # noqa: PLC0415

    out = []
    for job in json.loads(Path(jobs_file).read_text("utf-8")):
        data = Path(job["path"]).read_bytes()
        started = time.perf_counter()
        fmt = SourceFormat(job["format"])
        text = extract_text(data, fmt, filename=job["path"], max_decompressed_bytes=10**8).text
        out.append({**job, "heard": text, "seconds": time.perf_counter() - started})
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"results": out, "peak_rss_mb": rss}))


def main() -> None:
    import tempfile  # noqa: PLC0415

    lines = lines_of_text(24)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        jobs = []
        for style in STYLES:
            for size in SIZES:
                image = picture(lines[:6], style, size)
                for kind, data in (("clean", png(image)), ("photographed", photographed(image))):
                    path = folder / f"{style}-{size}-{kind}.img"
                    path.write_bytes(data)
                    jobs.append({"kind": f"{kind} picture", "font": f"{style[:-4]} {size}px",
                                 "format": "image", "path": str(path),
                                 "text": "\n".join(lines[:6])})  # fmt: skip
        pages = [lines[:24], lines[:24]]
        path = folder / "scan.pdf"
        path.write_bytes(scan(pages))
        jobs.append({"kind": "scanned PDF, 2 A4 pages", "font": "DejaVuSerif 22px at 150 dpi",
                     "format": "pdf", "path": str(path),
                     "text": "\n".join(lines[:24] * 2)})  # fmt: skip
        jobs_file = folder / "jobs.json"
        jobs_file.write_text(json.dumps(jobs), "utf-8")
        done = subprocess.run(  # noqa: S603 - this script, in a child
            [sys.executable, __file__, "--child", str(jobs_file)],
            capture_output=True, text=True, check=True, timeout=1800,
        )  # fmt: skip
    found = json.loads(done.stdout.strip().splitlines()[-1])
    print("| source | font | CER | seconds |")
    print("|---|---|---|---|")
    totals: dict[str, list[int]] = {}
    for result in found["results"]:
        heard = "\n".join(
            line for line in result["heard"].splitlines() if not line.startswith("# Page ")
        )
        errors, length = char_errors(result["text"], heard)
        totals.setdefault(result["kind"], [0, 0, 0])
        totals[result["kind"]][0] += errors
        totals[result["kind"]][1] += length
        print(f"| {result['kind']} | {result['font']} | {errors / length:.1%} | "
              f"{result['seconds']:.1f} |")  # fmt: skip
    for kind, (errors, length, _) in totals.items():
        print(f"| all {kind}s | | {errors / length:.1%} | |")
    print(f"\nPeak RSS of the reading process: {found['peak_rss_mb']:.0f} MB")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2])
    else:
        main()
