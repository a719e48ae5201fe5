"""DLW109: every worker yields the same samples.

The doctor's runtime rule(s) of the cause: ``@rule(order=N)`` places each among
every cause's rules (doctor.diagnose tries them in that order).
"""
from doctor.rulekit import Diagnosis, by_signature, locate, relative, rule, static_finding

CODE = "DLW109"

dlw109 = by_signature(CODE, order=160)


@rule(order=183)
def dlw109_stream(ev):
    """Two or more workers of one IterableDataset's loader ended without asking for their
    worker info, and the loader's worker_init_fn (if any) left their copies of the dataset
    as they were: each yielded the whole stream. Where the loader compared its batches and
    none repeated, the streams differed after all (a random stream): nothing to report.
    After the rules of crashes: a crash that the run also shows is explained first."""
    by_loader = {}
    for stream in ev.streams:
        by_loader.setdefault(stream.get("key"), []).append(stream)
    for key, streams in by_loader.items():
        whole = [s for s in streams if not s.get("asked") and not s.get("init_changed")]
        if len(whole) < 2 or len(whole) < len(streams):
            continue
        loader = next((one for one in ev.loaders if one.get("key") == key), {})
        counted, repeated = loader.get("counted"), loader.get("repeated") or 0
        if counted and counted >= len(streams) and not repeated:
            continue
        return _diagnosis(ev, loader, whole, counted, repeated)
    return None


def _diagnosis(ev, loader, whole, counted, repeated):
    first = whole[0]
    name = first.get("dataset") or "the IterableDataset"
    made = " made at %s:%s" % (relative(loader["path"]), loader["line"]) \
        if loader.get("line") else ""
    iterates = " (__iter__ at %s:%s)" % (relative(first["iter_path"]), first["iter_line"]) \
        if first.get("iter_line") else ""
    evidence = ["the DataLoader%s iterates IterableDataset '%s'%s with %d workers" % (
        made, name, iterates, first.get("num_workers") or len(whole))]
    init = ("its worker_init_fn left each worker's copy of the dataset unchanged"
            if any(s.get("init_fn") for s in whole) else "the loader has no worker_init_fn")
    evidence.append("%s never called torch.utils.data.get_worker_info(), and %s: each "
                    "worker yielded the whole stream" % (
                        ", ".join("worker %s" % s.get("worker_id") for s in sorted(
                            whole, key=lambda s: s.get("worker_id") or 0)), init))
    if counted:
        evidence.append("%d of the %d batches the loader compared repeated one it had "
                        "delivered before in the same pass" % (repeated, counted))
    elif "counted" in loader:
        evidence.append("the loader could not compare its batches for repeats (they hold "
                        "objects other than tensors, arrays, numbers and strings)")
    diag = Diagnosis(CODE, "certain" if repeated else "likely", evidence)
    if static_finding(ev, CODE) is not None:
        return locate(diag, ev)
    if loader.get("line"):
        diag.path, diag.line = loader["path"], loader["line"]
    return diag
