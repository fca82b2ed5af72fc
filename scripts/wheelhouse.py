"""Unpack ci-budget's dependencies for one job from wheels checked against the action's own lock.

    python -I -S scripts/wheelhouse.py LOCK WHEELS SELECTION DEST

LOCK is a hash-locked requirements file of the action's checkout, which the runner downloads
afresh at the start of every job, before any step runs. WHEELS is a folder of the runner's tool
cache holding the wheel files, and SELECTION names the ones this interpreter needs (one file
name a line): both kept between jobs, so both untrusted. Each named wheel is read once into
memory, its sha256 checked against the hashes LOCK gives its project at its version, and only
then unpacked, from those same bytes, into DEST (a new folder of this job). Nothing the tool
cache holds is run or imported without that check, so whatever changed it since (a planted
file, an edited wheel, another wheel named in SELECTION) is refused, never used.

Exit 0: DEST holds every named wheel. Exit 3: a wheel is missing, unknown to the lock or does
not match it (one line on stderr naming it; DEST is removed). Exit 2: bad arguments or LOCK.
Standard library only (and ci-budget's own escaping, which needs nothing else): it runs before
any dependency exists. Its one line names files from the cache, so it goes to the job log
through that escaping: no workflow command however a file is named.
"""

from __future__ import annotations

import hashlib
import io
import re
import shutil
import sys
import zipfile
from pathlib import Path, PurePosixPath

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from ci_budget.render.escape import log_line  # noqa: E402  (the action's own src/)

REQUIREMENT = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)")
HASH = re.compile(r"--hash=sha256:([0-9a-f]{64})")
# {name}-{version}(-{build})?-{python}-{abi}-{platform}.whl
WHEEL = re.compile(r"^([^-]+)-([^-]+)(?:-\d[^-]*)?-[^-]+-[^-]+-[^-]+\.whl$")


class Refused(Exception):
    """A wheel that must not be used."""


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def read_lock(text: str) -> dict[tuple[str, str], set[str]]:
    """(project, version) -> the sha256 hashes the lock allows for its files."""
    allowed: dict[tuple[str, str], set[str]] = {}
    current: set[str] | None = None
    for line in text.splitlines():
        found = REQUIREMENT.match(line)
        if found:
            current = allowed.setdefault((normalize(found[1]), found[2]), set())
        if current is not None:
            current.update(HASH.findall(line))
        if not line.rstrip().endswith("\\"):
            current = None
    return allowed


def checked(wheels: Path, name: str, allowed: dict[tuple[str, str], set[str]]) -> bytes:
    """The wheel's bytes, once they match the lock."""
    parsed = WHEEL.match(name)
    if not parsed or "/" in name:
        raise Refused(f"{name!r} is not a wheel file name")
    key = (normalize(parsed[1]), parsed[2])
    if key not in allowed:
        raise Refused(f"{name}: {key[0]} {key[1]} is not in the lock")
    try:
        data = (wheels / name).read_bytes()
    except OSError as err:
        raise Refused(f"{name}: {err.strerror}") from None
    digest = hashlib.sha256(data).hexdigest()
    if digest not in allowed[key]:
        raise Refused(f"{name}: sha256 {digest} is not one the lock allows")
    return data


def unpack(data: bytes, dest: Path) -> None:
    """A wheel's files into dest as an installer would lay out site-packages; scripts, headers
    and data files are not needed (nothing runs them)."""
    with zipfile.ZipFile(io.BytesIO(data)) as whl:
        for info in whl.infolist():
            parts = PurePosixPath(info.filename).parts
            if info.is_dir() or not parts or ".." in parts or info.filename.startswith("/"):
                continue
            if parts[0].endswith(".data"):
                if len(parts) < 3 or parts[1] not in ("purelib", "platlib"):
                    continue
                parts = parts[2:]
            target = dest.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(whl.read(info))
            mode = (info.external_attr >> 16) & 0o777
            target.chmod(0o755 if mode & 0o111 else 0o644)


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    lock, wheels, selection, dest = map(Path, argv)
    try:
        allowed = read_lock(lock.read_text())
    except OSError as err:
        print(f"{lock}: {err.strerror}", file=sys.stderr)
        return 2
    if not allowed:
        print(f"{lock}: no hash-locked requirement", file=sys.stderr)
        return 2
    try:
        dest.mkdir(parents=True)
    except OSError as err:
        print(f"{dest}: {err.strerror}", file=sys.stderr)
        return 2
    try:
        names = selection.read_text().split()
        if not names:
            raise Refused(f"{selection} names no wheel")
        for name in names:
            unpack(checked(wheels, name, allowed), dest)
    except (Refused, OSError) as err:
        shutil.rmtree(dest, ignore_errors=True)
        why = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        where = f"{err.filename}: " if isinstance(err, OSError) and err.filename else ""
        print(log_line(f"{where}{why}"), file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
