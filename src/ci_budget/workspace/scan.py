"""Registrations read from the checkout, as data: never imported or run.

- The scan of a tree: discovery and worker processes. Files are parsed by
  `registry.fast.scan_source_fast` (or `scan_source` with `full`), spread over worker processes
  when there are enough of them.
- A commit's registrations: fetched by SHA when the checkout lacks it, its test files read as
  git blobs and parsed (AST), never checked out. This is how plan, running from the base
  branch's code, learns what an approved PR commit registers: the PR's code decides nothing but
  the data it declares.
- The unregistered test files `/rerun-test` may name (`github.rerun-dirs`): `test_*.py` files
  under those folders, in the working tree or at a commit (from `git ls-tree`, reading no file).
"""

from __future__ import annotations

import base64
import fnmatch
import os
import re
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from ci_budget.config import Config
from ci_budget.models import Problem, Registration, RegistryScan
from ci_budget.registry.fast import scan_source_fast
from ci_budget.registry.parse import merge, scan_source
from ci_budget.workspace.git import GitError, excluded, git, list_files, read_blobs

PARALLEL_MIN_FILES = 400  # below this, starting workers costs more than it saves


def _scan_one(root: Path, rel: str, config: Config, full: bool) -> RegistryScan:
    try:
        raw = (root / rel).read_bytes()
    except OSError as exc:
        return RegistryScan(errors=[Problem(file=rel, message=f"cannot read: {exc.strerror}")])
    return (scan_source if full else scan_source_fast)(raw, rel, config)


def _worker(args: tuple[str, list[str], dict, bool]) -> list[dict]:
    root, rels, config_data, full = args
    config = Config.model_validate(config_data)
    return [_scan_one(Path(root), rel, config, full).model_dump() for rel in rels]


def _jobs(requested: int | None, files: int) -> int:
    if files < PARALLEL_MIN_FILES:
        return 1
    if requested:
        return max(1, requested)
    return max(1, min(os.cpu_count() or 1, 8))


