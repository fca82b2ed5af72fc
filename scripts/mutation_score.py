"""Mutation score per decision module from a finished `mutmut run`, with the floor CI keeps.

Run from the repository root after `mutmut run` (scripts/mutation.sh does both). Prints one row
per module (killed, survived, excluded, score), then each counted survivor with its diff
(`--all`: the excluded ones too). Exits 1 when
a module scores below the floor, or when a survivor that is not message text sits in a function
that decides whether a GPU run starts or a spec is accepted.

`--patterns` prints the mutmut names of the gating functions' mutants (`scripts/mutation.sh
gate` runs only those); `--gates` scores such a run: every gating mutant must have been checked
and none may survive, and the other mutants (not run) are not scored.

Excluded from the score: survivors whose only change is the wording of a human-readable
message (a string literal holding a sentence). Status words, action names, labels and
partitions hold no sentence, so a survivor that changes one of them always counts.
"""

from __future__ import annotations

import argparse
import io
import re
import sys
import tokenize
from pathlib import Path

from mutmut.configuration import config
from mutmut.mutation.data import SourceFileMutationData
from mutmut.mutation.diff_apply import get_diff_for_mutant
from mutmut.stats import status_by_exit_code
from mutmut.utils.file_utils import walk_mutatable_files

# Functions whose mutants could start a GPU run or accept a spec refused today: a survivor
# there that is not message text fails the run whatever the score.
GATES = {
    "ci_budget.trigger.decide": {
        "decide", "_pull_request", "_label_sender", "_gating_labels", "_run_inputs", "split_list",
    },
    "ci_budget.trigger.authz": {"is_bot", "authorise", "registrations_for", "is_fork", "gate"},
    "ci_budget.trigger.comment": {"_time", "pinned_commit", "accepted_plan"},
    "ci_budget.trigger.rows": {
        "suite_rows", "spec_rows", "parse_guard_command", "check_ref", "GuardCommand.as_rerun",
        "guard_plan",
    },
    "ci_budget.registry.specs": {
        "strip_format", "parse_command", "unquote", "check_spec", "split_spec", "_files",
        "resolve",
    },
    "ci_budget.registry.lookup": {
        "is_glob", "_reach", "glob_hits", "prefixes", "Registry.__init__", "Registry.known",
        "Registry._under_roots", "Registry.find", "Registry.expand", "Registry._extra_runner",
        "Registry.runner_configs", "Registry._routed",
    },
}  # fmt: skip
KILLED = {"killed", "timeout", "caught by type check"}
SENTENCE = re.compile(r"[A-Za-z]{2,}.*\s|\s.*[A-Za-z]{2,}")


def function_of(key: str) -> tuple[str, str]:
    """('ci_budget.trigger.decide', 'Registry.find') from a mutmut key."""
    module, _, mangled = key.rpartition(".")
    name = mangled.rsplit("__mutmut_", 1)[0]
    if name.startswith("x_"):
        return module, name[2:]
    cls, _, method = name[len("x\u01c1") :].partition("\u01c1")
    return module, f"{cls}.{method}"


def _strings(line: str) -> list[tuple[int, str]] | None:
    """The line's tokens, each string literal (f-strings included) as one STRING token, as
    Python 3.11 tokenizes them; 3.12 splits f-strings into parts, which are joined back here
    so that the exclusions do not depend on the Python version."""
    text = line.strip() + "\n"
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return None
    start, end = getattr(tokenize, "FSTRING_START", None), getattr(tokenize, "FSTRING_END", None)
    out: list[tuple[int, str]] = []
    depth = 0
    for t in tokens:
        if t.type in (tokenize.NL, tokenize.NEWLINE):
            continue
        if start is not None and t.type == start:
            if depth == 0:
                begin = t.start[1]
            depth += 1
        elif depth and t.type == end:
            depth -= 1
            if depth == 0:
                out.append((tokenize.STRING, text[begin : t.end[1]]))
        elif depth == 0:
            out.append((t.type, t.string))
    return out


