"""Measured tables in guard docstrings: rows, flags for the CI architecture, run values. Pure.

Reads module and class docstrings (with `ast`, never importing the file), turns each table
row into an `ArchRow` with file line numbers, flags rows whose fix is not shown to matter on the
CI architecture, and matches rows to measured values that tests publish with
`record_property`. File reading happens only in `rows_for_files`, the entry point for callers.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from ci_budget.arch.edit import set_cell
from ci_budget.arch.table import (
    FIXED,
    REVERTED,
    ArchTableError,
    Table,
    format_value,
    normalize_arch,
    parse_cell,
    parse_tables,
)
from ci_budget.config import Config
from ci_budget.models import ArchCell, ArchRow, Problem, RunMeta, RunResults

UNVERIFIED = "unverified on CI arch"
SILENT = "silent on CI arch"
SILENT_ALL = "silent everywhere"
NO_COLUMN = "no CI-arch column"
FIXED_NONZERO = "fixed value nonzero"
CASE_PROPERTY = "kl_case"  # record_property("kl_case", "<row label>") names a row explicitly
VALUE_PROPERTY = "avg_kl_div"

__all__ = [
    "ArchTableError",
    "arch_mismatch",
    "attach_measured",
    "fill_source",
    "flag_rows",
    "parse_source",
    "rows_for_files",
]


# ---- docstrings -----------------------------------------------------------------------


def _docstrings(tree: ast.Module) -> list[ast.Constant]:
    nodes = [tree] + [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    out = []
    for node in nodes:
        body = node.body
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            out.append(body[0].value)
    return out


def _line_map(src_lines: list[str], node: ast.Constant) -> list[int | None]:
    """File line (1-based) of each docstring line, None where the source spells it otherwise."""
    text_lines = node.value.split("\n")
    out: list[int | None] = []
    cursor = node.lineno
    end = node.end_lineno or node.lineno
    for text in text_lines:
        found = None
        for n in range(cursor, end + 1):
            if text in src_lines[n - 1]:
                found = n
                break
        out.append(found)
        if found is not None:
            cursor = found + 1
    return out


def _parse(source: str, rel: str) -> tuple[ast.Module | None, list[Problem]]:
    try:
        return ast.parse(source, filename=rel), []
    except (SyntaxError, ValueError) as exc:
        line = getattr(exc, "lineno", None) or 1
        return None, [Problem(file=rel, line=line, message=f"cannot parse: {exc}")]


def parse_source(source: str, rel: str, arch_map: dict[str, str]):
    """(rows, problems, tables) for one file; tables are (docstring node, line map, Table)."""
    tree, problems = _parse(source, rel)
    rows: list[ArchRow] = []
    tables = []
    if tree is None:
        return rows, problems, tables
    src_lines = source.split("\n")
    for node in _docstrings(tree):
        line_map = _line_map(src_lines, node)
        for table in parse_tables(node.value, arch_map):
            tables.append((node, line_map, table))
            rows.extend(_table_rows(table, rel, line_map, problems))
    return rows, problems, tables


def _file_line(line_map: list[int | None], index: int) -> int:
    return line_map[index] or 0


def _table_rows(table: Table, rel: str, line_map, problems: list[Problem]) -> list[ArchRow]:
    at = _file_line(line_map, table.first)
    for index, message in table.problems:
        problems.append(Problem(file=rel, line=_file_line(line_map, index), message=message))
    reverted: dict[str, int] = {}
    for k, col in enumerate(table.columns):
        if col.kind != REVERTED:
            continue
        if col.arch is None:
            problems.append(
                Problem(file=rel, line=at, message=f"column '{col.label}' names no architecture")
            )
        elif col.arch in reverted:
            problems.append(
                Problem(file=rel, line=at, message=f"two reverted columns for {col.arch}")
            )
        else:
            reverted[col.arch] = k
    fixed = [k for k, c in enumerate(table.columns) if c.kind == FIXED]
    rows, group = [], None
    for r in table.rows:
        group = r.group or group
        row = ArchRow(
            file=rel,
            line=_file_line(line_map, r.index),
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


# ---- flags ----------------------------------------------------------------------------


def _zero(cell: ArchCell | None) -> bool:
    return cell is not None and not cell.na and all(v == 0 for v in cell.values)


def flag_rows(rows: list[ArchRow], ci_arch: str | None) -> list[ArchRow]:
    """Set `ci_arch` and `flags` on each row (in place; returned for chaining).

    `fixed value nonzero` applies to exactness tables: tables where some fixed cell reads 0.
    """
    exact = {(r.file, r.table_line) for r in rows if _zero(r.fixed)}
    for row in rows:
        flags = []
        cells = list(row.reverted.values())
        if ci_arch is not None:
            mine = row.reverted.get(ci_arch)
            if mine is None:
                flags.append(NO_COLUMN)
            elif mine.na:
                flags.append(UNVERIFIED)
            elif _zero(mine) and any(
                not c.na and any(v != 0 for v in c.values)
                for a, c in row.reverted.items()
                if a != ci_arch
            ):
                flags.append(SILENT)
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


# ---- measured values from runs --------------------------------------------------------


def _tokens(nodeid: str) -> tuple[str, set[str]]:
    parts = nodeid.split("::")
    test = re.sub(r"\[.*\]\Z", "", parts[-1])
    toks: set[str] = set()
    for part in parts[1:-1] + [test]:
        for piece in re.split(r"[^A-Za-z0-9]+", part):
            toks.update(w.lower() for w in re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", piece))
    return test, toks


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def match_row(rows: list[ArchRow], nodeid: str, case: str | None = None) -> list[ArchRow]:
    """Rows a test measures. `case` (the `kl_case` property) names the row: its label or
    `<group> <label>`. Otherwise a row label's `test_*` word must equal the test's name, and
    its other words must all appear in the class or test name; the row with most such words
    wins (`lazy test_x` beats `test_x` for `TestLazy::test_x`). Several winners: ambiguous."""
    if case is not None:
        want = _norm(case)
        return [r for r in rows if want in (_norm(r.case), _norm(f"{r.group or ''} {r.case}"))]
    test, toks = _tokens(nodeid)
    best: list[ArchRow] = []
    score = -1
    for row in rows:
        words = _norm(row.case).split()
        named = [w for w in words if w.startswith("test_")]
        if named and named != [test.lower()]:
            continue
        extra = [w for w in words if not w.startswith("test_")]
        if not named and not extra or not all(w in toks for w in extra):
            continue
        if len(extra) > score:
            best, score = [row], len(extra)
        elif len(extra) == score:
            best.append(row)
    return best


def _same_file(a: str, b: str) -> bool:
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def attach_measured(
    rows: list[ArchRow],
    results: list[RunResults],
    arch: str | None = None,
    key: str = VALUE_PROPERTY,
    problems: list[Problem] | None = None,
    arch_map: dict[str, str] | None = None,
) -> list[ArchRow]:
    """Set `row.measured[arch]` from `record_property(key, value)` of matching tests."""
    problems = [] if problems is None else problems
    amap = arch_map or {}
    for res in results:
        gpu = res.meta.gpu
        run_arch = normalize_arch(arch or (gpu.arch if gpu else "") or "", amap)
        if run_arch is None:
            problems.append(
                Problem(file="results", message="run has no detected GPU arch; pass --arch")
            )
            continue
        for f in res.files:
            mine = [r for r in rows if _same_file(r.file, f.path)]
            for tc in (t for c in f.classes for t in c.test_cases):
                if key not in tc.user_properties or not mine:
                    continue
                try:
                    value = float(tc.user_properties[key])
                except (TypeError, ValueError):
                    problems.append(
                        Problem(file=f.path, message=f"{tc.nodeid}: {key} is not a number")
                    )
                    continue
                hits = match_row(mine, tc.nodeid, tc.user_properties.get(CASE_PROPERTY))
                if len(hits) == 1:
                    hits[0].measured[run_arch] = value
                else:  # one case under several fixes: it measured each, unless named elsewhere
                    for row in hits:
                        row.measured.setdefault(run_arch, value)
    return rows


# ---- files ----------------------------------------------------------------------------


def ci_arch_for(rel: str, source: str, config: Config) -> str | None:
    """The file's registered runner config's arch, else the docstring's prose hint."""
    from ci_budget.registry.parse import scan_source

    scan = scan_source(source, rel, config)
    for reg in sorted(scan.registrations, key=lambda r: not r.enabled):
        runner = config.runner(reg.runner_config)
        if runner is not None and runner.arch:
            return runner.arch
    tree, _ = _parse(source, rel)
    doc = ast.get_docstring(tree) if tree is not None else None
    return prose_arch(doc, config) if doc else None


