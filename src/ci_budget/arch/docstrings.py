"""Measured tables in a file's module and class docstrings, as `ArchRow`s with file lines, and
the flags on their rows: is the fix shown to matter on the CI architecture? Pure.

The file is read with `ast`, never imported. Measured values are matched to rows in `match`,
and written back in `fill`. Reading files is the caller's (`ci_budget.workspace.files`).
"""

from __future__ import annotations

import ast
import re
from collections import deque

from ci_budget.arch.layout import FIXED, REVERTED, Table, normalize_arch, parse_cell
from ci_budget.arch.table import parse_tables
from ci_budget.config import Config
from ci_budget.models import ArchCell, ArchRow, Problem, RunMeta

# ==== Tables in docstrings ====================================================================


def parse_python(source: str, rel: str) -> tuple[ast.Module | None, list[Problem]]:
    try:
        return ast.parse(source, filename=rel), []
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None) or 1
        return None, [Problem(file=rel, line=line, message=f"cannot parse: {exc}")]


def class_names(source: str | ast.Module) -> set[str]:
    """Names of the classes a file (its text or its tree) defines, at any depth; empty when it
    does not parse."""
    tree = source if isinstance(source, ast.Module) else parse_python(source, "")[0]
    return {n.name for n in class_defs(tree)} if tree is not None else set()


# Nodes whose fields can hold statements. A class is a statement, and no expression holds one
# (a lambda's body is an expression), so a walk of these alone meets every class.
_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)


def class_defs(tree: ast.Module) -> list[ast.ClassDef]:
    """Every class in the tree, in `ast.walk`'s order (breadth first), without visiting the
    expressions: on a test file that is most of its nodes, and most of the walk's time."""
    out: list[ast.ClassDef] = []
    todo: deque[ast.AST] = deque([tree])
    while todo:
        node = todo.popleft()
        if isinstance(node, ast.ClassDef):
            out.append(node)
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list) and value and isinstance(value[0], _HOLDERS):
                todo.extend(value)
    return out


def _docstrings(tree: ast.Module) -> list[ast.Constant]:
    nodes: list[ast.Module | ast.ClassDef] = [tree, *class_defs(tree)]
    out: list[ast.Constant] = []
    for node in nodes:
        first = node.body[0] if node.body else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            out.append(first.value)
    return out


def _line_map(src_lines: list[str], node: ast.Constant) -> list[int | None]:
    """File line (1-based) of each docstring line, None where the source spells it otherwise."""
    out: list[int | None] = []
    cursor = node.lineno
    end = node.end_lineno or node.lineno
    for text in str(node.value).split("\n"):
        found = next((n for n in range(cursor, end + 1) if text in src_lines[n - 1]), None)
        out.append(found)
        if found is not None:
            cursor = found + 1
    return out


def parse_source(source: str, rel: str, arch_map: dict[str, str], tree: ast.Module | None = None):
    """(rows, problems, tables) for one file; tables are (docstring node, line map, Table).
    `tree`: the source's tree when the caller has parsed it already."""
    tree, problems = (tree, []) if tree is not None else parse_python(source, rel)
    rows: list[ArchRow] = []
    tables: list[tuple[ast.Constant, list[int | None], Table]] = []
    if tree is None:
        return rows, problems, tables
    src_lines = source.split("\n")
    for node in _docstrings(tree):
        line_map = _line_map(src_lines, node)
        for table in parse_tables(str(node.value), arch_map):
            tables.append((node, line_map, table))
            rows.extend(_table_rows(table, rel, line_map, problems))
    return rows, problems, tables


def file_line(line_map: list[int | None], index: int) -> int:
    return line_map[index] or 0


def _reverted_columns(table: Table, rel: str, at: int, problems: list[Problem]) -> dict[str, int]:
    reverted: dict[str, int] = {}
    for k, col in enumerate(table.columns):
        if col.kind != REVERTED:
            continue
        if col.arch is None:
            message = f"column '{col.label}' names no architecture"
        elif col.arch in reverted:
            message = f"two reverted columns for {col.arch}"
        else:
            reverted[col.arch] = k
            continue
        problems.append(Problem(file=rel, line=at, message=message))
    return reverted


def _table_rows(table: Table, rel: str, line_map, problems: list[Problem]) -> list[ArchRow]:
    at = file_line(line_map, table.first)
    for index, message in table.problems:
        problems.append(Problem(file=rel, line=file_line(line_map, index), message=message))
    reverted = _reverted_columns(table, rel, at, problems)
    fixed = [k for k, c in enumerate(table.columns) if c.kind == FIXED]
    rows, group = [], None
    for r in table.rows:
        group = r.group or group
        row = ArchRow(
            file=rel,
            line=file_line(line_map, r.index),
            table_line=at,
            group=group,
            case=r.case,
            reverted={a: _cell(r, k) for a, k in reverted.items()},
            fixed=_cell(r, fixed[0]) if fixed else None,
        )
        rows.append(row)
    return rows


def _cell(row, col: int) -> ArchCell:
    if col not in row.cells:
        return ArchCell(raw="", na=True)
    return parse_cell(row.cells[col][2]) or ArchCell(raw=row.cells[col][2], na=True)


# ==== Flags on rows ===========================================================================

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