def message_only(diff: str) -> bool:
    """True when the mutant only rewords string literals that hold sentences."""
    removed = [x[1:] for x in diff.splitlines() if x.startswith("-") and not x.startswith("---")]
    added = [x[1:] for x in diff.splitlines() if x.startswith("+") and not x.startswith("+++")]
    if not removed or len(removed) != len(added):
        return False
    for old, new in zip(removed, added, strict=True):
        a, b = _strings(old), _strings(new)
        if a is None or b is None or len(a) != len(b):
            return False
        for (kind_a, text_a), (kind_b, text_b) in zip(a, b, strict=True):
            if text_a == text_b:
                continue
            if kind_a != tokenize.STRING or kind_b != tokenize.STRING:
                return False
            if not SENTENCE.search(text_a):
                return False
    return True


def gate_patterns() -> list[str]:
    """mutmut name patterns (fnmatch) of every gating function's mutants."""
    out = []
    for module, functions in sorted(GATES.items()):
        for name in sorted(functions):
            cls, _, method = name.rpartition(".")
            mangled = f"x\u01c1{cls}\u01c1{method}" if cls else f"x_{name}"
            out.append(f"{module}.{mangled}__mutmut_*")
    return out


def is_gate(key: str) -> bool:
    module, function = function_of(key)
    return function in GATES.get(module, ())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--floor", type=float, default=90.0, help="lowest score per module, %%")
    parser.add_argument("--all", action="store_true", help="also show excluded survivors")
    parser.add_argument("--partial", action="store_true", help="score a run still in progress")
    parser.add_argument("--gates", action="store_true", help="score only the gating mutants")
    parser.add_argument("--patterns", action="store_true", help="print the gating mutants' names")
    args = parser.parse_args(argv)
    if args.patterns:
        print("\n".join(gate_patterns()))
        return 0
    config()
    rows, failures, listed = [], [], []
    for path in sorted(walk_mutatable_files()):
        data = SourceFileMutationData(path=path)
        data.load()
        if not any(args.gates is False or is_gate(k) for k in data.exit_code_by_key):
            continue
        module = ".".join(Path(path).with_suffix("").parts[1:])
        killed = survived = excluded = unchecked = 0
        for key, code in sorted(data.exit_code_by_key.items()):
            if args.gates and not is_gate(key):
                continue
            status = status_by_exit_code[code]
            if status in KILLED:
                killed += 1
                continue
            if status == "skipped":
                continue
            if status == "not checked":
                unchecked += 1
                continue
            diff = get_diff_for_mutant(key, path=path)
            _, function = function_of(key)
            if message_only(diff):
                excluded += 1
                listed.append(("excluded (message text)", key, diff))
                continue
            survived += 1
            listed.append((status, key, diff))
            if function in GATES.get(module, ()):
                failures.append(f"{key}: {status} in {function}, which gates a run or a spec")
        total = killed + survived
        score = 100.0 * killed / total if total else 100.0
        rows.append((module, killed, survived, excluded, score))
        if unchecked and not args.partial:
            failures.append(f"{module}: {unchecked} mutants not checked (an interrupted run?)")
        if score < args.floor and not args.gates:
            failures.append(f"{module}: score {score:.1f} % is below the floor {args.floor:g} %")
    if not rows:
        print("mutation: no mutmut results found (run `mutmut run` first)", file=sys.stderr)
        return 2
    print(f"{'module':<28} {'killed':>6} {'survived':>8} {'excluded':>8} {'score':>7}")
    for module, killed, survived, excluded, score in rows:
        print(f"{module:<28} {killed:>6} {survived:>8} {excluded:>8} {score:>6.1f}%")
    for status, key, diff in listed:
        if args.all or not status.startswith("excluded"):
            print(f"\n# {key}: {status}\n{diff}")
    for failure in failures:
        print(f"mutation: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
