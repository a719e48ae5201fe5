"""The memory timeline in the report: the terminal chart (doctor.memory_chart) on
hand-made samples, ``--plot`` (doctor.memory_plot) on them and on real runs."""
import os
import re
import subprocess
import sys

import pytest

import needs
from doctor import cli, memory_chart, memory_plot
from doctor.evidence import Evidence
from doctor.report import Terminal
from doctor_run import TOKEN, doctor_command, end_leftovers, leftovers, run_doctor
from fixture_markers import find
from tiers import starts_torch

GOOD = str(find("clean_good_script.py"))
BLOCKS = set(memory_chart.BLOCKS)


def series(role, times, sizes, pid=1):
    return {"pid": pid, "role": role, "t": list(times), "rss_gb": list(sizes)}


#: a run as doctor.memory records it: main, two workers that start later, the tracker
RUN = {"unit": "GiB", "available_gb": 7.6, "processes": [
    series("main", [0.0, 1.0, 2.0, 10.0], [0.2, 0.6, 1.2, 1.1], 41),
    series("worker 0", [5.0, 6.0, 8.0], [0.1, 0.3, 0.6], 42),
    series("worker 1", [5.0, 6.0, 9.0], [0.1, 0.2, 0.3], 43),
    series("resource tracker", [0.5, 10.0], [0.012, 0.012], 40)],
    "batches": {"t": [6.0, 7.0], "count": [1, 2]}}


def spark_of(line, role):
    """The sparkline of a process line (between the role column and "peak")."""
    assert line.startswith("  " + role)
    return line[:line.rindex("  peak ")]


# -- the chart ----------------------------------------------------------------------

def test_chart_of_a_run():
    lines = memory_chart.chart_lines(RUN)
    assert lines[0] == "memory (RSS, 0 to 1.2 GiB over 10.0 s; 7.6 GiB available):"
    main, worker0, worker1 = lines[1:4]
    assert main.endswith("peak 1.20 GiB") and worker0.endswith("peak 614 MiB")
    assert worker1.endswith("peak 307 MiB")
    # one shared time axis, under the sparklines: worker 0 lived from 5 s to 8 s of 10
    axis = lines[4]
    assert axis.split() == ["0", "s", "10.0", "s"]
    first, columns = axis.index("0 s"), len(axis) - axis.index("0 s")
    assert main[first] != " " and main[2:first].strip() == "main (pid 41)"
    lived = [i for i in range(first, first + columns) if worker0[i] != " "]
    assert abs((lived[0] - first) / columns - 0.5) < 0.05
    assert abs((lived[-1] + 1 - first) / columns - 0.8) < 0.05
    assert len(lived) == lived[-1] - lived[0] + 1  # no gap while it lived
    # a common scale: main reaches the top block, worker 1 (a quarter of it) does not
    assert "█" in main and "█" not in worker1 and "█" not in worker0
    assert lines[5] == "  ... and 1 more process under 50 MiB: resource tracker (pid 40)"
    assert len(lines) == 6
    assert all(len(line) <= 80 for line in lines)
    assert not any("\x1b" in line for line in lines)


def test_ascii_fallback_when_the_encoding_cannot_hold_blocks():
    assert memory_chart.can_encode("utf-8") and not memory_chart.can_encode("ascii")
    assert not memory_chart.can_encode("no-such-codec") and not memory_chart.can_encode(None)
    for encoding in ("ascii", "latin-1", "cp437"):
        lines = memory_chart.chart_lines(RUN, encoding)
        text = "\n".join(lines)
        text.encode(encoding)  # every character writable
        assert not BLOCKS & set(text)
        assert "@" in lines[1] and set(spark_of(lines[1], "main (pid 41)")[15:]) <= set(
            memory_chart.ASCII_LEVELS)


def test_empty_and_missing_samples_give_no_chart():
    for memory in (None, {}, {"processes": []}, {"processes": [series("main", [], [])]},
                   {"processes": [series("main", ["x"], [None])]}):
        assert memory_chart.chart_lines(memory) == []
        assert not memory_chart.has_timeline(memory)


