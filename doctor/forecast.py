"""A forecast from the memory timeline: where the workers' memory goes at this rate.

A worker whose resident memory rises steadily with the batches it delivers (a cache that
keeps every sample, copy-on-access growth under fork) is killed by the out-of-memory
killer later, often hours into training. From the run's first batches
(:mod:`doctor.memory`) the doctor fits each worker's RSS against the batches delivered
(the later half of its samples: the trend now), and where the rise is steady and large
enough to matter, says how many more batches the host's available memory lasts at that
rate. A run stopped by ``--max-batches`` gives the
same forecast, from fewer points.
"""
from typing import List, NamedTuple, Optional

#: a rise below this (over the fitted points) is noise: allocator arenas, torch caches
MIN_RISE_GB = 0.05
#: the fit must explain this share of the variance (R squared) to be called steady
MIN_R2 = 0.8
MIN_POINTS = 4
_MIB = 1.0 / 1024


class Growth(NamedTuple):
    role: str
    per_batch_gb: float       # GiB more RSS per batch delivered (by all workers)
    start_gb: float
    end_gb: float
    points: int
    measure: str = "RSS"      # or "private memory" (USS), for a forked worker


class Forecast(NamedTuple):
    growing: List[Growth]
    available_gb: Optional[float]
    batches_seen: int
    batches_left: Optional[int]   # until the available memory is used, at this rate

    def text(self):
        """One line per growing worker, then the forecast."""
        lines = []
        for g in self.growing:
            lines.append("%s grew from %s to %s %s, %s per batch, steadily (%d samples)"
                         % (g.role, _size(g.start_gb), _size(g.end_gb), g.measure,
                            _size(g.per_batch_gb), g.points))
        if self.batches_left is not None:
            worst = max(self.growing, key=lambda g: g.per_batch_gb)
            lines.append(
                "forecast: at this rate %s the %s available after about %s more batches "
                "(%s seen so far)" % (
                    "%s reaches" % worst.role if len(self.growing) == 1
                    else "the %d growing workers together reach" % len(self.growing),
                    _size(self.available_gb), "{:,}".format(self.batches_left),
                    "{:,}".format(self.batches_seen)))
        return lines

    def to_json(self):
        return {"growing": [g._asdict() for g in self.growing],
                "available_gb": self.available_gb, "batches_seen": self.batches_seen,
                "batches_left": self.batches_left}


def forecast(memory, until=None) -> Optional[Forecast]:
    """The forecast from ``ev.memory``, or None when no worker grows steadily.

    ``until``: seconds since the start after which samples are not used (the first
    worker's death: what followed it is the crash, not the trend)."""
    if not memory or not memory.get("batches", {}).get("t"):
        return None
    batches = list(zip(memory["batches"]["t"], memory["batches"]["count"]))
    last = batches[-1][0]  # after the last batch the run ends: no trend there
    until = last if until is None else min(until, last)
    growing = []
    for process in memory.get("processes", []):
        if not process["role"].startswith("worker"):
            continue
        # a forked worker's RSS counts the pages it shares: its private memory is its own
        private = "private_gb" in process
        times, values = ((process["private_t"], process["private_gb"]) if private
                         else (process["t"], process["rss_gb"]))
        points = [(b, gb) for t, gb in zip(times, values)
                  if t <= until
                  for b in [_batches_at(batches, t)] if b is not None]
        growth = _growth(process["role"], points, "private memory" if private else "RSS")
        if growth is not None:
            growing.append(growth)
    if not growing:
        return None
    seen = batches[-1][1]
    available = memory.get("available_gb")
    left = None
    rate = sum(g.per_batch_gb for g in growing)
    if available is not None and rate > 0:
        left = int(available / rate)
    return Forecast(growing, available, seen, left)


def _batches_at(batches, t):
    """Batches delivered by time ``t`` (None before the first batch)."""
    found = None
    for when, count in batches:
        if when > t:
            break
        found = count
    return found


def _growth(role, points, measure="RSS") -> Optional[Growth]:
    """A least-squares line of RSS against batches over the later half of the points
    (the trend now, after the worker's start), when it rises steadily."""
    if len(points) >= 2 * MIN_POINTS:
        points = points[len(points) // 2:]
    xs = [x for x, _ in points]
    if len(points) < MIN_POINTS or max(xs) - min(xs) < 2:
        return None
    n = float(len(points))
    mean_x = sum(xs) / n
    mean_y = sum(y for _, y in points) / n
    sxx = sum((x - mean_x) ** 2 for x in xs)
    sxy = sum((x - mean_x) * (y - mean_y) for x, y in points)
    syy = sum((y - mean_y) ** 2 for _, y in points)
    if sxx == 0 or syy == 0:
        return None
    slope = sxy / sxx
    r2 = sxy * sxy / (sxx * syy)
    rise = slope * (max(xs) - min(xs))
    if slope <= 0 or r2 < MIN_R2 or rise < MIN_RISE_GB:
        return None
    return Growth(role, slope, points[0][1], points[-1][1], len(points), measure)


def _size(gb):
    if gb is None:
        return "?"
    if gb < 1:
        return "%.1f MiB" % (gb / _MIB)
    return "%.2f GiB" % gb


def for_run(ev) -> Optional[Forecast]:
    """The forecast of a run, from the samples before its first worker died."""
    if not ev.memory:
        return None
    dead = {w.pid for w in ev.workers if w.signal or w.exitcode not in (None, 0)}
    ends = [p["t"][-1] for p in ev.memory.get("processes", []) if p["pid"] in dead and p["t"]]
    return forecast(ev.memory, until=min(ends) if ends else None)
