"""``python -m doctor NOTEBOOK.ipynb``: what differs from running a script.

The notebook runs in its own Jupyter kernel (:mod:`doctor.agent.notebook`), whose code
cells are compiled at their lines in the notebook read as one script
(:mod:`flake8_dlworker.notebook`). So the run's evidence, the static findings and the
diagnoses all speak of that script's lines, as for a script; only at the end does each
place in the notebook become its cell and the line in that cell (:func:`to_cells`).
"""
import ast
import os
import re
import sys

from doctor import keeper, sandbox, signals
from flake8_dlworker.catalog import RULES
from flake8_dlworker.notebook import NotebookError, is_notebook, read  # noqa: F401


class NotRunnable(Exception):
    """The notebook cannot be run here; the text says why in one line."""


def check(path):
    """The notebook, read (:class:`flake8_dlworker.notebook.Notebook`), or NotRunnable:
    not a notebook, nbclient or ipykernel missing, or no such kernel."""
    try:
        book = read(path)
    except NotebookError as exc:
        raise NotRunnable("%s: %s" % (path, exc))
    except OSError as exc:
        raise NotRunnable("%s: cannot read: %s" % (path, exc.strerror or exc))
    try:
        ast.parse(book.source, path)
    except SyntaxError as exc:
        place = book.locate(exc.lineno or 1)
        where = "cell %d:%d" % (place[0] + 1, place[1]) if place else "line %s" % exc.lineno
        raise NotRunnable("%s:%s: not valid Python: %s" % (path, where, exc.msg))
    try:
        import nbformat
        from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
        import nbclient  # noqa: F401 - the runner's
    except ImportError as exc:
        raise NotRunnable("running a notebook needs nbclient and ipykernel (%s): pip install "
                          "'flake8-dlworker[notebook]'" % exc)
    from doctor.agent.notebook import kernel_name

    with open(path, encoding="utf-8") as handle:
        name = kernel_name(nbformat.read(handle, as_version=4))
    try:
        KernelSpecManager().get_kernel_spec(name)
    except NoSuchKernel:
        raise NotRunnable("%s: the notebook's kernel %r does not exist here (see `jupyter "
                          "kernelspec list`)" % (path, name))
    return book


def static_findings(path, book, start_method):
    """The checker's findings on the notebook, at lines of its script."""
    from flake8_dlworker.plugin import findings

    tree = ast.parse(book.source, path)
    return [{"path": path, "line": f.line, "col": f.col + 1, "code": f.code, "text": f.text}
            for f in findings(tree, path, start_method, notebook=True)]


def to_cells(path, book, ev, diagnoses):
    """Every place in the notebook, from a line of its script to (cell, line in it)."""
    real = os.path.realpath(path)
    for diag in diagnoses:
        if diag.path and diag.line and os.path.realpath(diag.path) == real:
            place = book.locate(diag.line)
            if place is not None:
                diag.cell, diag.line = place
        diag.evidence = [_places_in_text(text, path, book) for text in diag.evidence]
    for finding in ev.static:
        place = book.locate(finding["line"])
        if place is not None:
            finding["cell"], finding["line"] = place


def _places_in_text(text, path, book):
    """``train.ipynb:23`` and ``File ".../train.ipynb", line 23`` in a line of evidence,
    as the cell and line there."""
    name = re.escape(os.path.basename(path))

    def colon(match):
        place = book.locate(int(match.group(2)))
        return "%s:cell %d:%d" % (match.group(1), place[0] + 1, place[1]) if place \
            else match.group(0)

    def frame(match):
        place = book.locate(int(match.group(2)))
        return "%s, cell %d, line %d" % (match.group(1), place[0] + 1, place[1]) if place \
            else match.group(0)

    text = re.sub(r'((?:[^\s"]*/)?%s):(\d+)' % name, colon, text)
    return re.sub(r'("(?:[^"]*/)?%s"), line (\d+)' % name, frame, text)


# -- the fix ----------------------------------------------------------------------------

