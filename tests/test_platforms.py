"""One platform layer: no module but flake8_dlworker/platforms.py names an API that exists
only on POSIX or only on Windows, and the layer's portable paths work where it runs."""
import ast
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

import needs
from flake8_dlworker import platforms

ROOT = Path(__file__).resolve().parents[1]
LAYER = ROOT / "flake8_dlworker" / "platforms.py"
#: the catalog's examples are user code that shows a cause, not the tool's own code
CATALOG_EXAMPLES = ROOT / "flake8_dlworker" / "causes"
PACKAGES = ("doctor", "flake8_dlworker")

#: names that one family of OS lacks, by the module that holds them
ONLY_SOME = {
    "os": {"killpg", "getpgid", "getpgrp", "setpgid", "setpgrp", "getsid", "setsid",
           "waitid", "fork", "forkpty", "WNOHANG", "WNOWAIT", "WEXITED", "P_PID",
           "CLD_EXITED", "fchown", "fchmod", "chown", "lchown", "geteuid", "getuid",
           "getegid", "getgid", "getgroups", "sched_getaffinity", "sched_setaffinity",
           "statvfs", "mkfifo", "getloadavg", "nice", "setuid", "O_NOFOLLOW", "O_NONBLOCK",
           "O_NOCTTY", "O_BINARY", "startfile"},
    "signal": {"SIGKILL", "SIGSTOP", "SIGCONT", "SIGHUP", "SIGUSR1", "SIGUSR2", "SIGALRM",
               "SIGCHLD", "SIGBUS", "SIGQUIT", "SIGPIPE", "SIGTSTP", "setitimer",
               "getitimer", "ITIMER_REAL", "alarm", "pthread_kill", "pthread_sigmask",
               "siginterrupt", "CTRL_C_EVENT", "CTRL_BREAK_EVENT", "SIGBREAK"},
    "subprocess": {"CREATE_NEW_PROCESS_GROUP", "STARTUPINFO", "CREATE_NO_WINDOW"},
    "ctypes": {"windll", "WinDLL", "CDLL"},
}
ONLY_SOME_MODULES = {"resource", "fcntl", "termios", "pwd", "grp", "msvcrt", "winreg",
                     "_winapi", "posix", "nt"}
ONLY_SOME_KEYWORDS = {"start_new_session", "preexec_fn", "creationflags"}


def _modules():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if path != LAYER and CATALOG_EXAMPLES not in path.parents:
                yield path


def platform_calls(path):
    """(line, what) of every OS-specific name that ``path`` uses."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.attr in ONLY_SOME.get(node.value.id, ())):
            found.append((node.lineno, "%s.%s" % (node.value.id, node.attr)))
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, "import " + a.name) for a in node.names
                         if a.name.split(".")[0] in ONLY_SOME_MODULES)
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.module.split(".")[0] in ONLY_SOME_MODULES:
                found.append((node.lineno, "from " + node.module))
            found.extend((node.lineno, "from %s import %s" % (node.module, a.name))
                         for a in node.names if a.name in ONLY_SOME.get(node.module, ()))
        elif isinstance(node, ast.Call):
            found.extend((node.lineno, kw.arg + "=") for kw in node.keywords
                         if kw.arg in ONLY_SOME_KEYWORDS)
            if (isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")
                    and len(node.args) >= 2 and isinstance(node.args[0], ast.Name)
                    and isinstance(node.args[1], ast.Constant)
                    and node.args[1].value in ONLY_SOME.get(node.args[0].id, ())):
                found.append((node.lineno, "%s(%s, %r)" % (
                    node.func.id, node.args[0].id, node.args[1].value)))
    return found


def test_no_module_but_the_layer_calls_an_os_specific_api():
    offenders = ["%s:%d: %s" % (path.relative_to(ROOT), line, what)
                 for path in _modules() for line, what in platform_calls(path)]
    assert offenders == [], "\n".join(offenders)


def test_the_check_sees_what_it_forbids(tmp_path):
    """The reader is not blind: each form it forbids is found in a sample."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os, signal, resource, subprocess\n"
        "from os import killpg\n"
        "os.killpg(1, signal.SIGKILL)\n"
        "hasattr(os, 'waitid')\n"
        "subprocess.Popen(['x'], start_new_session=True)\n")
    whats = {what for _line, what in platform_calls(sample)}
    assert whats == {"import resource", "from os import killpg", "os.killpg",
                     "signal.SIGKILL", "hasattr(os, 'waitid')", "start_new_session="}
    # and the layer itself is where they are
    assert platform_calls(LAYER)


