"""The watch's tracking-issue markdown: names and commit subjects from runs and a repository
are escaped (no mention, link, HTML or forged marker), the suites at risk come first, and the
body fits one issue however many steps there are."""

from datetime import datetime, timedelta, timezone

from ci_budget.history.watch import Commit, RunRef, Step, SuiteWatch, Trend, Watch
from ci_budget.render import history_md

T0 = datetime(2026, 6, 10, 12, tzinfo=timezone.utc)
EVIL = "test/registered/x`|<!-- ci-budget:watch -->@org/team [a](http://e).py"


def _ref(i: int) -> RunRef:
    return RunRef(str(1000 + i), T0 + timedelta(hours=12 * i), f"{i:040x}")


def _watch(steps: int = 1) -> Watch:
    walls = [(_ref(i), 1500.0 + 60 * i) for i in range(8)]
    risky = SuiteWatch("base-b-test-1-gpu-large", 1800.0, walls, level=1920.0,
                       trend=Trend(120.0, 60.0, 200.0), crossing=(0.0, 0.0))  # fmt: skip
    calm = SuiteWatch("base-c-test-4-gpu-h100", 3600.0, walls[:2], level=1530.0)
    bad = Commit("a" * 40, "<script>@someone fixes #12\nsecond line", (EVIL,))
    found = [
        Step(
            EVIL,
            "base-b-test-1-gpu-large",
            200.0,
            320.0 + i,
            _ref(3),
            _ref(4),
            [bad],
            range_size=7,
            reasons={bad.sha: ["file"]},
        )  # fmt: skip
        for i in range(steps)
    ]
    return Watch([risky, calm], found, [], [])


def test_markdown_escapes_names_and_subjects():
    body = history_md.watch_markdown(_watch())
    assert body.count("<!-- ci-budget:watch -->") == 1 and body.startswith("<!-- ci-budget")
    assert "<script>" not in body and "@someone" not in body and "#12" not in body
    assert "\nsecond line" not in body  # a subject stays on its line
    for line in body.splitlines():  # the name is code wherever it is shown: no mention, no link
        if "@org/team" in line:
            assert "`` test/registered/x`\\|<\u200b!-- ci-budget:watch -->@org" in line
    assert "already over" in body  # level 1,920 s against an 1,800 s timeout


def test_suites_at_risk_come_first_and_the_body_fits_one_issue():
    body = history_md.watch_markdown(_watch(steps=3000), limit=20_000)
    assert len(body) <= 20_000
    head = body[: body.index("```mermaid")]
    assert "`base-b-test-1-gpu-large`" in head and "`base-c-test-4-gpu-h100`" not in head
    assert "step(s) not shown" in body  # the steps were cut, the risk table kept


def test_text_and_json_say_no_trend_honestly():
    w = _watch()
    w.suites[1].trend = Trend(1.0, -5.0, 7.0)
    assert "no rising trend" in history_md.watch_text(w) and "(no trend)" in history_md.watch_text(
        w
    )
    data = history_md.watch_json(w)
    assert (
        data["suites"][1]["trend"]["rising"] is False and data["suites"][1]["crossing_days"] is None
    )
    assert data["steps"][0]["commits"][0]["why"] == ["file"]
