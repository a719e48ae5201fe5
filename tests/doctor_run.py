"""Run ``python -m doctor`` in a subprocess, as a user would, and check that it left
no process behind: every process it started carries a token in its environment."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

import psutil

from fixture_markers import example_env
from tiers import starts_torch

TOKEN = "DLW_DOCTOR_TEST_TOKEN"


def leftovers(token):
    """Processes still alive whose environment carries ``token``."""
    found = []
    for proc in psutil.process_iter(["pid"]):
        try:
            if proc.environ().get(TOKEN) == token and proc.status() != psutil.STATUS_ZOMBIE:
                found.append(proc)
        except psutil.Error:
            continue
    return found


def end_leftovers(token, bound_s=30.0):
    """Stop, then kill, every process carrying ``token`` and its process group, until a
    look finds none: one kill pass misses a process that keeps re-forking."""
    deadline = time.monotonic() + bound_s
    own_group = os.getpgid(0)
    while time.monotonic() < deadline:
        found = leftovers(token)
        if not found:
            return
        for number in (signal.SIGSTOP, signal.SIGKILL):
            for proc in found:
                try:
                    group = os.getpgid(proc.pid)
                    if group != own_group:
                        os.killpg(group, number)
                    proc.send_signal(number)
                except (psutil.Error, OSError):
                    continue
        time.sleep(0.05)


def doctor_folders(folder):
    """The doctor's own temporary folders (runs and verifying re-runs) in ``folder``."""
    return [name for name in os.listdir(folder) if name.startswith(("dlw-doctor-", "dlw-verify-"))]


@starts_torch
def run_doctor(args, cwd, limit=600, env=None):
    """:func:`doctor_command` for a command that runs a script (or may): the test is
    in the full tier (tests/tiers.py)."""
    return doctor_command(args, cwd, limit, env)


def doctor_command(args, cwd, limit=600, env=None):
    """(exit status, parsed JSON or None, stdout, stderr, leftover processes).

    For a command that starts no script and no torch: ``check``, ``explain``, ``--help``
    and the refusals of bad input; :func:`run_doctor` for one that runs a script.

    The doctor gets a temporary folder of its own (TMPDIR, a short path: torch makes Unix
    sockets there), which must hold none of the doctor's folders afterwards."""
    token = uuid.uuid4().hex
    full_env = example_env(dict(os.environ, **(env or {})))
    full_env[TOKEN] = token
    full_env.pop("NO_COLOR", None)
    own = not (env or {}).get("TMPDIR")
    if own:
        full_env["TMPDIR"] = tempfile.mkdtemp(prefix="dlw-t-")
    try:
        return _run(args, cwd, limit, full_env, token, full_env["TMPDIR"])
    finally:
        if own:
            shutil.rmtree(full_env["TMPDIR"], ignore_errors=True)


def _run(args, cwd, limit, full_env, token, temp):
    try:
        proc = subprocess.run([sys.executable, "-m", "doctor", *args], cwd=cwd, env=full_env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=limit)
    except subprocess.TimeoutExpired:
        end_leftovers(token)  # the doctor hung: end what it started, then fail
        raise
    left = leftovers(token)
    deadline = time.monotonic() + 30
    while left and time.monotonic() < deadline:  # a process may be exiting right now
        time.sleep(0.1)
        left = leftovers(token)
    if left:  # do not let one failure leak into the next test
        end_leftovers(token)
    left_folders = doctor_folders(temp)
    assert not left_folders, "the doctor left %s in %s" % (left_folders, temp)
    report = None
    if "--json" in args and proc.stdout.strip():
        report = json.loads(proc.stdout)
    return proc.returncode, report, proc.stdout, proc.stderr, left
