"""The log parser on its own: what it keeps from the text real logs contain."""
import io

import pytest

from doctor.explain import BadLog, explain, iter_lines
from doctor.pipeline import diagnosed
from doctor.logparse import MAX_KEPT, LogParser, clean, clean_parts, parse_text

WORKER_TB = '''Traceback (most recent call last):
  File "/home/u/train.py", line 9, in <module>
    for batch in loader:
  File "/home/u/.venv/lib/python3.11/site-packages/torch/_utils.py", line 694, in reraise
    raise exception
ValueError: Caught ValueError in DataLoader worker process 2.
Original Traceback (most recent call last):
  File "/v/lib/python3.9/site-packages/torch/utils/data/_utils/worker.py", line 308, in _worker_loop
    data = fetcher.fetch(index)
  File "/home/u/data.py", line 12, in __getitem__
    raise ValueError("bad sample %d" % i)
ValueError: bad sample 3
'''

SIGNAL_CHAIN = ('''Traceback (most recent call last):
  File "/x/site-packages/torch/utils/data/dataloader.py", line 1291, in _try_get_data
    data = self._data_queue.get(timeout=timeout)
RuntimeError: DataLoader worker (pid 9321) is killed by signal: Killed.{SPACE}

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/home/u/train.py", line 9, in <module>
    for batch in loader:
RuntimeError: DataLoader worker (pid(s) 9321) exited unexpectedly
''').replace("{SPACE}", " ")  # torch's signal message ends with a space


def test_worker_exception_keeps_the_original_and_its_worker():
    parser = parse_text(WORKER_TB)
    [exc] = parser.exceptions
    assert exc.process == "main"
    assert exc.original.process == "worker 2"
    assert exc.original.last_line() == "ValueError: bad sample 3"
    assert exc.original.frames[-1].path == "/home/u/data.py"


def test_chain_is_one_exception_with_its_context():
    parser = parse_text(SIGNAL_CHAIN)
    [last] = parser.exceptions
    assert last.last_line().endswith("(pid(s) 9321) exited unexpectedly")
    first = last.context.last_line()
    assert first.startswith("RuntimeError: DataLoader worker (pid 9321) is killed")
    assert parser.hints["worker_exits"] == [{"pid": 9321, "signal": "Killed"}]


def test_during_handling_chain():
    text = SIGNAL_CHAIN.replace(
        "The above exception was the direct cause of the following exception:",
        "During handling of the above exception, another exception occurred:")
    [last] = parse_text(text).exceptions
    assert last.context is not None


@pytest.mark.parametrize("transform", [
    lambda t: t.replace("\n", "\r\n"),                                        # CRLF
    lambda t: "".join("[rank0]: " + line + "\n" for line in t.split("\n")),        # torchrun
    lambda t: "".join("2024-05-02 14:01:07,331 - " + line + "\n" for line in t.split("\n")),
    lambda t: "".join("2026-01-14T09:12:44.390Z " + line + "\n" for line in t.split("\n")),
    lambda t: "\x1b[31m" + t.replace("ValueError", "\x1b[1;35mValueError\x1b[0m"),
    lambda t: "\r  3%|#   | 3/100 [00:01<00:40]" + t,                          # glued to a bar
    lambda t: "".join("3: " + line + "\n" for line in t.split("\n")),              # srun --label
], ids=["crlf", "rank", "logging", "iso", "ansi", "tqdm", "srun"])
def test_noise_around_every_line_changes_nothing(transform):
    [exc] = parse_text(transform(WORKER_TB)).exceptions
    assert exc.original.process == "worker 2"
    assert exc.original.last_line() == "ValueError: bad sample 3"
    assert [f.line for f in exc.original.frames] == [308, 12]


def test_nul_after_worker_error_line():
    parser = parse_text("ERROR: Unexpected bus error encountered in worker. This might be "
                        "caused by insufficient shared memory (shm).\n\x00" + SIGNAL_CHAIN)
    assert parser.lines[0].startswith("ERROR: Unexpected bus error")
    assert len(parser.exceptions) == 1  # the NUL did not hide the traceback


def test_clean_keeps_what_stayed_on_screen():
    assert clean("\x1b[32mok\x1b[0m\r\n") == "ok"
    assert clean(" 10%|#  |\r 20%|## |\r") == " 20%|## |"
    assert clean_parts("  3%|#| 3/100Traceback (most recent call last):")[-1] == \
        "Traceback (most recent call last):"
    # an exception whose message is a traceback (torch 1.0) is not split
    assert clean_parts("ValueError: Traceback (most recent call last):") == \
        ["ValueError: Traceback (most recent call last):"]


