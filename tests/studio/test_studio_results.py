"""The Results view (pytest-qt, offscreen) on a real run folder: the numbers it shows are the ones
`python main.py report` prints, human labels change the failure taxonomy, exports hold the same numbers,
and broken folders are explained rather than raised."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication

from core.analysis.report import METRICS, TASK_CATEGORIES, format_value
from core.analysis.taxonomy import TAXONOMY, human_category
from core.episode.metrics import AWARE, LOST, UNAWARE
from core.labels.model import AnnotatorLabels, LabelDocument
from core.labels.store import save_labels
from core.paths import PROJECT_ROOT
from studio.results_view import ResultsView

RUNS = (  # two agents, so the tables have a row per agent; random:1 on every granularity
    ("random:1", "all", "q08_site_navigation"),
    ("random:2", "goal", "q08_site_navigation,q04_clock_interaction"),
)


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("results") / "run"
    for agent, granularity, tasks in RUNS:
        done = subprocess.run([sys.executable, "main.py", "run", "--tasks", tasks, "--granularity", granularity,
                               "--agent", agent, "--budget", "8", "--workers", "2", "--out", str(out)],
                              cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    return out


@pytest.fixture
def copied(run_folder, tmp_path) -> Path:
    """A private copy, for tests that change the folder."""
    return Path(shutil.copytree(run_folder, tmp_path / "run"))


@pytest.fixture
def view(qtbot):
    widget = ResultsView()
    qtbot.addWidget(widget)
    widget.resize(1400, 860)
    widget.show()
    yield widget
    widget.close()


def open_and_wait(view, qtbot, folder) -> None:
    with qtbot.waitSignal(view.sig_loaded, timeout=30_000):
        view.open_folder(folder)


def report_command(folder: Path) -> tuple[dict, str]:
    """`python main.py report FOLDER --json`: its numbers, and the markdown it wrote to report.md."""
    done = subprocess.run([sys.executable, "main.py", "report", str(folder), "--json"], cwd=PROJECT_ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), (folder / "report.md").read_text()


def markdown_rows(markdown: str, section: str) -> list[list[str]]:
    body = markdown.split(f"## {section}", 1)[1].split("\n", 1)[1].split("\n## ", 1)[0]
    table = [line for line in body.splitlines() if line.startswith("|")][2:]  # past the header and |---|
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in table]


def test_the_view_shows_the_numbers_the_report_command_prints(run_folder, view, qtbot):
    open_and_wait(view, qtbot, run_folder)
    numbers, markdown = report_command(run_folder)
    assert json.loads(json.dumps(view.report)) == numbers
    assert {row[0] for row in view.success_table.texts()} == {"random:1", "random:2"}
    assert len(view.success_table.texts()) == 4  # random:1 on three granularities, random:2 on one

    shown = [[row[0], row[1], *(cell.split(" (n=")[0] for cell in row[2:-1]), row[-1]]
             for row in view.success_table.texts()]
    printed = markdown_rows(markdown, "Success rate by granularity and category")
    assert shown == [[*row[:-2], row[-1]] for row in printed]  # the episodes column is the overall cell's n
    counts = [[int(c.split("(n=")[1].rstrip(")")) if "(n=" in c else 0 for c in row[2:-1]]
              for row in view.success_table.texts()]
    assert counts == [[*(r[f"n_{c}"] for c in TASK_CATEGORIES), r["episodes"]] for r in numbers["sr"]]
    assert [int(row[-2]) for row in printed] == [r["episodes"] for r in numbers["sr"]]

    assert view.metrics_table.texts() == markdown_rows(markdown, "Movement metrics")
    taxonomy = markdown_rows(markdown, "Failure taxonomy")
    assert [row[0] for row in taxonomy] == ["random:1", "random:2"]
    bars = view.taxonomy.counts()
    assert [[agent, *(str(sum(bars[(agent, c)])) for c in TAXONOMY)] for agent, *_ in taxonomy] == \
        [row[:len(TAXONOMY) + 1] for row in taxonomy]
    assert all(human == 0 for human, _ in bars.values())  # nobody has labelled anything yet
    assert not view.taxonomy.legend_covers_a_count()
    view.resize(1000, 600)  # smaller: the legend keeps the same pixels, so it takes more of the range
    qtbot.waitUntil(lambda: view.taxonomy.height() < 400, timeout=5_000)
    assert not view.taxonomy.legend_covers_a_count()
    assert "0 from human labels, 5 automatic suggestion(s)" in view.summary.text()

    assert view.scatter.plotted() == [(p["agent"], p["im_rate"], p["success_rate"]) for p in numbers["points"]]
    overall = numbers["correlation"]["overall"]
    expected = f"r = {format_value(overall['r'])}" if overall["r"] is not None else "r undefined"
    assert expected in view.scatter.title_text() and "one per agent, task and granularity" in view.scatter.title_text()
    assert f"{len(numbers['points'])} points" in view.scatter.title_text()
    assert f"n = {overall['n']}" in view.correlation_caption.text()
    assert "Pearson r between IM rate and success rate, one point per agent, task and granularity" in markdown
    assert view.banner.level == "" and view.csv_button.isEnabled() and view.png_button.isEnabled()


def test_a_confirmed_human_label_replaces_the_automatic_suggestion(copied, view, qtbot):
    open_and_wait(view, qtbot, copied)
    row = next(json.loads(line) for line in (copied / "results.jsonl").read_text().splitlines()
               if json.loads(line)["agent_spec"] == "random:2")
    agent, suggested = "random:2", row["failure_category_suggestion"]
    before = view.taxonomy.counts()
    episode = copied / row["episode"]
    save_labels(episode, AnnotatorLabels("bob", failure_category=UNAWARE))  # unconfirmed: must not count
    open_and_wait(view, qtbot, copied)
    assert view.taxonomy.counts() == before

    save_labels(episode, AnnotatorLabels("alice", failure_category=AWARE, category_confirmed=True))
    with qtbot.waitSignal(view.sig_loaded, timeout=30_000):
        view.reload_button.click()
    after = view.taxonomy.counts()
    assert after[(agent, AWARE)] == (1, 0)
    human, automatic = before[(agent, suggested)]
    assert after[(agent, suggested)] == (human, automatic - 1)
    assert "1 from human labels" in view.taxonomy.tooltip_at(*_bar_centre(view, agent, AWARE))
    assert "1 from human labels, 4 automatic suggestion(s), 0 disputed" in view.summary.text()
    assert "solid: human label" in view.taxonomy.legend_texts()
    numbers, markdown = report_command(copied)
    assert json.loads(json.dumps(view.report))["failures"] == numbers["failures"]
    assert [agent, *(str(sum(after[(agent, c)])) for c in TAXONOMY), "1", "1"] in \
        markdown_rows(markdown, "Failure taxonomy")


def _bar_centre(view, agent: str, category: str) -> tuple[float, float]:
    agents = list(view.report["failure_sources"])
    width = 0.8 / len(agents)
    return TAXONOMY.index(category) - 0.4 + width * (agents.index(agent) + 0.5), 0.5


def test_disagreeing_annotators_count_as_the_most_common_category():
    def confirmed(name: str, category: str) -> AnnotatorLabels:
        return AnnotatorLabels(name, failure_category=category, category_confirmed=True)

    two_to_one = LabelDocument().with_annotator(confirmed("a", AWARE)).with_annotator(
        confirmed("b", LOST)).with_annotator(confirmed("c", AWARE))
    assert (human_category(two_to_one).category, human_category(two_to_one).disputed) == (AWARE, True)
    tie = LabelDocument().with_annotator(confirmed("a", LOST)).with_annotator(confirmed("b", UNAWARE))
    assert human_category(tie).category == UNAWARE  # a tie goes to the earlier category in TAXONOMY
    assert human_category(LabelDocument().with_annotator(AnnotatorLabels("a", failure_category=LOST))) is None


def test_r_is_shown_when_the_settings_vary(copied, view, qtbot):
    rows = [json.loads(line) for line in (copied / "results.jsonl").read_text().splitlines()]
    rows[0].update(success=True, success_step=5)  # made up so that success and IM rate vary across settings
    rows[1]["metrics"]["im_rate"] = 0.5
    (copied / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    open_and_wait(view, qtbot, copied)
    numbers, markdown = report_command(copied)
    overall = numbers["correlation"]["overall"]
    assert overall["r"] is not None and overall["n"] == len(numbers["points"])
    assert f"r = {format_value(overall['r'])}" in view.scatter.title_text()
    assert f"r = {format_value(overall['r'])} (n = {overall['n']}, " in view.correlation_caption.text()
    assert f"r = {overall['r']:.2f} (n = {overall['n']}, " in markdown
    for granularity, values in numbers["correlation"]["by_granularity"].items():
        assert granularity in view.correlation_caption.text() and f"n = {values['n']}" in markdown
    assert any("100.0% (n=1)" in cell for row in view.success_table.texts() for cell in row)
    assert view.metrics_table.texts() == markdown_rows(markdown, "Movement metrics")
    assert any("50.0%" in cell or "25.0%" in cell for row in view.metrics_table.texts() for cell in row)


def test_csv_and_png_exports(run_folder, view, qtbot, tmp_path):
    open_and_wait(view, qtbot, run_folder)
    report = view.report
    with qtbot.waitSignal(view.sig_status) as status:
        assert view.export_csv(tmp_path / "results.csv")
    assert str(tmp_path / "results.csv") in status.args[0]  # the status bar says where it went
    rows = list(csv.DictReader((tmp_path / "results.csv").read_text().splitlines()))
    value = {(r["table"], r["agent"], r["granularity"], r["category"], r["measure"]): r["value"] for r in rows}

    def same(cell: str, expected: float | None) -> bool:
        return cell == "" if expected is None else float(cell) == expected

    for row in report["sr"]:
        for category in TASK_CATEGORIES:
            key = ("success_rate", row["agent"], row["granularity"], category)
            assert same(value[(*key, "success_rate")], row[category])
            assert int(value[(*key, "episodes")]) == row[f"n_{category}"]
    for row in report["metrics"]:
        for name in METRICS:
            assert same(value[("metrics", row["agent"], row["granularity"], "all", name)], row[name])
    for row in report["failures"]:
        for category in TAXONOMY:
            key = ("failure_taxonomy", row["agent"], "all", category)
            assert int(value[(*key, "from_human")]) + int(value[(*key, "automatic")]) == row[category]
    overall = report["correlation"]["overall"]
    for measure in ("r", "n", "p_value", "ci95_low", "ci95_high"):
        assert same(value[("im_vs_sr", "all", "all", "unit:task", f"pearson_{measure}")], overall[measure])

    assert view.export_png(tmp_path / "results.png")
    image = QImage(str(tmp_path / "results.png"))
    assert not image.isNull() and image.width() >= view.width() and (tmp_path / "results.png").stat().st_size > 10_000

    assert not view.export_csv(tmp_path / "missing" / "results.csv")
    assert view.banner.level == "error" and "Could not write" in view.banner.text()


def test_a_folder_without_results_is_explained_and_clears_the_old_numbers(run_folder, view, qtbot, tmp_path):
    open_and_wait(view, qtbot, run_folder)
    view.open_folder(tmp_path)
    qtbot.waitUntil(lambda: view.banner.level == "error", timeout=30_000)
    assert "has no results.jsonl" in view.banner.text() and "python main.py run --out" in view.banner.text()
    assert view.success_table.rowCount() == 0 and view.metrics_table.rowCount() == 0
    assert view.taxonomy.counts() == {} and view.scatter.plotted() == []
    assert not view.csv_button.isEnabled() and not view.export_csv(tmp_path / "x.csv")
    view.open_folder(tmp_path / "nowhere")
    qtbot.waitUntil(lambda: "is not a folder" in view.banner.text(), timeout=30_000)


def test_corrupt_lines_are_skipped_with_a_warning(copied, view, qtbot):
    lines = (copied / "results.jsonl").read_text().splitlines()
    (copied / "results.jsonl").write_text("\n".join([lines[0], '{"task_id": "q08_si', *lines[1:], "[1, 2]"]) + "\n")
    open_and_wait(view, qtbot, copied)
    assert view.banner.level == "warning"
    assert "results.jsonl:2 is not a complete result line" in view.banner.text()
    assert f"results.jsonl:{len(lines) + 2} is not a complete result line" in view.banner.text()
    assert "Rerun the same `python main.py run` command" in view.banner.text()
    assert view.report["episodes"] == len(lines)
    assert len(view.success_table.texts()) == 4


def test_a_results_file_with_no_complete_episode_says_what_to_do(view, qtbot, tmp_path):
    (tmp_path / "results.jsonl").write_text('{"task_id": "q0\n')
    open_and_wait(view, qtbot, tmp_path)
    assert view.banner.level == "warning" and "has no finished episodes yet" in view.banner.text()
    assert "Reload" in view.banner.text() and view.success_table.rowCount() == 0


def test_a_missing_episode_file_keeps_the_automatic_category_and_warns(copied, view, qtbot):
    first = json.loads((copied / "results.jsonl").read_text().splitlines()[0])
    (copied / first["episode"]).unlink()
    open_and_wait(view, qtbot, copied)
    assert view.banner.level == "warning" and "is missing" in view.banner.text()
    assert sum(sum(counts) for counts in view.taxonomy.counts().values()) == view.report["episodes"]


def test_follow_refreshes_the_view_as_a_run_adds_results(run_folder, view, qtbot, tmp_path):
    """A folder still filling: rows appended to results.jsonl show up without pressing Reload, and an unchanged
    folder is only looked at, never rebuilt."""
    live = tmp_path / "live"
    shutil.copytree(run_folder / "episodes", live / "episodes")
    rows = (run_folder / "results.jsonl").read_text().splitlines(keepends=True)
    (live / "results.jsonl").write_text(rows[0])
    open_and_wait(view, qtbot, live)
    assert view.report["episodes"] == 1
    view.follow_timer.setInterval(100)
    view.follow_box.setChecked(True)
    shown = view.report
    with qtbot.waitSignal(view.loader.sig_unchanged, timeout=10_000):
        pass  # the timer looked, found nothing new
    assert view.report is shown and "following; no new results" in view.folder_label.text()

    with (live / "results.jsonl").open("a") as handle:
        handle.write(rows[1])
    qtbot.waitUntil(lambda: view.report["episodes"] == 2, timeout=15_000)
    with (live / "results.jsonl").open("a") as handle:
        handle.writelines(rows[2:])
    qtbot.waitUntil(lambda: view.report["episodes"] == len(rows), timeout=15_000)
    assert f"{len(rows)} episodes" in view.summary.text()
    assert "following; updated at" in view.folder_label.text()

    view.follow_box.setChecked(False)
    assert not view.follow_timer.isActive()


@pytest.mark.parametrize("size", [(760, 350), (480, 320), (1200, 700)])
def test_the_taxonomy_legend_never_covers_a_bar_count(qtbot, size):
    from core.analysis.taxonomy import AUTO, HUMAN
    from widgets.taxonomy_chart import TaxonomyChart

    chart = TaxonomyChart()
    qtbot.addWidget(chart)
    chart.resize(*size)
    chart.show()
    qtbot.waitExposed(chart)
    # the screenshot's case: every episode Lost, the tall bars under the legend's corner
    chart.set_sources({agent: {LOST: {HUMAN: 0, AUTO: 9}, "Execution Failure": {HUMAN: 1, AUTO: 6}}
                       for agent in ("random:1", "random:2", "model:a")})
    QApplication.processEvents()  # the layout settles: the legend and the counts have their scene places
    assert not chart.legend_covers_a_count()
    chart.resize(size[0], size[1] - 60)  # and after a resize
    QApplication.processEvents()
    assert chart.height() == size[1] - 60 and not chart.legend_covers_a_count()
