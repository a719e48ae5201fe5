"""The pickle probe names the path to a culprit: every attribute name and dict key on
that path goes through one rule (flake8_dlworker.untrusted.is_secret), so that no
environment value of the run and no key-shaped string ever reaches a report.  Real
objects, real pickling (in this process, without torch), and real doctor runs."""
import functools
import json
import threading

import pytest

from doctor_run import run_doctor
from flake8_dlworker.testing import attribute_label, find_unpicklable, random_generators
from flake8_dlworker.untrusted import is_secret

HF = "hf_Zq8LmN3pR7tV1xY5wB2cD9kJ4"
PASSWORD_KEY = "admin:Hunter2-Passw0rd"
RUN_KEY = "wandb-live-4f9a2c7e1b3d8a6f"
PLAIN_VALUE = "quietcorgi"  # an ordinary word: only the environment says it is secret


class Holder:
    pass


def _culprit_of(obj, root="dataset"):
    culprit = find_unpicklable(obj, root)
    assert culprit is not None
    return culprit


def _hidden(culprit, *secrets):
    shown = "%s %s %s" % (culprit, culprit.path, culprit.what)
    for secret in secrets:
        assert secret not in shown, shown


def test_an_attribute_named_after_a_token_is_masked():
    data = Holder()
    setattr(data, HF, threading.Lock())
    culprit = _culprit_of(data)
    _hidden(culprit, HF, "Zq8LmN3")
    assert culprit.path == "dataset.__dict__[<str key #0>]", culprit.path


@pytest.mark.parametrize("key", [PASSWORD_KEY, RUN_KEY, "https://bob:s3cr3T!x@db/x"])
def test_dict_keys_with_dashes_and_colons_are_masked(key):
    data = Holder()
    data.conns = {"plain": 1, key: threading.Lock()}
    culprit = _culprit_of(data)
    _hidden(culprit, key, "Hunter2", "4f9a2c7e", "s3cr3T")
    assert culprit.path == "dataset.conns[<str key #1>]", culprit.path


def test_a_key_whose_value_came_from_the_environment_is_masked(monkeypatch):
    monkeypatch.setenv("SHARD", PLAIN_VALUE)
    data = Holder()
    data.runs = {PLAIN_VALUE: threading.Lock(), "x": 1}
    data.by_prefix = {}
    culprit = _culprit_of(data)
    _hidden(culprit, PLAIN_VALUE)
    assert culprit.path == "dataset.runs[<str key #0>]"
    # a key that holds the value, and an attribute that is the value
    data.runs = {"%s/part-1" % PLAIN_VALUE: threading.Lock()}
    _hidden(_culprit_of(data), PLAIN_VALUE)
    other = Holder()
    setattr(other, PLAIN_VALUE, threading.Lock())
    _hidden(_culprit_of(other), PLAIN_VALUE)


def test_partial_keywords_and_generator_paths_use_the_same_rule(monkeypatch):
    monkeypatch.setenv("SHARD", PLAIN_VALUE)
    bound = functools.partial(print, **{PLAIN_VALUE: threading.Lock()})
    _hidden(_culprit_of(bound, "collate_fn"), PLAIN_VALUE)
    import random

    data = Holder()
    data.rngs = {RUN_KEY: random.Random(0)}
    setattr(data, HF, random.Random(1))
    paths = [path for path, _rng in random_generators(data, "dataset")]
    assert len(paths) == 2 and not any(RUN_KEY in p or HF in p for p in paths), paths


def test_ordinary_names_stay_readable(monkeypatch):
    monkeypatch.setenv("SHARD", PLAIN_VALUE)
    data = Holder()
    data.transform = Holder()
    data.transform.cache = {"split:validation": {"train/img_0001.jpg": threading.Lock()}}
    culprit = _culprit_of(data)
    assert culprit.path == ("dataset.transform.cache['split:validation']"
                            "['train/img_0001.jpg']"), culprit.path
    assert (culprit.owner, culprit.code) == ("Holder", "DLW108")


def test_a_dataset_change_names_no_secret_and_shows_no_secret_value():
    """The attributes of a persistent loader's dataset that the main process changed
    (doctor.agent.hooks, event dataset_changed) are named and shown by the same rule."""
    from doctor.agent.attributes import attributes

    data = Holder()
    data.epoch, data.token = 0, "plain"
    setattr(data, HF, 1)
    sent = attributes(data)
    data.epoch, data.token = 1, HF
    setattr(data, HF, 2)
    now = attributes(data)
    assert now["epoch"][2] == "1" and sent["epoch"][1] != now["epoch"][1]
    assert now["token"][2] is None  # the value looks like a key: compared, never shown
    assert HF not in attribute_label(HF, now[HF][0])


@pytest.mark.parametrize("text", [
    HF, "sk-proj-Ab12Cd34Ef56Gh78Ij90", "ghp_0123456789abcdefABCDEF0123456789abcd",
    "AKIAIOSFODNN7EXAMPLE", PASSWORD_KEY, RUN_KEY, "9f86d081884c7d659a2feaa0c55ad015",
    "ZqLmNpRtVxYwBcDkQaHsJe"])
def test_key_shapes_are_secrets(text):
    assert is_secret(text, {})


@pytest.mark.parametrize("text", [
    "transform", "RandomResizedCropAndFlip", "TransformerEncoderLayer", "split:validation",
    "epoch:10", "hf_dataset_name", "train/img_0001.jpg", "sha256", "layer_3"])
def test_words_are_not(text):
    assert not is_secret(text, {})


def test_environment_values_count_unless_short_or_an_existing_path(tmp_path):
    environ = {"A": PLAIN_VALUE, "B": "1", "HOME": str(tmp_path)}
    assert is_secret("runs_%s" % PLAIN_VALUE, environ)
    assert not is_secret("1", environ)
    assert not is_secret(str(tmp_path / "data.csv"), environ)


#: a dataset whose unpicklable part hides behind a secret name; SHARD comes from the
#: environment of the run, under a plain name
SECRET_SCRIPT = """\
import os
import threading

import torch
from torch.utils.data import DataLoader, Dataset


class Data(Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return torch.tensor(i)


def main():
    data = Data()
    kind = %r
    if kind == "attribute":
        setattr(data, %r, threading.Lock())
    elif kind == "key":
        data.conns = {"replica": 1, %r: threading.Lock()}
    else:
        data.runs = {os.environ["SHARD"]: threading.Lock()}
    for batch in DataLoader(data, num_workers=2):
        print(batch)


if __name__ == "__main__":
    main()
"""


@pytest.mark.parametrize("kind", ["attribute", "key", "environment"])
def test_no_secret_name_reaches_a_run_report(tmp_path, kind):
    (tmp_path / "train.py").write_text(SECRET_SCRIPT % (kind, HF, PASSWORD_KEY))
    env = {"SHARD": PLAIN_VALUE}
    status, report, out, err, left = run_doctor(["--json", "train.py"], str(tmp_path), env=env)
    assert not left and status == 1, err[-3000:]
    assert report["diagnoses"][0]["code"] == "DLW108", out
    assert "<str key #" in json.dumps(report)
    _, _, text, err, left = run_doctor(["train.py"], str(tmp_path), env=env)
    assert not left and "DLW108" in text, err[-3000:]
    for secret in (HF, "Zq8LmN3", PASSWORD_KEY, "Hunter2", PLAIN_VALUE):
        assert secret not in out and secret not in text, secret