# -- the portable paths, on this machine -------------------------------------------------

@needs.posix
def test_a_worker_exit_reads_the_same_from_waitid_and_from_the_process():
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    proc = ctx.Process(target=sys.exit, args=(3,))
    proc.start()
    proc.join()
    assert platforms.exit_of(proc) == ("exit", 3)
    killed = ctx.Process(target=_sleep_long)
    killed.start()
    os.kill(killed.pid, signal.SIGTERM)
    killed.join()
    assert platforms.exit_of(killed) == ("signal", signal.SIGTERM)


def _sleep_long():
    time.sleep(600)


@pytest.mark.skipif(not platforms.CAN_PEEK_EXITS, reason="no waitid here")
def test_peeking_an_exit_leaves_it_to_be_reaped():
    child = subprocess.Popen([sys.executable, "-c", "raise SystemExit(5)"])
    ended = None
    while ended is None:  # until it ends
        time.sleep(0.01)
        ended = platforms.peek_exit(child.pid)
    assert ended == ("exit", 5)
    assert child.wait(timeout=60) == 5  # still there to reap


def test_stacks_come_from_a_trigger_file_where_there_is_no_signal(tmp_path):
    """The Windows path, run here: a process with no SIGUSR2 handler answers a trigger
    file with the stacks of all its threads."""
    script = tmp_path / "stuck.py"
    script.write_text(
        "import sys, threading\n"
        "from flake8_dlworker import platforms\n"
        "platforms.DUMP_SIGNAL = None\n"
        "handle = open(sys.argv[1], 'w')\n"
        "platforms.answer_stack_requests(handle)\n"
        "print('ready', flush=True)\n"
        "def stuck_here():\n"
        "    threading.Event().wait()\n"
        "stuck_here()\n")
    dump = str(tmp_path / "stack-1.txt")
    proc = subprocess.Popen([sys.executable, str(script), dump], stdout=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdout.readline() == "ready\n"
        old = platforms.DUMP_SIGNAL
        platforms.DUMP_SIGNAL = None
        try:
            assert platforms.ask_for_stacks(psutil.Process(proc.pid), dump)
        finally:
            platforms.DUMP_SIGNAL = old
        while os.path.exists(dump + ".ask"):  # the process removes it once it answered
            assert proc.poll() is None
            time.sleep(0.05)
        text = Path(dump).read_text()
        assert "stuck_here" in text and "Thread" in text, text
    finally:
        proc.kill()
        proc.wait()


def test_descendants_are_the_whole_tree_below_and_nothing_else(tmp_path):
    """A child that starts a grandchild: both are found from the child's parent, from
    the processes' own lists of children (where the OS keeps such lists; elsewhere the
    answer is None and the caller scans the process table)."""
    ready = tmp_path / "ready"
    program = ("import subprocess, sys, time, pathlib\n"
               "g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
               "pathlib.Path(%r).write_text(str(g.pid))\n"
               "time.sleep(600)\n" % str(ready))
    child = subprocess.Popen([sys.executable, "-c", program])
    try:
        deadline = time.monotonic() + 120
        while not ready.exists() or not ready.read_text():
            assert time.monotonic() < deadline, "the grandchild never started"
            time.sleep(0.05)
        grandchild = int(ready.read_text())
        found = platforms.descendants([os.getpid()])
        if found is None:
            pytest.skip("this OS keeps no list of a process's children")
        assert {child.pid, grandchild} <= set(found)
        assert platforms.descendants([child.pid]) == [grandchild]
        assert platforms.descendants([grandchild]) == []
    finally:
        for proc in psutil.Process(child.pid).children(recursive=True) + [child]:
            proc.kill()
        child.wait()


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="no pidfd here: the waiter sleeps")
def test_the_exit_waiter_wakes_when_the_child_ends_not_when_its_time_is_up():
    """The doctor's watch waits on the script's end: the child ending wakes it (its
    600 s are never spent), and a child that goes on leaves it to its time."""
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"],
                             stdin=subprocess.PIPE)
    waiter = platforms.exit_waiter(child.pid)
    try:
        started = time.monotonic()
        waiter.wait(0.01)  # still running: only the time ends the wait
        assert child.poll() is None
        child.stdin.close()  # the child reads its end of input and exits
        waiter.wait(600)
        assert time.monotonic() - started < 600
        assert child.wait(timeout=60) == 0
    finally:
        waiter.close()
        child.kill()
        child.wait()
