"""The live one-line status on stderr while the script runs (only on a TTY)."""
import threading


class StatusLine:
    def __init__(self, stream):
        self.stream = stream
        self.lock = threading.Lock()
        self.shown = False

    def show(self, elapsed, alive, peak_gb, batches):
        text = "doctor: %5.1fs  %d processes  peak worker RSS %.2f GiB  %d batches" % (
            elapsed, alive, peak_gb, batches)
        with self.lock:
            self.stream.write("\r\x1b[2K" + text)
            self.stream.flush()
            self.shown = True

    def clear(self):
        with self.lock:
            if self.shown:
                self.stream.write("\r\x1b[2K")
                self.stream.flush()
                self.shown = False
