"""`skilleval package`: a skill folder as a deterministic ``.skill`` zip.

Deterministic: the same files give the same bytes (a fixed date, sorted names, fixed modes),
so an archive's hash says whether the skill changed. Executable files keep their bit
(0o755), as they do in a trial folder. The archive is written beside its final name and
renamed into place, so an interrupted ``package`` leaves the previous archive whole; each
file is streamed into it (a large resource is not read into memory at once).
"""
from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

from skilleval.atomic import atomic_writer
from skilleval.errors import UserError
from skilleval.skills import package_files, skill_md_path, validate_skill

ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


def package_skill(path: str | Path, out_dir: str | Path | None = None) -> Path:
    """Write ``<out_dir>/<folder>.skill``: a deterministic zip rooted at the folder name."""
    md = skill_md_path(Path(path).resolve())  # `package .` names the folder, not ''
    root = md.parent
    errors = [p for p in validate_skill(root) if p.level == "error"]
    if errors:
        raise UserError(errors[0].located(md))
    out_parent = Path(out_dir or ".")
    if out_parent.exists() and not out_parent.is_dir():
        raise UserError(f"-o {out_parent}: exists and is not a folder (give the folder to write into)")
    out = out_parent / f"{root.name}.skill"
    if out.resolve().is_relative_to(root.resolve()):
        raise UserError(f"-o {out_parent}: the archive {out} would be written inside the skill "
                        "folder it packages; choose a folder outside it")
    files = package_files(root)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file on the way (NotADirectoryError), no permission, ...
        raise UserError(f"-o {out_parent}: cannot make the folder ({exc.strerror or exc})") from None
    with atomic_writer(out) as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in files:
            info = zipfile.ZipInfo(f"{root.name}/{f.relative_to(root).as_posix()}", ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            st = os.stat(f)
            info.external_attr = (0o755 if st.st_mode & 0o111 else 0o644) << 16
            big = st.st_size >= 1 << 31  # zipfile needs telling before it streams
            with open(f, "rb") as src, zf.open(info, "w", force_zip64=big) as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
    return out
