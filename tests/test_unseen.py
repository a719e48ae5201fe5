"""The doctor's own frames stay out of what the script shows (doctor.agent.unseen):
code compiled under the doctor's folder stands for the hooks that wrap torch."""
import os
import sys
import warnings

from doctor.agent import unseen

HOOK = os.path.join(unseen.DOCTOR_DIR, "agent", "a_hook.py")


def _doctor_code(source):
    """Functions defined in ``source`` as if they lived in a file of the doctor."""
    scope = {"warnings": warnings}
    exec(compile(source, HOOK, "exec"), scope)
    return scope


WRAPPER = _doctor_code("def wrapper(call):\n    return call()\n")["wrapper"]


def _raises():
    raise ValueError("the script's own error")


def _files(tb):
    found = []
    while tb is not None:
        found.append(tb.tb_frame.f_code.co_filename)
        tb = tb.tb_next
    return found


def test_a_traceback_through_a_hook_loses_only_the_hooks_frame():
    try:
        WRAPPER(_raises)
    except ValueError:
        _kind, value, tb = sys.exc_info()
    head = unseen.clean(value, tb)
    assert _files(head) == [__file__, __file__]
    assert value.__traceback__ is head


def test_a_chained_exception_is_cleaned_too():
    def outer():
        try:
            WRAPPER(_raises)
        except ValueError as exc:
            raise RuntimeError("outer") from exc

    try:
        WRAPPER(outer)
    except RuntimeError:
        _kind, value, tb = sys.exc_info()
    unseen.clean(value, tb)
    assert HOOK not in _files(value.__traceback__)
    assert HOOK not in _files(value.__cause__.__traceback__)


def test_a_failure_in_the_hook_keeps_every_frame_only_to_debug_the_doctor(monkeypatch):
    """A C function the hook calls raises (torch's worker check): its frame is not the
    script's to see; DLW_DOCTOR_DEBUG shows it."""
    fail = _doctor_code("def fail():\n    return {}['key']\n")["fail"]
    for debug, files in ((None, [__file__]), ("1", [__file__, HOOK, HOOK])):
        if debug:
            monkeypatch.setenv(unseen.DEBUG, debug)
        try:
            WRAPPER(fail)
        except KeyError:
            _kind, _value, tb = sys.exc_info()
        assert _files(unseen.visible(tb)) == files


def _warns():
    warnings.warn("deprecated here", UserWarning, stacklevel=2)


def test_a_warning_names_the_line_it_would_name_without_the_hook(monkeypatch):
    import threading

    monkeypatch.setattr(sys, "excepthook", sys.excepthook)
    monkeypatch.setattr(threading, "excepthook", threading.excepthook)
    monkeypatch.setattr(warnings, "warn", warnings.warn)
    unseen.install()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        WRAPPER(_warns)  # stacklevel=2: this line, as without the hook between
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]


def test_the_scripts_traceback_under_boot_is_the_one_python_prints(tmp_path):
    """No torch: the target raises at once, run as the doctor runs it."""
    import subprocess

    (tmp_path / "train.py").write_text("def main():\n    raise ValueError('x')\n\n\nmain()\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    found = subprocess.run([sys.executable, "-m", "doctor.agent.boot", "train.py"],
                           cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert found.returncode == 1
    assert found.stderr == (
        'Traceback (most recent call last):\n'
        '  File "%s", line 5, in <module>\n    main()\n'
        '  File "%s", line 2, in main\n    raise ValueError(\'x\')\n'
        'ValueError: x\n' % (("train.py",) * 2))