def scan_each(
    root: Path, rels: list[str], config: Config, *, full: bool = False, jobs: int | None = None
) -> dict[str, RegistryScan]:
    """{rel: its scan} of files under `root`, on `jobs` processes."""
    results: dict[str, RegistryScan] = {}
    workers = _jobs(jobs, len(rels))
    if workers == 1:
        for rel in rels:
            results[rel] = _scan_one(root, rel, config, full)
        return results
    size = max(1, len(rels) // (workers * 4))
    chunks = [rels[i : i + size] for i in range(0, len(rels), size)]
    data = config.model_dump(by_alias=False)
    with ProcessPoolExecutor(max_workers=workers) as pool:
        batches = pool.map(_worker, [(str(root), c, data, full) for c in chunks])
        for chunk, dumps in zip(chunks, batches, strict=True):
            for rel, dump in zip(chunk, dumps, strict=True):
                results[rel] = RegistryScan.model_validate(dump)
    return results


def scan_paths(
    root: Path, rels: list[str], config: Config, *, full: bool = False, jobs: int | None = None
) -> RegistryScan:
    """Scan files under `root`, in order, on `jobs` processes."""
    results = scan_each(root, rels, config, full=full, jobs=jobs)
    return merge(results[rel] for rel in rels)


def _walk(top: str, rel: str, name: str, deep: bool, out: list[str]) -> None:
    """Files named like `name` in `top` (and, `deep`, in every folder below it that is not a
    symbolic link: `**` as `Path.glob` reads it), as `rel` + their path."""
    try:
        with os.scandir(top) as found:
            entries = list(found)
    except OSError:
        return
    for entry in entries:
        if fnmatch.fnmatchcase(entry.name, name) and entry.is_file():
            out.append(rel + entry.name)
        if deep and entry.is_dir() and not entry.is_symlink():
            _walk(entry.path, f"{rel}{entry.name}/", name, deep, out)


def glob_files(root: Path, pattern: str) -> list[str]:
    """Repo-relative paths of the files `root.glob(pattern)` yields. `DIR/**/NAME` and `DIR/NAME`
    (the usual shapes) walk the folders directly, without a Path object per entry."""
    *dirs, name = pattern.split("/")
    deep = bool(dirs) and dirs[-1] == "**"
    fixed = dirs[:-1] if deep else dirs
    if "**" in name or any(set("*?[") & set(d) or d in ("", ".", "..", "**") for d in fixed):
        paths = (p for p in root.glob(pattern) if p.is_file())
        return [p.relative_to(root).as_posix() for p in paths]
    out: list[str] = []
    base = "".join(f"{d}/" for d in fixed)
    _walk(str(root / base) if base else str(root), base, name, deep, out)
    return out


def discover(root: Path, config: Config) -> list[str]:
    """Repo-relative paths of test files, sorted, duplicates removed."""
    found = {rel for pattern in config.test_globs for rel in glob_files(root, pattern)}
    return sorted(rel for rel in found if not excluded(rel, config))


def directory_order(root: Path, config: Config) -> dict[str, int]:
    """path -> rank in the order `glob.glob(..., recursive=True)` finds the test files, pattern
    after pattern: the order sglang's run_suite.py runs a suite in when it is not sharded."""
    import glob

    base = str(root)
    found: dict[str, int] = {}
    for pattern in config.test_globs:
        for path in glob.glob(os.path.join(base, pattern), recursive=True):
            rel = os.path.relpath(path, base).replace(os.sep, "/")
            found.setdefault(rel, len(found))
    return found


def scan_files(
    root: Path, rels: Iterable[str], config: Config, *, full: bool = False, jobs: int | None = None
) -> RegistryScan:
    """Scan the given repo-relative files (the fast path, on all cores)."""
    return scan_paths(root, list(rels), config, full=full, jobs=jobs)


def scan_tree(root: Path, config: Config, **kwargs) -> RegistryScan:
    """Scan every test file under `root` that the config's globs select."""
    return scan_files(root, discover(root, config), config, **kwargs)


SHA = re.compile(r"[0-9a-f]{40}")


def _has_commit(root: Path, sha: str) -> bool:
    try:
        git(root, "cat-file", "-e", f"{sha}^{{commit}}")
    except GitError:
        return False
    return True


def fetch_commit(root: Path, sha: str, token: str | None = None) -> None:
    """Fetch `sha` (one commit deep) from `origin` unless the checkout has it. The token, when
    given, travels as an HTTP header in git's environment: never in argv, never in a file."""
    if not SHA.fullmatch(sha):
        raise GitError(f"{sha!r} is not a full commit SHA")
    if _has_commit(root, sha):
        return
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0")
    if token:
        basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
        env.update(
            GIT_CONFIG_COUNT="1",
            GIT_CONFIG_KEY_0="http.extraheader",
            GIT_CONFIG_VALUE_0=f"AUTHORIZATION: basic {basic}",
        )
    what = f"git fetch {sha[:12]}"
    git(root, "fetch", "--quiet", "--no-tags", "--depth=1", "origin", sha, env=env, timeout=300,
        what=what)  # fmt: skip
    if not _has_commit(root, sha):
        raise GitError(f"{what} failed: the commit is not there after it")


def registrations_at(
    root: Path, sha: str, config: Config, token: str | None = None
) -> list[Registration]:
    """The registrations of the test files at commit `sha`, under `root`, by `config` (the
    checkout's configuration: a PR's own ci-budget.toml is not read)."""
    fetch_commit(root, sha, token)
    blobs = read_blobs(root, sha, list_files(root, sha, config))
    return merge(
        scan_source(data, rel, config) for rel, data in sorted(blobs.items())
    ).registrations


def range_log(root: Path, before: str, after: str) -> list[tuple[str, str, tuple[str, ...]]] | None:
    """The commits in `before..after` (first-parent order, newest first), each as (sha, subject,
    paths it touched); None when the checkout lacks either commit or either is not a SHA."""
    if not (SHA.fullmatch(before) and SHA.fullmatch(after)):
        return None
    if not (_has_commit(root, before) and _has_commit(root, after)):
        return None
    out = git(root, "log", "--no-renames", "--format=%x01%H%x00%s", "--name-only",
              f"{before}..{after}", what="git log").decode("utf-8", "replace")  # fmt: skip
    commits = []
    for entry in out.split("\x01")[1:]:
        head, _, rest = entry.partition("\n")
        sha, _, subject = head.partition("\x00")
        paths = tuple(p for p in rest.splitlines() if p.strip())
        commits.append((sha, subject, paths))
    return commits


BOT = {
    "GIT_AUTHOR_NAME": "github-actions[bot]",
    "GIT_AUTHOR_EMAIL": "41898282+github-actions[bot]@users.noreply.github.com",
}
BOT |= {
    "GIT_COMMITTER_NAME": BOT["GIT_AUTHOR_NAME"],
    "GIT_COMMITTER_EMAIL": BOT["GIT_AUTHOR_EMAIL"],
}


def push_branch(root: Path, branch: str, paths: list[str], message: str) -> bool:
    """Commit `paths` (their changes in the work tree) on `branch`, made afresh from HEAD, and
    force-push it to origin (the branch is ci-budget's own: rewritten every time). False, and
    nothing done, when none of them changed."""
    if not git(root, "status", "--porcelain", "--", *paths).strip():
        return False
    env = {**os.environ, **BOT}
    git(root, "checkout", "-q", "-B", branch)
    git(root, "add", "--", *paths)
    git(root, "commit", "-q", "--no-verify", "-m", message, env=env)
    git(root, "push", "-q", "--force", "origin", f"HEAD:refs/heads/{branch}", env=env,
        timeout=300, what=f"git push {branch}")  # fmt: skip
    return True


def _wanted(rel: str) -> bool:
    name = rel.rpartition("/")[2]
    return name.startswith("test_") and name.endswith(".py")


def rerun_files(root: Path, config: Config) -> list[str]:
    """Repo-relative `test_*.py` paths under the rerun folders of the working tree, sorted."""
    out = []
    for directory in config.github.rerun_dirs:
        top = root / directory.strip("/")
        for folder, dirs, names in os.walk(top):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            rel = Path(folder).relative_to(root).as_posix()
            out += [f"{rel}/{n}" for n in names if _wanted(n)]
    return sorted(out)


def rerun_files_at(root: Path, sha: str, config: Config) -> list[str]:
    """The same at commit `sha` (which the checkout has: read with its registry)."""
    dirs = [d.strip("/") for d in config.github.rerun_dirs]
    if not dirs:
        return []
    out = git(root, "ls-tree", "-r", "-z", "--name-only", sha, "--", *dirs)
    return sorted(rel for rel in out.decode("utf-8", "surrogateescape").split("\0") if rel
                  and _wanted(rel))  # fmt: skip
