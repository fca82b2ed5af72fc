"""Read a checkout's own CI files and turn them into default settings (see ciprofile/)."""

from __future__ import annotations

from pathlib import Path

from ci_budget.ciprofile import sglang
from ci_budget.ciprofile.sglang_jobs import output_names


def _read(root: Path, rel: str) -> str | None:
    try:
        return (root / rel).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def detect(root: Path) -> sglang.Profile | None:
    """The sglang profile when `root` has any of sglang's CI files, else None (no profile:
    ci-budget's own defaults, as for any other repository)."""
    if not any((root / rel).is_file() for rel in sglang.MARKERS):
        return None
    texts = {
        rel: _read(root, rel)
        for rel in (
            *sglang.MARKERS,
            sglang.PR_TEST,
            sglang.RUN_SUITE,
            sglang.CI_UTILS,
            sglang.HANDLER,
        )
    }
    for rel in sglang.stage_workflows(texts[sglang.PARTITIONS]):
        texts[rel] = _read(root, rel)
    workflows = {}
    for path in sorted((root / ".github" / "workflows").glob("*.y*ml")):
        rel = path.relative_to(root).as_posix()
        workflows[path.name] = texts[rel] = texts.get(rel) or _read(root, rel) or ""
    # `$name` labels of runner_configs.yml, and `needs.*.outputs.NAME` labels of pr-test.yml
    names = sglang.sentinels(texts[sglang.RUNNER_CONFIGS]) + output_names([texts[sglang.PR_TEST]])
    return sglang.build(texts, sglang.sentinel_values(names, workflows))