def test_process_of_each_traceback():
    child = ('Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
             '  File "C:\\Py\\lib\\multiprocessing\\spawn.py", line 116, in spawn_main\n'
             '    exitcode = _main(fd, parent_sentinel)\nEOFError: Ran out of input\n')
    pin = ('Exception in thread Thread-3 (_pin_memory_loop):\nTraceback (most recent call last):\n'
           '  File "/x/torch/utils/data/_utils/pin_memory.py", line 28, in _pin_memory_loop\n'
           '    idx, data = r\nValueError: not enough values to unpack (expected 2, got 0)\n')
    proc = ('Process SpawnProcess-1:\nTraceback (most recent call last):\n'
            '  File "/usr/lib/python3.11/multiprocessing/process.py", line 314, in _bootstrap\n'
            '    self.run()\nOSError: boom\n')
    parser = parse_text(child + pin + proc)
    assert [e.process for e in parser.exceptions] == ["child", "pin memory thread", "child"]


def test_exception_ignored_at_exit_is_noise():
    text = ('Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f>\n'
            'Traceback (most recent call last):\n  File "/x/dataloader.py", line 1568, in __del__\n'
            '    if w.is_alive():\nAssertionError: can only test a child process\n')
    parser = parse_text(text)
    assert parser.exceptions == [] and parser.ignored == 1


def test_python314_notes_stay_with_their_exception():
    text = ('Traceback (most recent call last):\n  File "/a/t.py", line 3, in <module>\n    x\n'
            "_pickle.PicklingError: Can't pickle local object "
            "<function f.<locals>.<lambda> at 0x1>\n"
            "when serializing tuple item 6\nwhen serializing dict item '_args'\n"
            "when serializing multiprocessing.context.ForkServerProcess object\nnext line\n")
    [exc] = parse_text(text).exceptions
    assert exc.message.count("when serializing") == 3


def test_ipython_traceback_becomes_frames():
    text = ('---------------------------------------------------------------------------\n'
            'KeyError                                  Traceback (most recent call last)\n'
            'Cell In[4], line 2\n      1 it = iter(dl)\n----> 2 next(it)\n\n'
            'File ~/env/lib/python3.11/site-packages/torch/utils/data/dataloader.py:630, '
            'in _BaseDataLoaderIter.__next__(self)\n--> 630 data = self._next_data()\n\n'
            "KeyError: Caught KeyError in DataLoader worker process 0.\n"
            "Original Traceback (most recent call last):\n"
            '  File "/home/u/data.py", line 5, in __getitem__\n    return self.d[i]\n'
            "KeyError: 7\n")
    [exc] = parse_text(text).exceptions
    assert [(f.path, f.line) for f in exc.frames] == [
        ("<cell In[4]>", 2),
        ("~/env/lib/python3.11/site-packages/torch/utils/data/dataloader.py", 630)]
    assert exc.original.last_line() == "KeyError: 7"


def test_old_ipython_frames_take_the_arrow_line():
    text = ('---------------------------------------------------------------------------\n'
            'RuntimeError                              Traceback (most recent call last)\n'
            '<ipython-input-3-5e2a> in <module>\n----> 5 for b in loader:\n\n'
            '/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py in __next__(self)\n'
            '--> 345         data = self._next_data()\n\n'
            'RuntimeError: DataLoader worker (pid(s) 4242) exited unexpectedly\n')
    [exc] = parse_text(text).exceptions
    assert [f.line for f in exc.frames] == [5, 345]


def test_truncated_log_is_noticed():
    cut = WORKER_TB[:WORKER_TB.index('  File "/home/u/data.py"')]
    parser = parse_text(cut)
    assert parser.hints.get("truncated")
    [exc] = parser.exceptions
    assert exc.original.type == "ValueError"
    assert "log ends" in exc.original.message


def test_a_log_ending_after_the_message_is_not_truncated():
    assert not parse_text(WORKER_TB.rstrip("\n")).hints.get("truncated")


