"""DLW109: every worker yields the same samples.

The doctor's runtime rule(s) of the cause: ``@rule(order=N)`` places each among
every cause's rules (doctor.diagnose tries them in that order).
"""
from doctor.rulekit import by_signature

CODE = "DLW109"

dlw109 = by_signature(CODE, order=160)