def fix(path, diagnoses, start_method="spawn", do_verify=False, do_apply=False,
        force=False, timeout=None, out=None):
    """The notebook's fix as the patch of its first diagnosis that it answers; with
    --verify (or --apply) a patched copy is run, with --apply both files are written."""
    from doctor.patches import notebook as notebook_fix

    out = out or sys.stderr
    real = os.path.realpath(path)
    answered = [d for d in diagnoses if RULES[d.code].flag("notebook_fix") and d.path
                and os.path.realpath(d.path) == real]
    if not answered:
        return None
    try:
        fixed = notebook_fix.fix(path, start_method)
    except Exception:
        if os.environ.get("DLW_DOCTOR_DEBUG"):
            raise
        fixed = None
    if fixed is None:
        return None
    diag = answered[0]
    diag.patch = fixed.diff(path.replace(os.sep, "/"), fixed.module_path.replace(os.sep, "/"))
    diag.evidence.append("the patch moves %s into %s, which the workers can import"
                         % (", ".join(fixed.moved), os.path.basename(fixed.module_path)))
    if do_verify or (do_apply and not force):
        verify(fixed, diag, start_method, timeout)
    if do_apply:
        _apply(fixed, diag, force, out)
    return fixed


def verify(fixed, diag, start_method, timeout=None):
    """Run a patched copy of the notebook's folder; ``verified`` when it passes (or
    stops after its batches) and nothing certain is diagnosed."""
    import tempfile

    from doctor.diagnose import diagnose
    from doctor.patches.rounds import ran_through
    from doctor.patches.workflow import VERIFY_BATCHES, VERIFY_TIMEOUT_S
    from doctor.supervisor import Run

    folder = os.path.dirname(os.path.realpath(fixed.path))
    timeout = timeout or VERIFY_TIMEOUT_S
    with tempfile.TemporaryDirectory(prefix=keeper.folder_prefix("verify")) as tmp:
        copy = os.path.join(tmp, os.path.basename(folder) or "notebook")
        copied = sandbox.Copy(folder, copy)
        notebook = copied.put(fixed.path, fixed.after)
        copied.put(fixed.module_path, fixed.module_text, new=True)
        originals = copied.watch()
        with open(os.devnull, "w") as sink:
            ev = Run([notebook], start_method=start_method, timeout=timeout,
                     max_batches=VERIFY_BATCHES, stdout=sink).run()
        ev.hints["wrote_through_links"] = sandbox.changed(originals)
        book = read(notebook)
        ev.static = static_findings(notebook, book, start_method)
        found = diagnose(ev)
    codes = sorted({d.code for d in found if d.confidence == "certain"})
    diag.verified = ran_through(ev) and not codes
    diag.evidence.append(
        "re-run of the patched notebook under %s (--max-batches %d, --timeout %gs): "
        "outcome %s, %d batch(es)%s" % (
            start_method, VERIFY_BATCHES, timeout, ev.outcome, ev.hints.get("batches", 0),
            "; now diagnosed: %s" % ", ".join(codes) if codes else ""))
    return diag.verified


def _apply(fixed, diag, force, out):
    """The new module first (never over an existing file), then the notebook, atomically
    and with a backup (:mod:`doctor.patches.write`)."""
    from doctor.patches import write
    from doctor.patches.workflow import under_cwd

    if signals.received() is not None:
        print("doctor: not written: %s: the doctor received %s"
              % (fixed.path, signals.name(signals.received())), file=out)
        return False
    outside = [p for p in (fixed.path, fixed.module_path) if not under_cwd(p)]
    if outside:
        print("doctor: not written: %s lies outside the working directory" % outside[0],
              file=out)
        return False
    if not (diag.verified or force):
        print("doctor: not written: %s: the %s patch was not verified (--force writes it)"
              % (fixed.path, diag.code), file=out)
        return False
    try:
        fd = os.open(fixed.module_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except OSError as exc:
        print("doctor: not written: %s: %s" % (fixed.module_path, exc.strerror or exc),
              file=out)
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(fixed.module_text)
    try:
        backup = write.replace_checked(fixed.path, fixed.before, fixed.after)
    except (write.NotWritten, OSError) as exc:
        os.unlink(fixed.module_path)
        print("doctor: %s" % (exc if isinstance(exc, write.NotWritten) else
                              "not written: %s: %s" % (fixed.path, exc.strerror or exc)),
              file=out)
        return False
    diag.evidence.append("patch written to %s and %s; the original is kept in %s"
                         % (fixed.path, fixed.module_path, backup))
    print("doctor: wrote %s and %s (backup: %s)" % (fixed.path, fixed.module_path, backup),
          file=out)
    return True
