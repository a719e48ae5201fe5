"""``--plot FILE.png|FILE.svg``: the memory timeline of a run as a picture.

One line per process (RSS in GiB over the seconds of the run, the roles in the legend),
a dashed line for the host memory available when it is on a sensible scale, the script's
name in the title. matplotlib (the extra ``[plot]``) is imported only here, with the Agg
canvas and no pyplot, so no window and no global figure state.
"""
import os

SUFFIXES = (".png", ".svg")
MISSING = "doctor: --plot needs matplotlib: pip install 'flake8-dlworker[plot]'"
#: the available-memory line is drawn when it is at most this many times the highest peak
AVAILABLE_SCALE = 4.0
SIZE_IN = (9.0, 4.5)
DPI = 100


def suffix(path):
    """``.png`` or ``.svg`` (lower case), or None for any other name."""
    found = os.path.splitext(path)[1].lower()
    return found if found in SUFFIXES else None


def importable():
    """Whether matplotlib and its Agg canvas import here (checked before a run)."""
    try:
        import matplotlib  # noqa: F401
        from matplotlib.backends import backend_agg  # noqa: F401
        from matplotlib.figure import Figure  # noqa: F401
    except Exception:  # missing, or broken (a numpy it cannot use)
        return False
    return True


def figure(memory, title=None):
    """The matplotlib Figure of ``memory`` (``ev.memory``, see :mod:`doctor.memory`),
    attached to an Agg canvas."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=SIZE_IN, dpi=DPI)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    processes = [p for p in (memory or {}).get("processes") or []
                 if p.get("t") and p.get("rss_gb")]
    roles = [_role(p) for p in processes]
    top = 0.0
    for process, role in zip(processes, roles):
        points = sorted(zip(process["t"], process["rss_gb"]))
        times = [t for t, _ in points]
        sizes = [rss for _, rss in points]
        top = max([top] + sizes)
        ax.plot(times, sizes, label=role if roles.count(role) == 1 else
                "%s (pid %s)" % (role, process.get("pid")), linewidth=1.4,
                marker="o" if len(points) == 1 else None, markersize=3)
    available = (memory or {}).get("available_gb")
    heading = "memory of %s" % title if title else "memory per process"
    if available is not None and top > 0 and available <= AVAILABLE_SCALE * top:
        ax.axhline(available, linestyle="--", color="0.4", linewidth=1,
                   label="available (%.1f GiB)" % available)
    elif available is not None:  # far off the scale: say it, do not squash the lines
        heading += " (host memory available: %.1f GiB)" % available
    if not processes:
        ax.text(0.5, 0.5, "no memory samples in this run", transform=ax.transAxes,
                ha="center", va="center", color="0.4")
    ax.set_xlabel("seconds since the run started")
    ax.set_ylabel("RSS (GiB)")
    ax.set_ylim(bottom=0)
    ax.set_xlim(left=0)
    ax.grid(True, linewidth=0.5, alpha=0.5)
    ax.set_title(heading)
    if processes:
        count = len(ax.get_legend_handles_labels()[1])
        ax.legend(loc="upper left", fontsize="small", ncol=1 + (count - 1) // 12,
                  framealpha=0.8)
    fig.tight_layout()
    return fig


def write(memory, path, title=None):
    """Write the figure to ``path``, PNG or SVG by its suffix; OSError when it cannot."""
    from matplotlib import rc_context

    kind = suffix(path)
    if kind is None:
        raise ValueError("%s: give a .png or .svg file" % path)
    fig = figure(memory, title)
    # SVG: text as text (searchable, the roles readable), and the same file each time
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": "doctor"}):
        fig.savefig(path, format=kind[1:], metadata={"Date": None} if kind == ".svg" else None)


def _role(process):
    return " ".join(str(process.get("role") or "process").split())
