"""The rules: small functions over a module's facts, each yielding Findings."""
from typing import NamedTuple


class Finding(NamedTuple):
    line: int
    col: int
    code: str
    text: str  # the message after the code
