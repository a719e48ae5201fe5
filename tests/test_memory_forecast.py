"""The memory timeline, what each worker receives, and the forecast: a real worker whose
cache grows until a real SIGKILL, a run stopped by --max-batches before it, and the
fit itself on timelines made by hand."""
import re

import pytest

import needs
from doctor.diagnose import MEMORY_UNEXPLAINED
from doctor.forecast import forecast
from doctor_run import run_doctor
from fixture_markers import folder

PATIENCE_S = 600


def _timeline(worker_rss, batches, available=8.0):
    """A ``memory`` dict: one worker sampled once per second, ``batches[i]`` delivered
    by second i."""
    seconds = list(range(len(worker_rss)))
    return {"unit": "GiB", "available_gb": available,
            "processes": [{"pid": 1, "role": "main", "t": seconds,
                           "rss_gb": [0.3] * len(seconds)},
                          {"pid": 2, "role": "worker 3", "t": seconds, "rss_gb": worker_rss}],
            "batches": {"t": seconds, "count": batches}}


def test_a_steady_rise_gives_the_rate_per_batch_and_the_batches_left():
    rss = [0.5 + 0.01 * i for i in range(20)]          # 10 MiB more every second
    found = forecast(_timeline(rss, [10 * i for i in range(20)], available=7.6))
    (growth,) = found.growing
    assert growth.role == "worker 3"
    assert growth.per_batch_gb == pytest.approx(0.001)   # 1 MiB per batch
    assert found.batches_left == 7600 and found.batches_seen == 190
    assert found.text()[-1] == ("forecast: at this rate worker 3 reaches the 7.60 GiB "
                                "available after about 7,600 more batches (190 seen so far)")


@pytest.mark.parametrize("rss", [
    [0.5] * 20,                                          # flat
    [0.5 + 0.001 * i for i in range(20)],               # rises 19 MiB: allocator noise
    [0.5 + (0.2 if i % 2 else 0) for i in range(20)],   # jumps up and down: not steady
    [0.9 - 0.02 * i for i in range(20)],                # falls
    [0.5, 0.6, 0.7],                                     # too few points
])
def test_no_forecast_without_a_steady_rise(rss):
    assert forecast(_timeline(rss, [10 * i for i in range(len(rss))])) is None


def test_samples_after_until_are_not_used():
    rss = [0.5] * 10 + [0.5 + 0.1 * i for i in range(10)]  # the rise starts at 10 s
    memory = _timeline(rss, [10 * i for i in range(20)])
    assert forecast(memory, until=9) is None
    assert forecast(memory) is not None


@needs.torch
def test_a_growing_worker_killed_by_sigkill_is_named_with_its_rate_and_forecast():
    status, report, _out, err, left = run_doctor(
        ["--json", "dlw201_cache_grows.py"], folder("dlw201_cache_grows.py"), limit=PATIENCE_S)
    assert not left, left
    assert status == 1 and report["outcome"] == "crashed", err[-3000:]
    first = report["diagnoses"][0]
    assert (first["code"], first["line"]) == ("DLW201", 33), report["diagnoses"]
    evidence = "\n".join(first["evidence"])
    # 8 MiB per sample in worker 0, one sample of each batch of 2 is worker 0's: about
    # 8 MiB per batch the loader delivers (the samples are taken as batches arrive)
    rate = re.search(r"worker 0 grew from [\d.]+ MiB to [\d.]+ MiB RSS, ([\d.]+) MiB per "
                     r"batch, steadily", evidence)
    assert rate and 6 < float(rate.group(1)) < 10, evidence
    assert "forecast: at this rate worker 0 reaches the " in evidence, evidence
    # the script kills worker 0 at about half a GiB, with gigabytes to spare: no worker
    # count avoids that, and the evidence says so (no patch lowers num_workers)
    assert MEMORY_UNEXPLAINED + ": the run had 2 worker(s)" in evidence, evidence
    assert first["patch"] is None
    assert report["forecast"]["growing"][0]["role"] == "worker 0"
    memory = report["memory"]
    roles = [p["role"] for p in memory["processes"]]
    assert roles[:3] == ["main", "worker 0", "worker 1"], roles
    grown = memory["processes"][1]["rss_gb"]
    assert max(grown) - grown[0] > 0.3  # the timeline shows the growth


@needs.torch
def test_a_run_stopped_by_max_batches_still_forecasts_and_says_what_workers_receive():
    status, report, _out, err, left = run_doctor(
        ["--json", "--max-batches", "40", "dlw201_cache_grows.py"], folder("dlw201_cache_grows.py"),
        limit=PATIENCE_S)
    assert not left, left
    assert report["outcome"] == "stopped" and report["diagnoses"] == [], err[-3000:]
    assert report["forecast"]["growing"][0]["role"] == "worker 0"
    assert report["forecast"]["batches_left"] > 40
    payload = {p["role"]: p for p in report["payload"]}
    assert set(payload) == {"dataset", "collate_fn"}
    assert payload["dataset"]["bytes"] > 0 and payload["dataset"]["workers"] == 2


@needs.torch
def test_a_dataset_copied_into_every_worker_is_named_not_a_worker_that_grew():
    status, report, _out, err, left = run_doctor(
        ["--json", "dlw209_dataset_copies.py"], folder("dlw209_dataset_copies.py"),
        limit=PATIENCE_S)
    assert not left, left
    assert status == 1 and report["outcome"] == "crashed", err[-3000:]
    first = report["diagnoses"][0]
    assert (first["code"], first["line"], first["confidence"]) == (
        "DLW209", 36, "certain"), report["diagnoses"]
    evidence = "\n".join(first["evidence"])
    # the share is left out when the last sample came before the copy arrived
    assert re.search(r"worker \d \(pid \d+\) was killed by signal 9 \(SIGKILL\) at [\d.]+ "
                     r"GiB(, \d+% of it its copy of the dataset)?; its memory did not grow",
                     evidence), evidence
    assert ("each of 4 workers receives its own pickled copy of the dataset: 256 MiB"
            in evidence), evidence
    assert "DLW201" not in [d["code"] for d in report["diagnoses"]]
    (dataset,) = [p for p in report["payload"] if p["role"] == "dataset"]
    assert 256 * 2 ** 20 < dataset["bytes"] < 260 * 2 ** 20 and dataset["workers"] == 4


@needs.torch
@needs.posix
def test_forked_workers_that_grow_as_they_read_python_objects_are_named_with_the_lists():
    status, report, _out, err, left = run_doctor(
        ["--json", "--start-method", "fork", "dlw210_fork_copy_on_access.py"],
        folder("dlw210_fork_copy_on_access.py"), limit=PATIENCE_S)
    assert not left, left
    assert status == 1 and report["outcome"] == "passed", err[-3000:]
    first = report["diagnoses"][0]
    assert (first["code"], first["line"]) == ("DLW210", 22), report["diagnoses"]
    evidence = "\n".join(first["evidence"])
    assert re.search(r"worker \d grew from [\d.]+ MiB to [\d.]+ MiB private memory, [\d.]+ \w+ per "
                     r"batch, steadily", evidence), evidence
    assert "dataset.names (a list of 5,000,000)" in evidence, evidence
