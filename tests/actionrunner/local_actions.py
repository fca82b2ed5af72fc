"""The harness's own `actions/checkout`, `upload-artifact` and `download-artifact` (see
runner's docstring for what each stands for), as a part of Runner."""

from __future__ import annotations

import fnmatch
import glob
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .runner import _JobState


class LocalActions:
    """Needs the Runner's origin, github, artifacts, run_artifacts and repositories."""

    def _checkout(self, with_: dict, job: _JobState) -> str:
        dest = job.workspace / with_.get("path", "")
        if dest.exists() and any(dest.iterdir()):
            shutil.rmtree(dest)
        other = with_.get("repository")
        if other in self.repositories:  # another repository the test provides, at its HEAD
            subprocess.run(["git", "clone", "-q", str(self.repositories[other]), str(dest)],
                           check=True)  # fmt: skip
            return ""
        event = self.github["event"]
        ref = with_.get("ref") or ""
        if not ref and self.github["event_name"] == "pull_request":
            ref = event["pull_request"]["head"]["sha"]  # GitHub: the merge commit
        if not ref:
            ref = self.github["sha"]
        depth = int(with_.get("fetch-depth") or 0)
        if depth > 0:  # given: the commit alone (its `depth` ancestors), as actions/checkout
            return _shallow(self.origin, dest, str(ref), depth)
        # Not given: a whole clone (GitHub's default is 1; the workflows that rely on history
        # say fetch-depth: 0, and a test may read any commit).
        subprocess.run(["git", "clone", "-q", str(self.origin), str(dest)], check=True)
        if str(ref).startswith("refs/"):  # refs/pull/N/head: not in a plain clone's refs
            subprocess.run(["git", "-C", str(dest), "fetch", "-q", "origin", ref], check=True)
            ref = "FETCH_HEAD"
        subprocess.run(["git", "-C", str(dest), "checkout", "-q", ref], check=True)
        head = subprocess.run(
            ["git", "-C", str(dest), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        return head

    def _upload(self, with_: dict, job: _JobState) -> str:
        name = str(with_["name"])
        store = self.artifacts / name
        if store.exists():
            raise RuntimeError(f"artifact {name!r} uploaded twice (v4 rejects that)")
        found = []
        for line in str(with_["path"]).splitlines():
            if line.strip():
                pattern = line.strip()
                base = Path(pattern) if Path(pattern).is_absolute() else job.workspace / pattern
                found += [Path(p) for p in _glob(base)]
        if not found:
            if with_.get("if-no-files-found", "warn") == "error":
                raise RuntimeError(f"artifact {name!r}: no files")
            return f"warning: no files for artifact {name!r}"
        store.mkdir(parents=True)
        for path in found:  # a folder uploads its files (the only shape the workflows use)
            for f in sorted(path.iterdir()) if path.is_dir() else [path]:
                shutil.copy2(f, store / f.name)
        return f"uploaded {[p.name for p in found]} as {name!r}"

    def _download(self, with_: dict, job: _JobState) -> str:
        dest = Path(str(with_.get("path", ".")))
        dest = dest if dest.is_absolute() else job.workspace / dest
        pattern = with_.get("pattern") or with_.get("name") or "*"
        store = self.artifacts
        if with_.get("run-id"):  # another run's artifacts (needs a token, as on GitHub)
            if not with_.get("github-token"):
                raise RuntimeError("download-artifact: run-id needs github-token")
            # a run that uploaded nothing has no folder: none of its artifacts is found
            store = self.run_artifacts.get(str(with_["run-id"]), self.artifacts / ".none")
        found = store.iterdir() if store.is_dir() else []
        names = sorted(p.name for p in found if fnmatch.fnmatch(p.name, pattern))
        if with_.get("name") and not names:
            raise RuntimeError(f"artifact {with_['name']!r} not found")
        for name in names:
            # v4: one artifact by name lands in `path` itself; a pattern, in a folder per name
            single = with_.get("name") and not with_.get("pattern")
            target = dest if with_.get("merge-multiple") or single else dest / name
            target.mkdir(parents=True, exist_ok=True)
            for f in (store / name).iterdir():
                shutil.copy2(f, target / f.name)
        return f"downloaded {names}"


def _shallow(origin: Path, dest: Path, ref: str, depth: int) -> str:
    """`git init` + `git fetch --depth` of the one ref over file:// (a local path would copy
    the whole object store), origin as the remote: later fetches in the job reach it."""
    dest.mkdir(parents=True, exist_ok=True)
    for args in (["init", "-q"], ["remote", "add", "origin", f"file://{origin}"],
                 ["fetch", "-q", "--no-tags", f"--depth={depth}", "origin", ref],
                 ["checkout", "-q", "FETCH_HEAD"]):  # fmt: skip
        subprocess.run(["git", "-C", str(dest), *args], check=True)
    done = subprocess.run(["git", "-C", str(dest), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True)  # fmt: skip
    return done.stdout.strip()


def _glob(path: Path) -> list[str]:
    return sorted(p for p in glob.glob(str(path)) if Path(p).is_file() or Path(p).is_dir())