def test_host_hints():
    parser = parse_text('Python 3.10.12\ntorch==2.1.2+cu121\n' + WORKER_TB)
    assert parser.hints["python"] == "3.10.12"
    assert parser.hints["torch"] == "2.1.2+cu121"
    assert parser.hints["os"] == "Linux"
    win = parse_text('  File "C:\\Users\\a\\AppData\\Local\\Programs\\Python\\Python39'
                     '\\lib\\x.py", '
                     'line 1, in f\n')
    assert win.hints["os"] == "Windows"
    mac = parse_text("Traceback (most recent call last):\n"
                     '  File "/Users/jo/t.py", line 1, in <module>\n    x\nNameError: x\n')
    assert mac.hints["os"] == "macOS"


def test_warnings_kept_once_each():
    warning = ("/x/dataloader.py:617: UserWarning: This DataLoader will create 8 worker processes "
               "in total. Our suggested max number of worker in current system is 2, which is "
               "smaller than what this DataLoader is going to create.\n")
    tokenizers = ("huggingface/tokenizers: The current process just got forked, after parallelism "
                  "has already been used. Disabling parallelism to avoid deadlocks...\n")
    fork = ("/usr/lib/python3.12/multiprocessing/popen_fork.py:66: DeprecationWarning: This "
            "process (pid=307138) is multi-threaded, use of fork() may lead to deadlocks "
            "in the child.\n")
    parser = parse_text(warning * 3 + tokenizers + fork)
    kinds = [w.split(":", 1)[0] for w in parser.warnings]
    assert kinds == ["UserWarning", "TokenizersWarning", "DeprecationWarning"]


def test_memory_is_bounded_by_caps():
    parser = LogParser()
    line = "ERROR: Unexpected segmentation fault encountered in worker."
    for i in range(MAX_KEPT + 500):
        parser.feed(line)
    assert len(parser.lines) == MAX_KEPT
    assert parser.dropped == 500


def test_crashes_are_cut_and_symptoms_join_their_crash():
    parent = ('Traceback (most recent call last):\n'
              '  File "C:\\u\\t.py", line 3, in <module>\n    for b in dl:\n'
              '  File "C:\\py\\lib\\site-packages\\torch\\utils\\data\\dataloader.py", '
              'line 1, in i\n'
              '    w.start()\n'
              "AttributeError: Can't pickle local object 'main.<locals>.<lambda>'\n")
    child = ('Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
             '  File "C:\\py\\lib\\multiprocessing\\spawn.py", line 116, in spawn_main\n'
             '    x\nEOFError: Ran out of input\n')
    parser = parse_text(parent + child + SIGNAL_CHAIN)
    crashes = parser.crashes()
    assert len(crashes) == 2
    assert [e.type for e in crashes[0]["exceptions"]] == ["AttributeError", "EOFError"]
    assert crashes[1]["exceptions"][0].last_line().endswith("exited unexpectedly")
    assert all(c["dataloader"] for c in crashes)


def test_iter_lines_cuts_an_endless_line_and_keeps_the_rest():
    bar = ("\r 50%|#####     | 5/10" * 200000).encode()  # ~4 MB, no newline
    handle = io.BytesIO(bar + b"\nlast line\n")
    lines = list(iter_lines(handle, "x"))
    assert lines[-1] == "last line"
    assert max(len(line) for line in lines) <= 1024 * 1024


def test_utf16_log_with_bom(tmp_path):
    path = tmp_path / "ps.log"
    path.write_text(SIGNAL_CHAIN.replace("\n", "\r\n"), encoding="utf-16")
    ev = explain(str(path))
    assert ev.exceptions and ev.exceptions[0].last_line().endswith("exited unexpectedly")
    assert diagnosed(ev)[0].code == "DLW201"


def test_binary_is_refused(tmp_path):
    path = tmp_path / "x.log"
    path.write_bytes(bytes(range(256)) * 10)
    with pytest.raises(BadLog):
        explain(str(path))


# -- stacks, pytest reports, feeder threads -------------------------------------------------

PYSPY = '''Process 4821: python train.py
Python v3.11.4 (/usr/bin/python3.11)

Thread 4821 (idle): "MainThread"
    wait (threading.py:324)
        Arguments:
            self: <Condition at 0x7f0>
    __getitem__ (data/shards.py:88)
    0x7f1c2b3d4e5f (libc.so.6)
    _worker_loop (torch/utils/data/_utils/worker.py:309)
Thread 4830 (active+gil): "Thread-2 (_upload)"
    run (uploader.py:12)
after the dump
'''