def test_a_single_point():
    memory = {"processes": [series("main", [0.0], [0.3])]}
    assert not memory_chart.has_timeline(memory)  # the report shows none
    lines = memory_chart.chart_lines(memory)
    assert lines[0] == "memory (RSS, 0 to 307 MiB over 0.0 s):"
    assert lines[1] == "  main (pid 1) █  peak 307 MiB" and len(lines) == 2
    # one point among longer series: one column, where it was sampled
    lines = memory_chart.chart_lines({"processes": [
        series("main", [0.0, 10.0], [1.0, 1.0]), series("worker 0", [10.0], [0.5], 2)]})
    worker = spark_of(lines[2], "worker 0 (pid 2)")[len("  worker 0 (pid 2) "):]
    assert worker.strip() and len(worker.strip()) == 1 and worker.rstrip() == worker


def test_32_workers_fit_in_8_lines_and_80_columns():
    workers = [series("worker %d" % i, [1.0 + i * 0.1, 5.0, 9.0],
                      [0.2, 0.5 + i * 0.01, 0.4], 100 + i) for i in range(32)]
    memory = {"available_gb": 1234.5, "processes": [
        series("main", [0.0, 10.0], [1.5, 2.5])] + workers}
    lines = memory_chart.chart_lines(memory)
    assert lines[0] == "memory (RSS, 0 to 2.5 GiB over 10.0 s; 1234.5 GiB available):"
    process_lines = [line for line in lines[1:] if "peak" in line and "more" not in line]
    assert len(process_lines) == memory_chart.MAX_PROCESSES - 1
    assert process_lines[0].startswith("  main ")
    # the highest peaks keep their lines, in worker order
    assert [line.split()[1] for line in process_lines[1:]] == [str(i) for i in range(26, 32)]
    assert lines[-1] == "  ... and 26 more workers, peak at most 768 MiB"
    assert all(len(line) <= 80 for line in lines)


def test_long_roles_huge_sizes_and_control_characters_stay_in_80_columns():
    memory = {"available_gb": 9999.0, "processes": [
        series("a process whose name goes on and on " * 4, [0, 3000], [1500.5, 2500.25]),
        series("\x1b[31mred\x1b[0m", [0, 3000], [900.0, 2000.0]),
        series("x" * 300, [0, 1], [0.01, 0.01]),
        series("y" * 300, [0, 1], [0.01, 0.02])]}
    for encoding in ("utf-8", "ascii"):
        for width in (80, 60, 40):
            lines = memory_chart.chart_lines(memory, encoding, width)
            assert len(lines) >= 4
            assert all(len(line) <= width for line in lines), lines
            assert not any("\x1b" in line for line in lines)
    assert "3000 s" in memory_chart.chart_lines(memory)[0]


def test_only_small_processes_are_shown_not_folded():
    lines = memory_chart.chart_lines({"processes": [
        series("resource tracker", [0.0, 1.0], [0.01, 0.012])]})
    assert lines[1].startswith("  resource tracker ") and len(lines) == 3


def test_every_process_is_labelled_by_role_pid_and_loader():
    """Two loaders each have a worker 0: the pid and the loader tell them apart."""
    workers = [dict(series("worker 0", [1.0, 2.0], [0.3, 0.4], pid), loader=loader)
               for pid, loader in ((4321, 1), (4400, 2))]
    lines = memory_chart.chart_lines({"processes": [
        series("main", [0.0, 3.0], [1.0, 1.0], 41)] + workers + [
        series("resource tracker", [0.0, 3.0], [0.01, 0.01], 40)]})
    assert [line[2:32] for line in lines[1:4]] == [
        "main (pid 41)".ljust(30), "worker 0 (pid 4321), loader 1".ljust(30),
        "worker 0 (pid 4400), loader 2".ljust(30)]
    assert lines[-1].endswith("resource tracker (pid 40)")
    assert memory_chart.peak_line({"processes": workers}) == (
        "memory: 2 processes over 1.0 s, highest peak 410 MiB (worker 0 (pid 4321), loader 1)")


