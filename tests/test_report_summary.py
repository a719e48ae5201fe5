"""The terminal report's two lengths and its closing summary, on hand-made evidence
(no run): shortened for a terminal, in full with -v or off a terminal."""
from doctor import report
from doctor.diagnose import Diagnosis
from doctor.evidence import Evidence

SCRIPT = ("import torch\nfrom torch.utils.data import DataLoader\n\n\ndef main():\n"
          "    loader = DataLoader(range(8), num_workers=2, collate_fn=lambda b: b)\n"
          "    for batch in loader:\n        pass\n")
PATCH = ("--- a/train.py\n+++ b/train.py\n@@ -3,6 +3,10 @@\n \n \n+def _collate(b):\n"
         "+    return b\n+\n+\n def main():\n-    loader = DataLoader(range(8), num_workers=2, "
         "collate_fn=lambda b: b)\n+    loader = DataLoader(range(8), num_workers=2, "
         "collate_fn=_collate)\n")
MEMORY = {"processes": [
    {"pid": 41, "role": "main", "t": [0.0, 4.0], "rss_gb": [0.1, 0.2]},
    {"pid": 42, "role": "worker 0", "loader": 1, "t": [1.0, 3.0], "rss_gb": [0.1, 0.1]}]}


def _run(tmp_path, monkeypatch, patch=PATCH):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "120")
    (tmp_path / "train.py").write_text(SCRIPT)
    ev = Evidence(source="run", target="train.py", outcome="crashed", exit_code=1,
                  memory=MEMORY)
    diag = Diagnosis("DLW102", "certain", [
        "pickle probe before the workers started: collate_fn: lambda defined at train.py:6",
        "pickling it fails with AttributeError: Can't pickle local object",
        "train.py:6: DLW102 lambda passed as collate_fn is not picklable under spawn"],
        path="train.py", line=6, patch=patch)
    return ev, [diag]


def _render(ev, diagnoses, full, **summary):
    summary = report.Summary(["train.py", "--epochs", "1"], full=full, **summary)
    return report.Terminal(colour=False).render(ev, diagnoses, full, summary).splitlines()


def test_on_a_terminal_the_report_is_short_and_ends_with_the_summary(tmp_path, monkeypatch):
    lines = _render(*_run(tmp_path, monkeypatch), full=False)
    assert len(lines) <= 25 and all(len(line) <= 120 for line in lines), lines
    assert lines[-4:] == [
        "summary",
        "  DLW102 lambda reaches a DataLoader worker at train.py:6 (root cause, certain)",
        "  fix: python -m doctor --apply train.py --epochs 1",
        "  full report: -v shows every line of evidence, the diff and the memory chart; "
        "--report FILE writes it as JSON"]
    text = "\n".join(lines)
    assert "+def _collate(b):" not in text
    assert "  patch (not yet run: use --verify): train.py +5 -1; -v shows it" in text
    assert "(and 2 more with -v)" in text and "Can't pickle local object" not in text
    assert "memory: 2 processes over 4.0 s, highest peak 205 MiB (main (pid 41)); " \
           "-v draws the chart" in text and "memory (RSS" not in text


def test_verbose_keeps_everything_and_says_the_report_is_above(tmp_path, monkeypatch):
    ev, diagnoses = _run(tmp_path, monkeypatch)
    lines = _render(ev, diagnoses, full=True, report_file="out.json")
    text = "\n".join(lines)
    # the full report as every other command prints it, then the summary
    assert text.startswith(report.Terminal(colour=False).render(ev, diagnoses).rstrip("\n"))
    for part in ("+def _collate(b):", "Can't pickle local object", "memory (RSS",
                 "worker 0 (pid 42), loader 1"):
        assert part in text
    assert lines[-1] == "  full report: out.json (JSON, written by --report)"


def test_without_a_patch_the_fix_is_words(tmp_path, monkeypatch):
    lines = _render(*_run(tmp_path, monkeypatch, patch=None), full=False)
    assert lines[-2] == ("  fix: Replace the lambda with a function defined at module level "
                         "(no patch is made for it)")


def test_after_apply_the_fix_line_says_where_the_writes_are(tmp_path, monkeypatch):
    lines = _render(*_run(tmp_path, monkeypatch), full=False, applied=True)
    assert lines[-2].startswith('  fix: --apply ran: the lines "doctor: wrote"')


def test_diff_stat_counts_per_file():
    assert report.diff_stat(PATCH) == "train.py +5 -1"
    assert report.diff_stat(PATCH + PATCH.replace("train.py", "data.py")) == \
        "train.py +5 -1, data.py +5 -1"


def test_each_patch_says_whether_a_re_run_proved_it(tmp_path, monkeypatch):
    """The default run re-runs nothing: its patch says so, in both lengths, and its JSON
    ``verified`` is null (SPEC.md); --verify sets it true or false, and the text says
    which."""
    ev, diagnoses = _run(tmp_path, monkeypatch)
    short = _render(ev, diagnoses, full=False)
    full = _render(ev, diagnoses, full=True)
    assert "  patch (not yet run: use --verify): train.py +5 -1; -v shows it" in short
    assert "  patch (not yet run: use --verify):" in full
    assert report.to_json(ev, diagnoses)["diagnoses"][0]["verified"] is None
    diagnoses[0].verified = True
    assert "  patch (verified by a re-run):" in _render(ev, diagnoses, full=True)
    assert report.to_json(ev, diagnoses)["diagnoses"][0]["verified"] is True
    diagnoses[0].verified = False
    assert ("  patch (not verified: the re-run of the patched copy still fails): "
            "train.py +5 -1; -v shows it") in _render(ev, diagnoses, full=False)
    assert report.to_json(ev, diagnoses)["diagnoses"][0]["verified"] is False
    # explain runs nothing: the script's run under the doctor proves its patch
    diagnoses[0].verified = None
    ev.source = "log"
    assert "  patch (not yet run: python -m doctor --verify SCRIPT re-runs it):" in \
        report.Terminal(colour=False).render(ev, diagnoses).splitlines()
    ev.source = "run"
    # no patch: nothing to run, nothing said about a re-run
    diagnoses[0].patch, diagnoses[0].verified = None, None
    text = "\n".join(_render(ev, diagnoses, full=True))
    assert "not yet run" not in text and "(no patch is made for it)" in text
