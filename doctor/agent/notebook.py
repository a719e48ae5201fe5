"""The target's main process for a notebook: ``python -m doctor.agent.boot NOTEBOOK``.

Starts the notebook's own kernel (nbclient and ipykernel; the kernel inherits the
doctor's environment, so its workers are watched like a script's), makes the kernel
ready as :mod:`doctor.agent.kernel` says, then runs the code cells in order and stops
at the first that fails, exiting 1 as Python does after an uncaught error. What a
cell prints reaches this process's stdout and stderr as it comes.
"""
import json
import os
import sys
import tempfile

from flake8_dlworker import notebook as notebook_source


def run(path):
    import nbformat
    from nbclient.exceptions import CellExecutionError, DeadKernelError

    # the kernel's connection file goes to the run's folder (TMPDIR is the run's, see
    # doctor.supervisor), so that a kernel ended by the doctor leaves nothing behind
    os.environ["JUPYTER_RUNTIME_DIR"] = os.path.join(tempfile.gettempdir(), "jupyter")
    book = nbformat.read(path, as_version=4)
    layout = notebook_source.read(path)
    cells = [(cell.source, cell.start) for cell in layout.cells]
    # the kernel's standard error stays the process's own (no copy of it to the
    # notebook), where its workers write too: the doctor reads each line once
    client = _EchoingClient(book, timeout=None, allow_errors=False,
                            extra_arguments=["--IPKernelApp.capture_fd_output=False"],
                            kernel_name=kernel_name(book),
                            resources={"metadata": {"path": os.path.dirname(
                                os.path.abspath(path))}})
    # the kernel's own preparation runs first, as a cell of the copy nbclient executes
    setup = ("import doctor.agent.kernel as _dlw_kernel\n"
             "_dlw_kernel.prepare(%s, %s, %s)\n"
             "del _dlw_kernel" % (json.dumps(os.path.abspath(path)), json.dumps(cells),
                                  json.dumps(layout.source)))
    book.cells.insert(0, nbformat.v4.new_code_cell(setup))
    with client.setup_kernel():
        client.execute_cell(book.cells[0], 0)
        for index, cell in enumerate(book.cells[1:]):
            if cell.cell_type != "code":
                continue
            try:
                client.execute_cell(cell, index + 1)
            except CellExecutionError as exc:
                if exc.ename in ("StopRun", "SystemExit"):  # --max-batches, or exit()
                    return 0
                return 1
            except DeadKernelError:
                print("the kernel died while it ran %s" % notebook_source.cell_name(index),
                      file=sys.stderr)
                return 1
    return 0


def kernel_name(book):
    spec = book.metadata.get("kernelspec") or {}
    return spec.get("name") or "python3"


class _EchoingClient:
    """Made an ``nbclient.NotebookClient`` subclass at first use (nbclient is only
    needed for notebooks): stream outputs are written to this process's stdout and
    stderr as they come, so the doctor sees them live."""

    def __new__(cls, *args, **kwargs):
        from nbclient import NotebookClient

        class Echoing(NotebookClient):
            def output(self, outs, msg, display_id, cell_index):
                if msg["msg_type"] == "stream":
                    stream = sys.stderr if msg["content"].get("name") == "stderr" else sys.stdout
                    stream.write(msg["content"].get("text", ""))
                    stream.flush()
                return super().output(outs, msg, display_id, cell_index)

        return Echoing(*args, **kwargs)