def rows_for_files(
    root: Path, rels: list[str], config: Config, ci_arch: str | None = None
) -> tuple[list[ArchRow], list[Problem]]:
    """Flagged rows and problems of the given repo-relative files. `ci_arch` None: each file's
    registered runner config, else its docstring's "CI runs X" hint."""
    arch_map = config.gpu_arch_map()
    want = normalize_arch(ci_arch, arch_map) if ci_arch else None
    rows: list[ArchRow] = []
    problems: list[Problem] = []
    for rel in rels:
        try:
            source = (root / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(Problem(file=rel, message=f"cannot read: {exc}"))
            continue
        found, probs, _ = parse_source(source, rel, arch_map)
        problems.extend(probs)
        if found:
            arch = want or ci_arch_for(rel, source, config)
            rows.extend(flag_rows(found, normalize_arch(arch, arch_map) if arch else None))
    return rows, problems


def fill_source(
    source: str,
    rel: str,
    rows: list[ArchRow],
    arch: str,
    reverted: bool,
    arch_map: dict[str, str],
) -> tuple[str, list[tuple[int, list[str]]], list[Problem]]:
    """Write each row's `measured[arch]` into its table: the reverted column for `arch` when
    `reverted`, else the fixed column (the one for `arch`, or the one without an arch).
    Returns the new source, (file line, lines) of every table touched, and problems."""
    kind = REVERTED if reverted else FIXED
    by_line = {(r.file, r.line): r for r in rows}
    src_lines = source.split("\n")
    touched, problems = [], []
    _, _, tables = parse_source(source, rel, arch_map)
    for node, line_map, table in tables:
        cols = [k for k, c in enumerate(table.columns) if c.kind == kind and c.arch == arch]
        cols = cols or [k for k, c in enumerate(table.columns) if c.kind == kind and c.arch is None]
        lines = node.value.split("\n")
        changed = False
        for r in table.rows:
            row = by_line.get((rel, _file_line(line_map, r.index)))
            if row is None or arch not in row.measured:
                continue
            if not cols:
                problems.append(
                    Problem(file=rel, line=row.table_line, message=f"no {kind} column for {arch}")
                )
                break
            text = format_value(row.measured[arch])
            fresh = next(
                t for t in parse_tables("\n".join(lines), arch_map) if t.first == table.first
            )
            try:
                lines = set_cell(lines, fresh, r.index, cols[0], text, arch_map)
                changed = True
            except ArchTableError as exc:
                problems.append(Problem(file=rel, line=row.line, message=str(exc)))
        if changed:
            _write_back(src_lines, node, line_map, lines, table, rel)
            first = _file_line(line_map, table.first)
            touched.append((first, lines[table.first : table.last + 1]))
    return "\n".join(src_lines), touched, problems


def _write_back(src_lines, node, line_map, lines, table: Table, rel: str) -> None:
    old = node.value.split("\n")
    for i in range(table.first, table.last + 1):
        if lines[i] == old[i]:
            continue
        n = line_map[i]
        pos = src_lines[n - 1].find(old[i]) if n else -1
        if pos < 0:
            raise ArchTableError(f"{rel}:{n or node.lineno}: table line is not plain source text")
        src = src_lines[n - 1]
        src_lines[n - 1] = src[:pos] + lines[i] + src[pos + len(old[i]) :]
