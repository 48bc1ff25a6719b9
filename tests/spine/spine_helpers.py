"""Small builders shared by the spine tests (real files on disk, nothing mocked)."""
from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "experiments"


def write_skill(parent: Path, name: str, description: str | None = None, *, body: str = "# Body\n\nDo it.\n",
                frontmatter: str | None = None, folder: str | None = None) -> Path:
    """Write ``parent/<folder or name>/SKILL.md``; `frontmatter` (raw YAML) wins over name/description."""
    d = parent / (folder or name)
    d.mkdir(parents=True, exist_ok=True)
    if frontmatter is None:
        frontmatter = f"name: {name}\ndescription: {json.dumps(description or 'A test skill.')}\n"
    (d / "SKILL.md").write_text(f"---\n{frontmatter}---\n{body}", encoding="utf-8")
    return d


def write_cases(path: Path, cases: list[tuple[str, bool]]) -> Path:
    """skill-creator's JSON array (or JSONL when `path` ends in .jsonl)."""
    rows = [{"query": q, "should_trigger": s} for q, s in cases]
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        path.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return path


CSV_DESCRIPTION = ("Clean and tidy messy CSV files: dedupe rows, normalise column headers, fix "
                   "delimiters, quoting and encodings. Use when a csv export needs cleaning.")
PDF_DESCRIPTION = ("Fill in PDF forms (AcroForm fields) and flatten them. Use when the user has a "
                   "fillable pdf form to complete, sign or flatten.")

# A small eval set for csv-tidy with a clear positive, a clear negative and a pdf query
# (which should make the pdf distractor fire).
SMALL_CASES = [
    ("dedupe the rows of this messy csv export and normalise the column headers", True),
    ("clean up the csv file, the delimiters and quoting are broken", True),
    ("fix the encoding of contacts.csv and tidy the headers", True),
    ("fill in the pdf form fields of tax.pdf and flatten the pdf form", False),
    ("what is the capital of france", False),
    ("write a haiku about autumn leaves", False),
]


def fake_plugin(tmp: Path, name: str, source: str) -> dict[str, str]:
    """A plugin installed the way pip would (module + dist-info with its entry point) in a
    folder of its own; returns the env that puts it on the path."""
    site = tmp / f"site-{name}"
    (site / name).mkdir(parents=True)
    (site / name / "__init__.py").write_text(source)
    info = site / f"{name}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[skilleval]\n{name} = {name}\n")
    return {"PYTHONPATH": str(site)}
