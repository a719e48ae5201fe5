"""Marks for tests that need what a lint-only Python lacks (see ``make test-pythons``)."""
import os
import sys
from importlib.util import find_spec

import pytest

#: the test runs real DataLoader workers
torch = pytest.mark.skipif(find_spec("torch") is None,
                           reason="torch is not installed here (a lint-only Python)")
#: the test sends POSIX signals, makes FIFOs or sessions, or starts a fork server
posix = pytest.mark.skipif(os.name != "posix", reason="POSIX signals, FIFOs, sessions or fork")
#: the test needs Linux itself (/proc, the child subreaper, the Windows simulation)
linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")
