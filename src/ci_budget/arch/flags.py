"""Flags on measured-table rows: is the fix shown to matter on the CI architecture? Pure.

Rows come from `docstrings.parse_source`; measured values are matched to rows in `match`, and
written back in `fill`. Reading files is the caller's (`ci_budget.workspace.files`).
"""

from __future__ import annotations

import ast
import re

from ci_budget.arch.docstrings import class_names, parse_python, parse_source
from ci_budget.arch.names import normalize_arch
from ci_budget.config import Config
from ci_budget.models import ArchCell, ArchRow, Problem, RunMeta

UNVERIFIED = "unverified on CI arch"
SILENT = "silent on CI arch"
SILENT_ALL = "silent everywhere"
NO_COLUMN = "no CI-arch column"
FIXED_NONZERO = "fixed value nonzero"


def _zero(cell: ArchCell | None) -> bool:
    return cell is not None and not cell.na and all(v == 0 for v in cell.values)


def _fires(cell: ArchCell) -> bool:
    return not cell.na and any(v != 0 for v in cell.values)


def _ci_flags(row: ArchRow, ci_arch: str) -> list[str]:
    mine = row.reverted.get(ci_arch)
    if mine is None:
        return [NO_COLUMN]
    if mine.na:
        return [UNVERIFIED]
    others = [c for a, c in row.reverted.items() if a != ci_arch]
    return [SILENT] if _zero(mine) and any(_fires(c) for c in others) else []


def flag_rows(rows: list[ArchRow], ci_arch: str | None) -> list[ArchRow]:
    """Set `ci_arch` and `flags` on each row (in place; returned for chaining).

    `fixed value nonzero` applies to exactness tables: tables where some fixed cell reads 0.
    """
    exact = {(r.file, r.table_line) for r in rows if _zero(r.fixed)}
    for row in rows:
        flags = _ci_flags(row, ci_arch) if ci_arch is not None else []
        cells = list(row.reverted.values())
        if cells and all(_zero(c) for c in cells):
            flags.append(SILENT_ALL)
        fixed = row.fixed
        if (row.file, row.table_line) in exact and fixed and not fixed.na and not _zero(fixed):
            flags.append(FIXED_NONZERO)
        row.ci_arch = ci_arch
        row.flags = flags
    return rows


def arch_mismatch(meta: RunMeta, arch_map: dict[str, str] | None = None) -> Problem | None:
    """A problem when the runner config's arch differs from the GPU the run found."""
    amap = arch_map or {}
    want = normalize_arch(meta.configured_arch, amap) if meta.configured_arch else None
    got = normalize_arch(meta.gpu.arch, amap) if meta.gpu and meta.gpu.arch else None
    if want is None or got is None or want == got:
        return None
    name = meta.gpu.name if meta.gpu else "?"
    return Problem(
        file=meta.runner_config or "run",
        message=f"arch mismatch: runner config '{meta.runner_config}' is configured as {want} "
        f"but the run found {name} ({got})",
    )


_HINT_RE = re.compile(r"CI runs\s+`?([\w.-]+)`?(?:\s*,\s*which is\s+`?([\w ]+?)`?)?[.,\s]", re.I)


def prose_arch(text: str, config: Config) -> str | None:
    """The hint "CI runs `1-gpu-large`, which is SM90." -> sm90 (stated arch, else config's)."""
    m = _HINT_RE.search(text + "\n")
    if not m:
        return None
    if m.group(2):
        stated = normalize_arch(m.group(2), config.gpu_arch_map())
        if stated:
            return stated
    runner = config.runner(m.group(1))
    return runner.arch if runner else None


def ci_arch_for(
    rel: str, source: str, config: Config, tree: ast.Module | None = None
) -> str | None:
    """The file's registered runner config's arch, else the docstring's prose hint."""
    from ci_budget.registry.parse import scan_source

    scan = scan_source(source, rel, config)
    for reg in sorted(scan.registrations, key=lambda r: not r.enabled):
        runner = config.runner(reg.runner_config)
        if runner is not None and runner.arch:
            return runner.arch
    tree = tree if tree is not None else parse_python(source, rel)[0]
    doc = ast.get_docstring(tree) if tree is not None else None
    return prose_arch(doc, config) if doc else None


def flagged_rows(
    rel: str, source: str, config: Config, ci_arch: str | None = None
) -> tuple[list[ArchRow], list[Problem], set[str]]:
    """Flagged rows, problems and the class names of one file's source, from one parse.
    `ci_arch` None: the file's registered runner config, else its docstring's "CI runs X" hint."""
    arch_map = config.gpu_arch_map()
    tree, problems = parse_python(source, rel)
    if tree is None:
        return [], problems, set()
    rows, problems, _ = parse_source(source, rel, arch_map, tree)
    if rows:
        arch = normalize_arch(ci_arch, arch_map) if ci_arch else None
        arch = arch or ci_arch_for(rel, source, config, tree)
        flag_rows(rows, normalize_arch(arch, arch_map) if arch else None)
    return rows, problems, class_names(tree)
