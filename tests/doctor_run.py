"""Run ``python -m doctor`` in a subprocess, as a user would, and check that it left
no process behind: every process it started carries a token in its environment."""
import json
import os
import subprocess
import sys
import time
import uuid

import psutil

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


def run_doctor(args, cwd, limit=600, env=None):
    """(exit status, parsed JSON or None, stdout, stderr, leftover processes)."""
    token = uuid.uuid4().hex
    full_env = dict(os.environ, **(env or {}))
    full_env[TOKEN] = token
    full_env.pop("NO_COLOR", None)
    try:
        proc = subprocess.run([sys.executable, "-m", "doctor", *args], cwd=cwd, env=full_env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=limit)
    except subprocess.TimeoutExpired:
        for p in leftovers(token):  # the doctor hung: end what it started, then fail
            p.kill()
        raise
    left = leftovers(token)
    deadline = time.monotonic() + 30
    while left and time.monotonic() < deadline:  # a process may be exiting right now
        time.sleep(0.1)
        left = leftovers(token)
    for p in left:  # do not let one failure leak into the next test
        try:
            p.kill()
        except psutil.Error:
            pass
    report = None
    if "--json" in args and proc.stdout.strip():
        report = json.loads(proc.stdout)
    return proc.returncode, report, proc.stdout, proc.stderr, left
