"""For a pickling error, ``doctor explain`` points at the definition of the object the
message names when the file is here (and may be read), else at the user's deepest frame."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCRIPT = '''\
import torch
from torch.utils.data import DataLoader, Dataset


def make_transform(scale):
    return lambda x: x * scale


class Squares(Dataset):
    def __init__(self, transform):
        self.transform = transform

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return self.transform(torch.tensor(float(i)))


def main():
    loader = DataLoader(Squares(make_transform(2)), num_workers=2)
    for x in loader:
        print(x)


if __name__ == "__main__":
    class Pairs(Dataset):
        pass
    main()
'''


def crash(script, message):
    return ("Traceback (most recent call last):\n"
            '  File "%s", line 29, in <module>\n    main()\n'
            '  File "%s", line 22, in main\n    for x in loader:\n'
            '  File "/usr/lib/python3.11/site-packages/torch/utils/data/dataloader.py", '
            "line 484, in __iter__\n    return self._get_iterator()\n"
            '  File "/usr/lib/python3.11/multiprocessing/reduction.py", line 60, in dump\n'
            "    ForkingPickler(file, protocol).dump(obj)\n%s\n" % (script, script, message))


def explain(log, cwd):
    result = subprocess.run([sys.executable, "-m", "doctor", "explain", "--json", str(log)],
                            cwd=str(cwd), capture_output=True, timeout=120,
                            env=dict(os.environ, PYTHONPATH=ROOT))
    assert result.returncode == 1, result.stderr
    return json.loads(result.stdout)["diagnoses"][0]


def test_local_lambda_resolved_to_its_line(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    log = tmp_path / "crash.log"
    log.write_text(crash(script, "AttributeError: Can't pickle local object "
                                 "'make_transform.<locals>.<lambda>'"))
    root = explain(log, tmp_path)
    assert (root["code"], root["path"], root["line"]) == ("DLW102", "train.py", 6)
    # the static checker follows make_transform's return to the lambda, so the evidence
    # names the line through its finding rather than through the message's qualname
    assert any(e.endswith("train.py:6: DLW102 lambda passed as part of the dataset is not "
                          "picklable under spawn; define a module-level function")
               for e in root["evidence"]), root["evidence"]


def test_class_of_the_main_guard_resolved_to_its_line(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    log = tmp_path / "crash.log"
    log.write_text("Traceback (most recent call last):\n"
                   '  File "<string>", line 1, in <module>\n'
                   '  File "/usr/lib/python3.11/multiprocessing/spawn.py", line 132, in _main\n'
                   "    self = reduction.pickle.load(from_parent)\n"
                   "AttributeError: Can't get attribute 'Pairs' on <module '__mp_main__' from "
                   "'%s'>\n" % script)
    root = explain(log, tmp_path)
    assert (root["code"], root["path"], root["line"]) == ("DLW104", "train.py", 27)


def test_file_outside_the_tree_is_not_read_the_frame_is_the_location(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    log = work / "crash.log"
    log.write_text(crash(script, "AttributeError: Can't pickle local object "
                                 "'make_transform.<locals>.<lambda>'"))
    root = explain(log, work)
    assert (root["path"], root["line"]) == (str(script), 22)  # the deepest user frame
    assert not any("defined at" in e for e in root["evidence"])