def test_mib_below_one_gib():
    assert memory_chart.size_text(0.2204) == "226 MiB"
    assert memory_chart.size_text(1.0) == "1.00 GiB"
    assert memory_chart.size_text(12.345, 1) == "12.3 GiB"


def _evidence(**fields):
    return Evidence(source=fields.pop("source", "run"), target="train.py",
                    outcome="passed", exit_code=0, **fields)


def test_terminal_report_ends_with_the_chart(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    text = Terminal(colour=True, encoding="utf-8").render(_evidence(memory=RUN), [])
    lines = text.splitlines()
    assert lines[:3] == ["\x1b[1mdoctor: train.py ran to the end under spawn (exit status 0)"
                         "\x1b[0m", "\x1b[32mNo DataLoader worker problem found.\x1b[0m", ""]
    assert lines[3:] == memory_chart.chart_lines(RUN)  # no colour in the chart
    ascii_text = Terminal(colour=False, encoding="ascii").render(_evidence(memory=RUN), [])
    ascii_text.encode("ascii")


def test_no_chart_without_a_timeline():
    for ev in (_evidence(), _evidence(memory={"processes": [series("main", [0.0], [0.3])]}),
               _evidence(source="log", memory=RUN), _evidence(source="check", memory=RUN)):
        text = Terminal(colour=False, encoding="utf-8").render(ev, [])
        assert "memory (RSS" not in text


# -- the plot ---------------------------------------------------------------------

def png_size(data):
    """(width, height) from a PNG's IHDR chunk."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


EXPECTED_SIZE = tuple(round(side * memory_plot.DPI) for side in memory_plot.SIZE_IN)


def test_figure_legend_names_the_processes():
    pytest.importorskip("matplotlib")
    fig = memory_plot.figure(dict(RUN, available_gb=2.0), "train.py")
    ax = fig.axes[0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["main", "worker 0", "worker 1", "resource tracker",
                      "available (2.0 GiB)"]
    assert ax.get_title() == "memory of train.py"
    assert ax.get_ylabel() == "RSS (GiB)" and "seconds" in ax.get_xlabel()
    # available memory far off the scale: no line that squashes the rest, the title says it
    far = dict(RUN, available_gb=500.0)
    fig = memory_plot.figure(far, "train.py")
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert not [label for label in legend if "available" in label]
    assert "500.0 GiB" in fig.axes[0].get_title()


def test_write_png_and_svg(tmp_path):
    pytest.importorskip("matplotlib")
    memory_plot.write(RUN, str(tmp_path / "m.png"), "train.py")
    assert png_size((tmp_path / "m.png").read_bytes()) == EXPECTED_SIZE
    memory_plot.write(RUN, str(tmp_path / "m.SVG"), "train.py")
    svg = (tmp_path / "m.SVG").read_text(encoding="utf-8")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    for role in ("main", "worker 0", "worker 1"):
        assert ">%s<" % role in svg
    assert ">memory of train.py (host memory available: 7.6 GiB)<" in svg
    memory_plot.write({}, str(tmp_path / "empty.png"))  # no samples: still a picture
    assert png_size((tmp_path / "empty.png").read_bytes()) == EXPECTED_SIZE
    with pytest.raises(OSError):
        memory_plot.write(RUN, str(tmp_path / "missing" / "m.png"))


def test_a_file_that_cannot_be_written_is_one_line(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    target = tmp_path / "missing" / "m.png"
    cli._plot(str(target), _evidence(memory=RUN), "train.py")
    out, err = capsys.readouterr()
    assert out == ""
    assert err == "doctor: not written: %s: No such file or directory\n" % target


@pytest.mark.parametrize("name", ["out.pdf", "out", "out.png.txt", ".png"])
def test_bad_plot_suffix_is_a_usage_error(tmp_path, name):
    status, _report, out, err, left = doctor_command(["--plot", name, GOOD], tmp_path, limit=300)
    assert status == 2 and out == "" and not left
    assert err.count("\n") == 1 and "--plot" in err and ".png or .svg" in err, err
    assert not os.path.exists(tmp_path / name)


def test_plot_without_matplotlib_stops_before_the_run(tmp_path):
    fake = tmp_path / "fake"
    (fake / "matplotlib").mkdir(parents=True)
    (fake / "matplotlib" / "__init__.py").write_text("raise ImportError('not here')\n")
    path = os.pathsep.join(filter(None, [str(fake), os.environ.get("PYTHONPATH")]))
    (tmp_path / "train.py").write_text("open('ran', 'w').close()\n")
    status, _report, out, err, left = doctor_command(
        ["--plot", "out.png", "train.py"], tmp_path, limit=300, env={"PYTHONPATH": path})
    assert (status, out) == (2, "") and not left
    assert err == "doctor: --plot needs matplotlib: pip install 'flake8-dlworker[plot]'\n"
    assert not (tmp_path / "ran").exists() and not (tmp_path / "out.png").exists()


# -- real runs ------------------------------------------------------------------------

@needs.torch
def test_run_with_json_and_png(tmp_path):
    pytest.importorskip("matplotlib")
    status, report, _out, err, left = run_doctor(
        ["--json", "--plot", "out.png", GOOD], tmp_path)
    assert status == 0 and not left, err
    assert png_size((tmp_path / "out.png").read_bytes()) == EXPECTED_SIZE
    roles = [p["role"] for p in report["memory"]["processes"]]
    assert roles[:3] == ["main", "worker 0", "worker 1"]
    # the figure --plot draws from those samples names every process in its legend
    fig = memory_plot.figure(report["memory"], "clean_good_script.py")
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert legend[:len(roles)] == roles


@starts_torch
def _run_on_a_tty(args, cwd, env_extra):
    """Run the doctor with stdout and stderr on a pseudo-terminal; all it wrote."""
    import pty

    token = "memory-tty-%d" % os.getpid()
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    env.update(env_extra, **{TOKEN: token})
    main, child = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "doctor", *args], cwd=cwd, env=env,
                            stdin=subprocess.DEVNULL, stdout=child, stderr=child)
    os.close(child)
    chunks = []
    try:
        while True:
            try:
                data = os.read(main, 65536)
            except OSError:  # the terminal closed: every writer is gone
                break
            if not data:
                break
            chunks.append(data)
        proc.wait(timeout=600)
    finally:
        os.close(main)
        left = leftovers(token)
        end_leftovers(token)
    return proc.returncode, b"".join(chunks).decode("utf-8", "replace"), left


@needs.torch
@needs.posix
def test_terminal_chart_on_a_tty_with_no_color_and_svg(tmp_path):
    pytest.importorskip("matplotlib")
    status, text, left = _run_on_a_tty(["-v", "--plot", "out.svg", GOOD], tmp_path,
                                       {"NO_COLOR": "1", "PYTHONIOENCODING": "utf-8"})
    assert status == 0 and not left, text
    assert "No DataLoader worker problem found." in text
    chart = text[text.index("memory (RSS, 0 to "):].replace("\r\n", "\n").splitlines()
    chart = chart[:chart.index("")] if "" in chart else chart  # the chart's own lines
    assert "\x1b" not in "\n".join(chart)
    roles = [re.match(r"  (main|worker \d+) ", line).group(1) for line in chart[1:4]]
    assert roles == ["main", "worker 0", "worker 1"], chart
    for line in chart[1:4]:
        assert BLOCKS & set(line) and " peak " in line
    assert [line for line in chart if len(line) > 80] == [], chart
    svg = (tmp_path / "out.svg").read_text(encoding="utf-8")
    for role in ("main", "worker 0", "worker 1"):
        assert ">%s<" % role in svg
    assert ">memory of clean_good_script.py" in svg


def test_workers_are_numbered_by_their_loader_even_when_they_died_unannounced():
    from doctor.supervisor import _worker_places

    events = [{"event": "loader", "key": "a"}, {"event": "loader", "key": "b"},
              {"event": "workers", "key": "b", "pids": [7, 8]},
              {"event": "worker_start", "pid": 8, "worker_id": 1},
              {"event": "workers", "key": "a", "pids": [9]}]
    assert _worker_places(events) == ({7: 0, 8: 1, 9: 0}, {7: 2, 8: 2, 9: 1})