def test_pyspy_dump_read_as_a_stack():
    parsed = parse_text(PYSPY)
    assert parsed.stacks == [
        'py-spy dump of process 4821 (python train.py)\n'
        'Thread 4821 (idle) "MainThread" (most recent call first):\n'
        '  File "threading.py", line 324 in wait\n'
        '  File "data/shards.py", line 88 in __getitem__\n'
        '  File "torch/utils/data/_utils/worker.py", line 309 in _worker_loop\n'
        'Thread 4830 (active+gil) "Thread-2 (_upload)" (most recent call first):\n'
        '  File "uploader.py", line 12 in run']


def test_faulthandler_watchdog_dump_read_as_a_stack():
    parsed = parse_text('Timeout (0:05:00)!\nThread 0x00007f3c1a4b2740 (most recent call '
                        'first):\n  File "/w/aug.py", line 41 in jitter\n\nnext line\n')
    assert parsed.stacks == ['Timeout (0:05:00)!\nThread 0x00007f3c1a4b2740 (most recent call '
                             'first):\n  File "/w/aug.py", line 41 in jitter']


PYTEST = '''=================================== FAILURES ===================================
_________________________________ test_epoch _________________________________
    def test_epoch():
>       for batch in loader:

tests/test_train.py:40:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _
/v/site-packages/torch/_utils.py:694: in reraise
    raise exception
E   KeyError: Caught KeyError in DataLoader worker process 0.
E   Original Traceback (most recent call last):
E     File "/v/site-packages/torch/utils/data/_utils/worker.py", line 308, in _worker_loop
E       data = fetcher.fetch(index)
E     File "/repo/src/data.py", line 71, in __getitem__
E       label = self.labels[name]
E   KeyError: 'img_0042'
=========================== short test summary info ============================
'''


def test_pytest_failure_read_as_a_traceback():
    parsed = parse_text(PYTEST)
    [exc] = parsed.exceptions
    assert exc.type == "KeyError"
    assert [(f.path, f.line) for f in exc.frames] == [
        ("tests/test_train.py", 40), ("/v/site-packages/torch/_utils.py", 694)]
    assert exc.original.last_line() == "KeyError: 'img_0042'"
    worker_frame = exc.original.frames[-1]
    assert (worker_frame.path, worker_frame.line) == ("/repo/src/data.py", 71)


def test_pytest_error_lines_pasted_alone():
    parsed = parse_text("\n".join(PYTEST.splitlines()[9:]))
    assert parsed.exceptions[0].original.last_line() == "KeyError: 'img_0042'"


def test_pytest_assertion_lines_aligned_with_the_source():
    parsed = parse_text("===== FAILURES =====\n_______ test_rows _______\n"
                        ">       assert a == b, 'rows'\n"
                        "E       AssertionError: rows\nE       assert 4 == 1\n\n"
                        "tests/test_rows.py:9: AssertionError\n")
    [exc] = parsed.exceptions
    assert (exc.last_line(), exc.frames[0].path, exc.frames[0].line) == (
        "AssertionError: rows", "tests/test_rows.py", 9)


def test_queue_feeder_thread_named_as_such():
    parsed = parse_text(
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.10/multiprocessing/queues.py", line 244, in _feed\n'
        "    obj = _ForkingPickler.dumps(obj)\n"
        '  File "/usr/lib/python3.10/multiprocessing/reduction.py", line 51, in dumps\n'
        "    cls(buf, protocol).dump(obj)\n"
        "TypeError: cannot pickle '_io.BufferedReader' object\n")
    assert parsed.exceptions[0].process == "queue feeder thread"


# -- distributed jobs: ranks read apart, the launcher's summary read -------------------

def _interleaved(*tracebacks):
    """Lines of several ranks' tracebacks as torchrun interleaves them (one each in turn)."""
    streams = [["[rank%d]: %s" % (rank, line) for line in text.rstrip("\n").split("\n")]
               for rank, text in tracebacks]
    lines = []
    while any(streams):
        for stream in streams:
            if stream:
                lines.append(stream.pop(0))
    return "\n".join(lines) + "\n"


def test_interleaved_ranks_are_read_apart():
    parser = parse_text(_interleaved((0, WORKER_TB), (1, SIGNAL_CHAIN)))
    by_rank = {exc.rank: exc for exc in parser.exceptions}
    assert sorted(by_rank) == [0, 1]
    assert by_rank[0].original.last_line() == "ValueError: bad sample 3"
    assert by_rank[1].context.last_line().startswith("RuntimeError: DataLoader worker (pid 9321)")
    assert parser.hints["distributed"] and parser.hints["ranks"] == [0, 1]
    crashes = parser.crashes()
    assert [c["rank"] for c in crashes] == [0, 1]
    assert all(len(c["exceptions"]) == 1 for c in crashes)


