"""`/rerun-test` decided as sglang's own handler decides it, on real comments.

tests/fixtures/sglang_rerun/fixture.json was recorded by tests/conformance/harness/rerun.py on the
sglang checkout it names: each comment with what sglang's `slash_command_handler.py`
dispatched (called directly, GitHub faked), and the part of that checkout ci-budget decides
with (its registrations, multimodal test files and zero-config settings). Each comment must be
decided the same, or differ exactly as recorded and as docs/commands.md's table lists.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ci_budget.config import Config
from ci_budget.models import Registration
from tests.conformance.harness import rerun as harness

REPO = Path(__file__).resolve().parents[2]
FIXTURE = json.loads((REPO / "tests/fixtures/sglang_rerun/fixture.json").read_text())
CASES = FIXTURE["cases"]

REGS = [Registration.model_validate(r) for r in FIXTURE["registrations"]]
CONFIG = Config.model_validate(FIXTURE["config"], by_alias=True)
FILES = FIXTURE["rerun_files"]


def readme_differences() -> set[str]:
    text = (REPO / "docs/commands.md").read_text()
    section = text.split("### Where `/rerun-test` differs from sglang's handler", 1)[1]
    section = section.split("\n#", 1)[0]
    return set(re.findall(r"^\| `([a-z-]+)` \|", section, re.MULTILINE))


def decide(body: str):
    return harness.ours_decision(body, REGS, CONFIG, "/checkout", FILES)


@pytest.mark.parametrize("case", CASES, ids=[c["body"][:60] for c in CASES])
def test_each_comment_is_decided_as_sglangs_handler_decides_it(case):
    ours, plan = decide(case["body"])
    if "difference" not in case:
        assert ours == case["sglang"]
        return
    assert case["difference"] in readme_differences()
    want = dict(case["ci_budget"])
    assert plan.reason == want.pop("reason")
    assert ours == want != case["sglang"]


def test_the_fixture_covers_what_sglang_accepts():
    assert FIXTURE["sglang_commit"] == "3c69a4c744525be0146629fc5933e3ddab609fb2"
    same = [c for c in CASES if "difference" not in c]
    assert len(same) >= 20
    bodies = "\n".join(c["body"] for c in same)
    for needle in ("::TestSRTEndpoint.test_simple_decode", "registered/core/", "*", "[ab]",
                   "multimodal_gen/test/", "\u200e", "\n\n/rerun-test", "test_mooncake_ep_small",
                   "test_server_args_backend"):  # fmt: skip
        assert needle in bodies
    # The glob: 43 files on 5 runner labels, the files sglang cannot run refused.
    glob = next(c for c in same if c["body"] == "/rerun-test `test_*backend*.py`")
    runs = glob["sglang"]["runs"]
    assert (sum(map(len, runs.values())), len(runs), len(glob["sglang"]["refused"])) == (43, 5, 11)
    assert runs["ubuntu-latest"] and runs["1-gpu-h100"][0].startswith("python/sglang/multimodal")


def test_beside_sglangs_handler_its_own_command_decides_the_same():
    """Zero config on sglang, ci-budget answers `/ci-budget-run` and leaves `/rerun-test` to the
    handler (docs/adopting.md): the same specs are decided the same under its own word."""
    github = CONFIG.github.model_copy(update={"command": "/ci-budget-run"})
    config = CONFIG.model_copy(update={"github": github})
    same = [c for c in CASES if "difference" not in c]
    for case in same:
        body = case["body"].replace("/rerun-test", "/ci-budget-run", 1)
        ours, _ = harness.ours_decision(body, REGS, config, "/checkout", FILES)
        assert ours == case["sglang"], body
    ours, plan = harness.ours_decision(
        "/rerun-test test_srt_endpoint.py", REGS, config, "/c", FILES
    )
    assert not plan.should_run and plan.reply is None and ours["runs"] == {}


def test_every_listed_difference_is_in_the_readme_and_the_reply_says_why():
    listed = readme_differences()
    assert {c["difference"] for c in CASES if "difference" in c} <= listed
    for body, why in [
        ("/rerun-tests test_srt_endpoint.py", "is not a command; write `/rerun-test SPEC...`"),
        ("/rerun-test@deadbee test_srt_endpoint.py", "a command bound to a commit takes its full"),
        ("/rerun-test registered/core/../core/test_srt_endpoint.py", "'..' is not allowed"),
    ]:
        _, plan = decide(body)
        assert not plan.should_run and why in plan.reply


def test_a_partly_refused_comment_runs_the_rest_and_lists_the_refused():
    ours, plan = decide("/rerun-test test_srt_endpoint.py test_nope.py")
    assert ours["runs"] == {"1-gpu-5090": ["test/registered/core/test_srt_endpoint.py"]}
    assert ours["refused"] == ["test_nope.py"]
    assert plan.should_run and "- not run: `test_nope.py`: not a registered test file" in plan.reply
