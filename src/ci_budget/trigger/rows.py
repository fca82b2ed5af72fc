"""Matrix rows for a plan, and the `/verify-guard` command that turns rows into verifications.
Pure.

- Suites: per-commit suites sharded into jobs (`suite_rows`), the rows' one-line summary.
- Labels: what one label may start: runner configs on an allowlist and a bounded number of
  jobs. A label runs every suite the PR registers, and the PR writes the registrations: without
  a bound one label could plan hundreds of jobs on the largest runners (a registration names any
  runner config the configuration knows). So a label's rows keep only allowed runner configs (by
  default the ones the repository's own CI files, or its configuration, name; else ci-budget's
  built-in ones), and a plan of more than `label-max-jobs` jobs is refused with the numbers.
- Specs: one row per runner config for the specs of a command or a dispatch (`spec_rows`).
- `/verify-guard[@SHA] FILE REF…`: a PR comment asking to run a guard file with fixes reverted
  (`ci-budget guard verify`) on the runner config the file is registered for. It is
  `/rerun-test FILE` to the gate in `comment` (the commenter's permission, the pinned commit,
  the file registered at that commit); then its matrix rows carry the fixes to revert. FILE is
  one registered file (no ::Class); each REF is a commit (7 to 40 hex digits) or a repository
  path to a patch file (`.patch`/`.diff`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ci_budget.config import DEFAULT_RUNNER_CONFIGS, Config
from ci_budget.models import MatrixRow, Plan, Registration
from ci_budget.registry import specs
from ci_budget.registry.specs import check_spec, show
from ci_budget.sharding.dispatch import dispatch

# --- suites: sharded per-commit suites --------------------------------------------------------


def _install(config: Config, name: str | None) -> str | None:
    runner = config.runner(name)  # None for no name and for an unknown one
    return runner.install if runner is not None else None


def suite_rows(
    registrations: Sequence[Registration],
    config: Config,
    weights: dict[tuple[str, str], float] | None = None,
    patterns: Sequence[str] | None = None,
    model: Any = None,
) -> tuple[list[MatrixRow], list[str]]:
    """Matrix rows for the per-commit suites `patterns` select (None: all), sharded as
    sglang's compute_partitions.py does; and notes on suites that cannot run."""
    plans, notes = dispatch(registrations, config, patterns, weights, model)
    rows: list[MatrixRow] = []
    for p in plans:
        for i in range(p.size):
            rows.append(
                MatrixRow(
                    name=p.suite if p.size == 1 else f"{p.suite} {i + 1}/{p.size}",
                    runner_config=p.runner_config,
                    runs_on=p.runs_on,
                    suite=p.suite,
                    backend=p.backend,
                    partition=f"{i}/{p.size}",
                    max_parallel=p.max_parallel,
                    install=_install(config, p.runner_config),
                )
            )
    return rows, notes


def _count(items: Sequence[Any], word: str) -> str:
    return f"{len(items)} {word}{'' if len(items) == 1 else 's'}"


def summary(rows: Sequence[MatrixRow]) -> str:
    """`N jobs: M suites (a, b); K specs on RUNNER`, for a plan's reason."""
    suites = list(dict.fromkeys(r.suite for r in rows if r.suite))
    parts = [f"{_count(suites, 'suite')} ({', '.join(suites)})"] if suites else []
    parts += [f"{_count(r.specs, 'spec')} on {r.runner_config}" for r in rows if not r.suite]
    return f"{_count(rows, 'job')}: " + "; ".join(parts)


# --- labels: the runner configs and jobs one label may start -----------------------------------


def allowed_runner_configs(config: Config) -> list[str]:
    configured = config.github.label_runner_configs
    if configured is not None:
        return list(configured)
    return list(config.runner_configs or DEFAULT_RUNNER_CONFIGS)


def label_limits(
    rows: Sequence[MatrixRow], config: Config
) -> tuple[list[MatrixRow], list[str], str | None]:
    """(the rows a label may run, notes on the rows left out, why the whole plan is refused or
    None)."""
    allowed = set(allowed_runner_configs(config))
    kept = [r for r in rows if r.runner_config in allowed]
    left = Counter(r.runner_config for r in rows if r.runner_config not in allowed)
    notes = [
        f"{count} job{'' if count == 1 else 's'} on runner config '{name}' not run: a label "
        "runs only the runner configs of the repository's CI (github.label-runner-configs)"
        for name, count in sorted(left.items())
    ]
    limit = config.github.label_max_jobs
    if len(kept) <= limit:
        return kept, notes, None
    by_config = Counter(r.runner_config for r in kept)
    biggest = ", ".join(f"{n} on {name}" for name, n in by_config.most_common(3))
    why = (
        f"{len(kept)} jobs planned ({biggest}); a label starts at most {limit} "
        "(github.label-max-jobs)"
    )
    return [], notes, why


def label_rows(
    registrations: Sequence[Registration],
    chosen: Sequence[str],
    config: Config,
    weights: dict | None = None,
    model: Any = None,
) -> tuple[list[MatrixRow], list[str], str | None]:
    """The rows the gating labels `chosen` run (their stages, sharded), within the limits:
    (rows, notes, why the plan is refused or None)."""
    if not chosen:
        return [], [], None
    patterns = stages(chosen, config.github.gating_labels)
    rows, notes = suite_rows(registrations, config, weights, patterns, model)
    kept, left_out, why = label_limits(rows, config)
    return kept, notes + left_out, why