SUMMARY = '''torch.distributed.elastic.multiprocessing.errors.ChildFailedError:{SP}
============================================================
train.py FAILED
------------------------------------------------------------
Failures:
[1]:
  time      : 2026-12-07_12:06:47
  host      : node7
  rank      : 0 (local_rank: 0)
  exitcode  : -15 (pid: 20557)  (SIGTERM)
  error_file: <N/A>
  traceback : Signal 15 (SIGTERM) received by PID 20557
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-12-07_12:06:45
  host      : node7
  rank      : 1 (local_rank: 1)
  exitcode  : 1 (pid: 20559){SP}
  error_file: /tmp/torchelastic_x/attempt_0/1/error.json
  traceback : Traceback (most recent call last):
    File "/home/u/train.py", line 9, in <module>
      for batch in loader:
  RuntimeError: DataLoader worker (pid 9321) is killed by signal: Killed.{SP}
{SP}{SP}
============================================================
'''.replace("{SP}", " ")  # torch's own trailing spaces


def test_elastic_summary_entries_and_the_root_cause_traceback():
    parser = parse_text("Traceback (most recent call last):\n"
                        '  File "/usr/bin/torchrun", line 8, in <module>\n'
                        "    sys.exit(main())\n" + SUMMARY + "after the summary\n")
    entries = parser.hints["elastic"]
    assert [(e["rank"], e["root"], e["exitcode"], e["signal"], e["time"]) for e in entries] == [
        (0, False, -15, "SIGTERM", "2026-12-07_12:06:47"),
        (1, True, 1, None, "2026-12-07_12:06:45")]
    ranked = [e for e in parser.exceptions if e.rank == 1]
    assert [e.last_line() for e in ranked] == [
        "RuntimeError: DataLoader worker (pid 9321) is killed by signal: Killed."]
    assert ranked[0].frames[0].path == "/home/u/train.py"


def test_elastic_traceback_not_read_twice_when_the_rank_printed_it():
    rank1 = "".join("[rank1]: %s\n" % line for line in SIGNAL_CHAIN.rstrip("\n").split("\n"))
    parser = parse_text(rank1 + "Traceback (most recent call last):\n" + SUMMARY)
    assert len([e for e in parser.exceptions if e.rank == 1]) == 1


def test_spawn_names_the_rank_of_the_traceback_that_follows():
    text = ("Traceback (most recent call last):\n"
            '  File "/x/torch/multiprocessing/spawn.py", line 211, in join\n'
            "    raise ProcessRaisedException(msg, error_index, failed_process.pid)\n"
            "torch.multiprocessing.spawn.ProcessRaisedException: \n\n"
            "-- Process 1 terminated with the following error:\n" + SIGNAL_CHAIN + "\n"
            "later: a line of the parent\n" + WORKER_TB)
    parser = parse_text(text)
    assert [e.rank for e in parser.exceptions] == [None, 1, None]
    assert parser.exceptions[1].context is not None
    assert parser.hints["distributed"]


def test_nccl_lines_name_their_rank():
    parser = parse_text(
        "[E ProcessGroupNCCL.cpp:737] [Rank 3] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=469508, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1802212 "
        "milliseconds before timing out.\n")
    assert parser._line_rank == [3]
    assert parser.crashes()[0]["rank"] == 3


def test_times_of_the_log_prefixes_are_kept_comparable():
    from doctor.logparse import when

    assert when("2026-12-07 12:03:57,331") == "12-07 12:03:57.331"
    assert when("2026-12-07T12:03:57.331Z") == "12-07 12:03:57.331"
    assert when("2026-12-07_12:03:57") == "12-07 12:03:57"
    assert when("E1207 12:03:57.620000 18760 torch/x.py:1] failed") == "12-07 12:03:57.620000"
    assert when("12:03:57 something") is None
    text = "".join("2026-12-07 10:04:%02d,5 - [rank1]: %s\n" % (i, line)
                   for i, line in enumerate(SIGNAL_CHAIN.rstrip("\n").split("\n")))
    [crash] = parse_text(text).crashes()
    assert crash["rank"] == 1 and crash["time"] == "12-07 10:04:00.5"
