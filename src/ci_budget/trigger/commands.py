"""Which command a PR comment gives, and who must be allowed for it. Pure.

sglang's handler reads the comment with its format characters (U+200E, U+200B, ...) removed and
leading blank lines skipped, and acts on its first line. Its commands, and ci-budget's own:

    /rerun-test[@SHA] SPEC...        RUN           the specs, at the bound commit
    /verify-guard[@SHA] FILE REF...  RUN           a guard with fixes reverted
    /rerun-group[@SHA] GROUP...      RUN           every registered file under test-root/GROUP
    /tag-run-ci-label [extra]        LABEL         the gating label (+ run-ci-extra), and its run
    /tag-and-rerun-ci [extra]        LABEL and/or  both of the above and below, each as allowed
                                     RERUN_FAILED
    /rerun-failed-ci                 RERUN_FAILED  failed and skipped workflow runs at the head

The first word must be the command itself (sglang matches a prefix, so `/rerun-tests` is its
`/rerun-test`; here it is no command).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ci_budget.registry import specs
from ci_budget.registry.specs import show
from ci_budget.trigger.authz import LABEL, RERUN_FAILED, RUN
from ci_budget.trigger.guard_command import COMMAND as GUARD
from ci_budget.trigger.guard_command import GuardCommand, parse_guard_command

TAG, TAG_AND_RERUN, RERUN_FAILED_CI, RERUN_GROUP = (
    "/tag-run-ci-label",
    "/tag-and-rerun-ci",
    "/rerun-failed-ci",
    "/rerun-group",
)
NEEDS = {
    specs.COMMAND: (RUN,),
    GUARD: (RUN,),
    RERUN_GROUP: (RUN,),
    TAG: (LABEL,),
    TAG_AND_RERUN: (LABEL, RERUN_FAILED),
    RERUN_FAILED_CI: (RERUN_FAILED,),
}
TRIGGERS = {TAG: "run-ci", TAG_AND_RERUN: "run-ci", RERUN_FAILED_CI: "rerun-failed-ci"}
GROUP_USAGE = f"{RERUN_GROUP}[@SHA] GROUP... (a directory under the test root, e.g. hicache)"
_GROUP = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*(?:/[A-Za-z0-9_][A-Za-z0-9_.-]*)*")
_HEX = re.compile(r"[0-9a-f]{1,40}")


@dataclass
class Request:
    name: str  # the command word, without @SHA
    command: specs.Command  # specs (groups for /rerun-group), problems, @SHA
    guard: GuardCommand | None = None
    extra: bool = False  # /tag-run-ci-label extra: run-ci-extra as well
    groups: list[str] = field(default_factory=list)

    @property
    def needs(self) -> tuple[str, ...]:
        return NEEDS[self.name]

    @property
    def trigger(self) -> str:
        return TRIGGERS.get(self.name, self.name[1:])


def first_line(body: str) -> str:
    """The line sglang's handler acts on: format characters dropped, blank lines skipped."""
    return specs.strip_format(body).strip().partition("\n")[0].rstrip("\r").strip()


def parse_request(
    body: str, max_specs: int, word: str = specs.COMMAND, foreign: tuple[str, ...] = ()
) -> Request | None:
    """The command in `body`, or None when the comment gives none. `word` is the run command as
    configured (github.command: `/ci-budget-run` beside a handler of `/rerun-test`); `foreign`
    are commands the repository's own workflows answer, never ci-budget."""
    words = first_line(body).split()
    name, at, sha = (words[0] if words else "").partition("@")
    args = words[1:]
    if name in foreign:
        return None
    if name in (TAG, TAG_AND_RERUN, RERUN_FAILED_CI):
        problems = [f"`{name}` takes no @SHA: it acts on the head"] if at else []
        extra = name != RERUN_FAILED_CI and "extra" in args
        return Request(name, specs.Command([], problems), extra=extra)
    if name == RERUN_GROUP:
        return _group_request(args, sha.lower() if at else None, max_specs)
    guard = parse_guard_command(body)
    if guard is not None:
        return Request(GUARD, guard.as_rerun(), guard=guard)
    command = specs.parse_command(body, max_specs, word)
    return None if command is None else Request(specs.COMMAND, command)


def _group_request(groups: list[str], sha: str | None, max_specs: int) -> Request:
    problems = []
    if sha is not None and not _HEX.fullmatch(sha):
        problems.append(f"{show('@' + sha)} is not a commit SHA (40 hex characters)")
    if not groups:
        problems.append(f"no test group given; usage: {GROUP_USAGE}")
    if len(groups) > max_specs:
        problems.append(f"{len(groups)} groups given; at most {max_specs}")
    for group in groups[:max_specs]:
        name = group.strip("/")
        if not _GROUP.fullmatch(name) or ".." in name.split("/"):
            problems.append(f"{show(group)}: not a test group (a directory under the test root)")
    command = specs.Command([], problems, sha)
    return Request(RERUN_GROUP, command, groups=[g.strip("/") for g in groups])


def group_specs(groups: list[str], registrations, test_root: str) -> tuple[list[str], list[str]]:
    """(the registered files under test-root/GROUP for every group, one refusal per group that
    has none). Files keep sglang's order: sorted, each once."""
    root = test_root.strip("/") + "/"
    files = sorted({r.file for r in registrations if r.file.startswith(root)})
    known = sorted({f[len(root) :].split("/")[0] for f in files if "/" in f[len(root) :]})
    found: list[str] = []
    refused = []
    for group in groups:
        under = [f for f in files if f.startswith(f"{root}{group}/")]
        if not under:
            refused.append(
                f"{show(group)}: no registered test file under {show(root + group)}; "
                f"groups: {', '.join(show(k) for k in known[:30]) or 'none'}"
            )
        found.extend(f for f in under if f not in found)
    return found, refused