def stages(chosen: Sequence[str], gating) -> list[str] | None:
    """The stage patterns the chosen labels gate; None: every stage."""
    patterns: list[str] = []
    for name in chosen:
        if not gating[name]:
            return None  # an empty list gates every stage
        patterns.extend(s for s in gating[name] if s not in patterns)
    return patterns


# --- specs: one row per runner config ---------------------------------------------------------


def spec_rows(
    accepted: Sequence[specs.Resolved], config: Config, prefix: str = "rerun-test"
) -> list[MatrixRow]:
    """One matrix row per runner config, holding every spec that runs there."""
    by_config: dict[str, list[str]] = {}
    for item in accepted:
        for name in item.runner_configs:
            by_config.setdefault(name, []).append(item.spec)
    rows = []
    for name, found in by_config.items():
        runner = config.runner(name)
        assert runner is not None  # specs resolve to configured runners only
        rows.append(
            MatrixRow(
                name=f"{prefix} {name}",
                runner_config=name,
                runs_on=list(runner.runs_on),
                specs=found,
                partition="0/1",
                install=runner.install,
            )
        )
    return rows


# --- /verify-guard ----------------------------------------------------------------------------

GUARD = "/verify-guard"
GUARD_USAGE = f"{GUARD} test/registered/dir/test_x.py REF... (a commit or a .patch file per fix)"
MAX_REFS = 5
_SHA = re.compile(r"[0-9a-fA-F]{7,40}\Z")


@dataclass
class GuardCommand:
    file: str
    refs: list[str]
    problems: list[str] = field(default_factory=list)
    sha: str | None = None  # `/verify-guard@SHA`

    def as_rerun(self) -> specs.Command:
        """The same request as `/rerun-test[@SHA] FILE`, for the shared gate."""
        return specs.Command([self.file] if self.file else [], list(self.problems), self.sha)


def parse_guard_command(body: str) -> GuardCommand | None:
    """None when the comment's first line is not `/verify-guard[@SHA] ...`."""
    first = body.partition("\n")[0].rstrip("\r").strip(" \t")
    word, _, rest = first.partition(" ")
    if word != GUARD and not word.startswith(GUARD + "@"):
        return None
    sha = word[len(GUARD) + 1 :].lower() if word != GUARD else None
    if sha is not None and not _SHA.match(sha):
        return GuardCommand(
            "", [], [f"{show('@' + sha)} is not a commit SHA (7 to 40 hex characters)"]
        )
    tokens = rest.split()
    if len(first) > specs.MAX_LINE_CHARS:
        return GuardCommand("", [], [f"the command line is {len(first)} characters; at most "
                                     f"{specs.MAX_LINE_CHARS}"], sha)  # fmt: skip
    if len(tokens) < 2:
        return GuardCommand(
            "", [], [f"give a file and at least one fix; usage: {GUARD_USAGE}"], sha
        )
    file, refs = tokens[0], tokens[1:]
    problems = [f"{show(file)}: name a whole file, not a class or test"] if "::" in file else []
    if set("*?[") & set(file):  # a glob names many files; a verification is of one
        problems.append(f"{show(file)}: name one file, not a pattern")
    if len(refs) > MAX_REFS:
        problems.append(f"{len(refs)} fixes given; at most {MAX_REFS}")
    problems.extend(p for ref in refs[:MAX_REFS] if (p := check_ref(ref)))
    return GuardCommand(file, refs, problems, sha)


def check_ref(ref: str) -> str | None:
    """Why `ref` is not a commit or a patch path, or None."""
    if _SHA.match(ref):
        return None
    why = check_spec(ref)
    if why:
        return f"{show(ref)}: {why}"
    # check_spec has refused a leading '-' already.
    if not ref.endswith((".patch", ".diff")) or ref.startswith("/") or ".." in ref:
        return f"{show(ref)}: not a commit (7-40 hex digits) or a repository path to a .patch"
    return None


def guard_plan(plan: Plan, guard: GuardCommand, login: str) -> Plan:
    """`/rerun-test`'s accepted plan made a guard verification: each row carries the fixes to
    revert, and the reply and reason say so."""
    refs = ", ".join(show(r) for r in guard.refs)
    for row in plan.matrix:
        row.revert = list(guard.refs)
        row.name = "verify-guard" + row.name.removeprefix("rerun-test")
    rows = plan.reply.partition("\n")[2] if plan.reply else ""  # the accepted rows
    plan.reply = (
        f"@{login} verifying {show(guard.file)} with {refs} reverted at `{plan.head_sha}` "
        f"(#{plan.pr_number}), then as it is:\n{rows}"
    )
    plan.reason = GUARD + plan.reason.removeprefix(specs.COMMAND) + f"; reverting {refs}"
    return plan


def guard_hint(why: str, guard: GuardCommand) -> str:
    """A refusal that suggests `/rerun-test@SHA FILE` suggests the `/verify-guard` form."""
    return why.replace(f"`{specs.COMMAND}@", f"`{GUARD}@").replace(
        f" {guard.file}`", f" {guard.file} {' '.join(guard.refs)}`"
    )
