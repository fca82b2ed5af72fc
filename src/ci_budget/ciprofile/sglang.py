"""The sglang profile: zero-config settings read from an sglang checkout's own CI files.

- `scripts/ci/runner_configs.yml`: runner configs and their `runs_on` labels;
- `.github/workflows/pr-test.yml`: the per-commit suites it dispatches (its jobs that call a
  reusable stage workflow, `self_name`), each suite's `run_timeout_minutes` and runner config;
  the stage workflows' own `runs-on` for suites without a runner config (CPU);
- `scripts/ci/utils/compute_partitions.py`: the backends dispatched, pinned shard counts, the
  reusable stage workflows, whether CPU suites are throttled, the test discovery globs;
- `python/sglang/test/ci/ci_register.py`: the register functions and the arguments they take;
- `test/run_suite.py`, `ci_utils.py` and the workflows: per-file timeouts and retry patterns
  (`sglang_jobs`);
- every workflow: which triggers the repository already answers, a comment command
  (`/rerun-test` on `issue_comment`) and a gating label (`run-ci` checked among a pull request's
  labels). ci-budget's defaults step aside from them, so a comment or a label never starts the
  same GPU run twice (docs/adopting.md). Workflows that use ci-budget are not counted.

Pure: the caller reads the files (`texts`: path -> text, None when missing). The result is a
settings table that the user's `ci-budget.toml` is laid over, so every value can be overridden.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import yaml

from ci_budget.ciprofile import sglang_py
from ci_budget.ciprofile.sglang_jobs import (
    consumed,
    file_timeouts,
    inline_jobs,
    retry_patterns,
    run_suite_default,
    stage_jobs,
)
from ci_budget.ciprofile.sglang_py import before_stage, dispatch_rules, register_rules
from ci_budget.config import DEFAULT_GPU_ARCH, DEFAULT_RUNNER_CONFIGS

RUNNER_CONFIGS = "scripts/ci/runner_configs.yml"
PR_TEST = ".github/workflows/pr-test.yml"
PARTITIONS = "scripts/ci/utils/compute_partitions.py"
REGISTER = "python/sglang/test/ci/ci_register.py"
RUN_SUITE = "test/run_suite.py"
CI_UTILS = "python/sglang/test/ci/ci_utils.py"
WORKFLOWS = ".github/workflows/"
HANDLER = sglang_py.HANDLER
MARKERS = (RUNNER_CONFIGS, PARTITIONS, REGISTER)
GATING_LABEL = "run-ci"
TOO_OLD = "sglang's CI from before 2026-05-13 (registrations without stage= and runner_config=)"
# libyaml's safe loader when PyYAML was built with it: the same documents, ~10x faster.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SHAPE = re.compile(r"(\d+)-gpu-")
_REPO_PATH = re.compile(r"(?!/)(?!.*(?:^|/)\.\.(?:/|$))[\w.+/-]+")  # RunnerConfig.install


@dataclass
class Profile:
    settings: dict = field(default_factory=dict)  # kebab-case config keys
    warnings: list[str] = field(default_factory=list)
    dispatched: list[str] = field(default_factory=list)  # per-commit suites, pr-test.yml order
    # What this commit's CI scripts do that ci-budget does not model (conformance refuses).
    unsupported: list[str] = field(default_factory=list)
    refused: str | None = None  # a layout no command reads (TOO_OLD)


def stage_workflows(partitions_text: str | None) -> list[str]:
    """Repo paths of the reusable stage workflows compute_partitions.py recognises."""
    rules = dispatch_rules(partitions_text) if partitions_text else None
    return [u.removeprefix("./") for u in rules["stage_uses"]] if rules else []


def _yaml(text: str | None, path: str, what: str, warnings: list[str]) -> dict | None:
    if text is None:
        warnings.append(f"{path}: missing; {what} fall back to ci-budget's defaults")
        return None
    try:
        data = yaml.load(text, Loader=SAFE_LOADER)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" at line {where.line + 1}" if where is not None else ""
        warnings.append(f"{path}: does not parse{line}; {what} fall back to ci-budget's defaults")
        return None
    if not isinstance(data, dict):
        warnings.append(f"{path}: not a mapping; {what} fall back to ci-budget's defaults")
        return None
    return data


def _arch(label: str, name: str) -> str | None:
    tokens = {t.lower() for t in re.split(r"[-_ ]", label)}
    for gpu, arch in DEFAULT_GPU_ARCH.items():
        if gpu.lower().split()[-1] in tokens:
            return arch
    default = DEFAULT_RUNNER_CONFIGS.get(name)
    return default.arch if default else None


def sentinels(text: str | None) -> list[str]:
    """The `$name` labels in runner_configs.yml that a workflow substitutes at run time."""
    return sorted(set(re.findall(r"runs_on:\s*\$(\w+)", text or "")))


def sentinel_values(names: list[str], workflows: dict[str, str]) -> dict[str, str]:
    """`$name` -> the label a workflow step writes as `name=LABEL` to its outputs. Of several
    (sglang's `4-gpu-b200` and, for kernel changes, `4-gpu-b200-kernel`), the shortest: the
    everyday runner."""
    out = {}
    for name in names:
        found = {
            m.group(1)
            for text in workflows.values()
            if f"{name}=" in text  # a substring test first: the regex scan is the slow part
            for m in re.finditer(rf"\b{re.escape(name)}=([A-Za-z0-9_.-]+)", text)
        }
        if found:
            out[name] = min(found, key=lambda v: (len(v), v))
    return out


def runner_configs(data: dict, substitutes: dict[str, str] | None = None) -> dict:
    """runner-configs from runner_configs.yml. A `$name` label is substituted by the workflow
    at run time (sglang's `$b200_runner`): with the value found in the workflows, else the
    config's own name."""
    table = data.get("runner_configs")
    out = {}
    for name, entry in table.items() if isinstance(table, dict) else ():
        label = entry.get("runs_on") if isinstance(entry, dict) else None
        if not isinstance(label, str):
            continue
        if label.startswith("$"):
            label = str((substitutes or {}).get(label[1:], name))
        shape = _SHAPE.match(str(name))
        out[str(name)] = {
            "runs-on": [label],
            "gpus": int(shape.group(1)) if shape else 1,
            "arch": _arch(label, str(name)),
        }
        if isinstance(install := entry.get("install"), str) and _REPO_PATH.fullmatch(install):
            out[str(name)]["install"] = install
    return out


def suite_jobs(pr_test: dict, rules: dict, workflows: dict, outputs: dict[str, str]) -> dict:
    """suite -> {"timeout", "runner_config", "label"} for every suite pr-test.yml runs per
    commit, as this commit's compute_partitions.py dispatches them: its stage workflow calls,
    its inline suite jobs and pinned suites with a job of their own; in the layout of 2026-05-13
    (no stage workflows yet), every job reading its suite's partitions."""
    jobs = jobs if isinstance(jobs := pr_test.get("jobs"), dict) else {}
    uses = [u.removeprefix("./") for u in rules["stage_uses"]]
    out = stage_jobs(jobs, uses, workflows, outputs)
    inline = [*rules["inline"], *rules["pinned"]] if uses else consumed(jobs)
    for suite, entry in inline_jobs(jobs, [s for s in inline if s not in out], outputs).items():
        out[suite] = entry
    return out


def _labels(suites: dict, runners: dict) -> tuple[dict, list[str]]:
    """(suite -> runner config, suites whose runner label nothing in the checkout names).
    A runner config runs_on labels in runner_configs.yml decide; one it does not label takes
    the label its job gives (`with.runs_on`); a job with a label but no runner config runs on
    a config named by the label."""
    chosen, guessed = {}, []
    labelled = set(runners)  # by runner_configs.yml
    for suite, entry in suites.items():
        name, found = entry.get("runner_config"), entry.get("label")
        if name and (name in labelled or not found):
            chosen[suite] = name
            continue
        if not found:
            guessed.append(suite)
            continue
        shape = _SHAPE.match(found) or (_SHAPE.match(name) if name else None)
        config = {"runs-on": [found], "gpus": int(shape.group(1)) if shape else 0,
                  "arch": _arch(found, name or found)}  # fmt: skip
        if name and runners.setdefault(name, config)["runs-on"] == [found]:
            chosen[suite] = name
        else:
            runners.setdefault(found, config)
            chosen[suite] = found
    guessed += [suite for suite, name in chosen.items() if name not in runners]
    return chosen, guessed


def _settings(rules, regs, runners, suites) -> dict:
    settings: dict = {"planner": {"shard-rule": "sglang", "safety": 0.75}}
    if regs:
        settings["register-functions"] = regs["functions"]
        settings["registration-keywords"] = regs["keywords"]
    suite_runners, _ = _labels(suites, runners)
    if runners:
        settings["runner-configs"] = runners
    if rules:
        if rules["globs"]:
            settings["test-globs"] = rules["globs"]
        settings["suite-shards"] = dict(rules["pinned"])
        settings["max-parallel"] = "third-gpu" if rules["cpu_unthrottled"] else "third"
        settings["github"] = {"backends": rules["backends"]}
    settings["suite-timeouts"] = {s: e["timeout"] for s, e in suites.items() if "timeout" in e}
    settings["suite-runners"] = suite_runners
    return settings


def _file_timeouts(texts: dict[str, str | None], uses: list[str], pr_test: dict | None) -> dict:
    """`file-timeout` and `suite-file-timeouts` as the workflows among `texts` apply them:
    pr-test.yml first, then the stage workflows, then the rest by name."""
    settings: dict = {}
    if (default := run_suite_default(texts.get(RUN_SUITE))) is not None:
        settings["file-timeout"] = default
    stage_texts = {u: text for u in uses if (text := texts.get(u))}
    names = sorted(p for p in texts if p.startswith(WORKFLOWS) and texts[p] is not None)
    order = [p for p in (PR_TEST, *uses) if p in names] + [p for p in names if p != PR_TEST]
    ordered = {p: texts[p] or "" for p in order}
    parsed: dict[str, dict | None] = {PR_TEST: pr_test}
    for path, text in ordered.items():
        if path not in parsed and any(u.rsplit("/", 1)[-1] in text for u in uses):
            try:
                parsed[path] = yaml.load(text, Loader=SAFE_LOADER)
            except yaml.YAMLError:
                parsed[path] = None  # unreadable: its inline run_suite.py calls still count
    found = file_timeouts({p: d for p, d in parsed.items() if isinstance(d, dict)}, ordered,
                          stage_texts)  # fmt: skip
    if found:
        settings["suite-file-timeouts"] = found
    if (patterns := retry_patterns(texts.get(CI_UTILS))) is not None:
        settings["retry-patterns"] = patterns
    return settings


def _unsupported(texts: dict[str, str | None], rules: dict | None, warn: list[str]) -> list[str]:
    """What this commit's CI scripts do that ci-budget does not model, one line each."""
    modelled_not = [f"{PARTITIONS}: {what}" for what in (rules or {}).get("not_modelled", [])]
    warn += [f"{what}; ci-budget sizes those shards its own way" for what in modelled_not]
    return modelled_not


# --- the triggers the repository already answers ----------------------------------------------

OWN_COMMAND = "/ci-budget-run"  # ci-budget's command where the repository has /rerun-test
OWN_LABEL = "ci-budget-run"  # and its gating label where the repository gates on run-ci


def _ours(text: str) -> bool:
    return bool(re.search(r"uses:\s*[\w.-]+/ci-budget@|uses:\s*\./\s*$", text, re.MULTILINE))


def handles_command(texts: dict[str, str], command: str = "/rerun-test") -> list[str]:
    """The workflows that answer `command` in a comment."""
    return sorted(
        path
        for path, text in texts.items()
        if "issue_comment" in text and f"'{command}'" in text and not _ours(text)
    )


def gates_on_label(texts: dict[str, str], label: str = "run-ci") -> list[str]:
    """The workflows that check for `label` among a pull request's labels."""
    pattern = re.compile(rf"label[^\n]*['\"]{re.escape(label)}['\"]", re.IGNORECASE)
    return sorted(p for p, t in texts.items() if pattern.search(t) and not _ours(t))


def _triggers(profile: Profile, texts: dict[str, str | None], gated: bool) -> None:
    """ci-budget's own command and gating label, stepping aside from the triggers the
    repository's workflows answer: never the same run twice."""
    workflows = {p: t for p, t in texts.items() if p.startswith(WORKFLOWS) and t}
    github = profile.settings.setdefault("github", {})
    if gated:
        label = OWN_LABEL if gates_on_label(workflows) else GATING_LABEL
        github["gating-labels"] = {label: profile.dispatched}
    if handles_command(workflows):
        github["command"] = OWN_COMMAND
    if not github:
        del profile.settings["github"]


def build(texts: dict[str, str | None], substitutes: dict[str, str] | None = None) -> Profile:
    """The profile of a checkout whose CI files are `texts` (workflows under their repo paths);
    `substitutes` are the run-time values of `$name` runner labels (see `sentinel_values`).
    A checkout from before 2026-05-13 (its ci_register.py without keyword-only arguments, or no
    compute_partitions.py beside it) gets only `refused`."""
    register = texts.get(REGISTER)
    if register is not None and (before_stage(register) or texts.get(PARTITIONS) is None):
        return Profile(unsupported=[TOO_OLD], refused=TOO_OLD)
    profile = Profile()
    warn = profile.warnings
    regs = None
    if register is None:
        warn.append(f"{REGISTER}: missing; registration rules fall back to ci-budget's defaults")
    elif (regs := register_rules(register)) is None:
        warn.append(f"{REGISTER}: cannot read its rules; registration rules fall back to defaults")
    rules = None
    if (partitions := texts.get(PARTITIONS)) is None:
        warn.append(f"{PARTITIONS}: missing; dispatch rules fall back to ci-budget's defaults")
    elif (rules := dispatch_rules(partitions)) is None:
        warn.append(f"{PARTITIONS}: cannot read its rules; dispatch rules fall back to defaults")
    data = _yaml(texts.get(RUNNER_CONFIGS), RUNNER_CONFIGS, "runner labels", warn)
    runners = runner_configs(data, substitutes) if data else {}
    pr_test = _yaml(texts.get(PR_TEST), PR_TEST, "dispatched suites and timeouts", warn)
    suites: dict[str, dict] = {}
    if pr_test is not None and rules is not None:
        uses = [u.removeprefix("./") for u in rules["stage_uses"]]
        stages = {u: _yaml(texts.get(u), u, "stage runner labels", warn) for u in uses}
        suites = suite_jobs(pr_test, rules, stages, substitutes or {})
        if not suites:
            warn.append(f"{PR_TEST}: no job runs a per-commit suite; no suites dispatched")
    _, guessed = _labels(suites, dict(runners))
    for suite in guessed:
        warn.append(f"{PR_TEST}: suite {suite}: no runner label for it in the checkout's CI "
                    "files; ci-budget's built-in runner table guesses one")  # fmt: skip
    profile.settings = _settings(rules, regs, runners, suites)
    uses = [u.removeprefix("./") for u in rules["stage_uses"]] if rules else []
    profile.settings.update(_file_timeouts(texts, uses, pr_test))
    pinned = (rules or {}).get("pinned", {})
    profile.dispatched = list(suites) + [s for s in pinned if s not in suites]
    profile.unsupported = _unsupported(texts, rules, warn)
    _triggers(profile, texts, gated=pr_test is not None and rules is not None)
    sglang_py.apply(profile.settings, texts.get(HANDLER))
    return profile
