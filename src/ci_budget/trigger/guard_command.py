"""`/verify-guard[@SHA] FILE REF…`: a PR comment asking to run a guard file with fixes
reverted (`ci-budget guard verify`) on the runner config the file is registered for. Pure.

It is `/rerun-test FILE` to the gate in `decide`: the commenter's permission, the pinned commit
(`@SHA`, or a head provably older than the comment), the file registered at that commit; then
its matrix rows carry the fixes to revert. FILE is one registered file (no ::Class); each REF is
a commit (7 to 40 hex digits) or a repository path to a patch file (`.patch`/`.diff`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ci_budget.models import Plan
from ci_budget.registry import specs
from ci_budget.registry.specs import check_spec, show

COMMAND = "/verify-guard"
USAGE = f"{COMMAND} test/registered/dir/test_x.py REF... (a commit or a .patch file per fix)"
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
    if word != COMMAND and not word.startswith(COMMAND + "@"):
        return None
    sha = word[len(COMMAND) + 1 :].lower() if word != COMMAND else None
    if sha is not None and not _SHA.match(sha):
        return GuardCommand(
            "", [], [f"{show('@' + sha)} is not a commit SHA (7 to 40 hex characters)"]
        )
    tokens = rest.split()
    if len(first) > specs.MAX_LINE_CHARS:
        return GuardCommand("", [], [f"the command line is {len(first)} characters; at most "
                                     f"{specs.MAX_LINE_CHARS}"], sha)  # fmt: skip
    if len(tokens) < 2:
        return GuardCommand("", [], [f"give a file and at least one fix; usage: {USAGE}"], sha)
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
    plan.reason = COMMAND + plan.reason.removeprefix(specs.COMMAND) + f"; reverting {refs}"
    return plan


def guard_hint(why: str, guard: GuardCommand) -> str:
    """A refusal that suggests `/rerun-test@SHA FILE` suggests the `/verify-guard` form."""
    return why.replace(f"`{specs.COMMAND}@", f"`{COMMAND}@").replace(
        f" {guard.file}`", f" {guard.file} {' '.join(guard.refs)}`"
    )
