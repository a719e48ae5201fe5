"""DLW111: every worker draws the same random numbers.

The doctor's runtime rule(s) of the cause: ``@rule(order=N)`` places each among
every cause's rules (doctor.diagnose tries them in that order).
"""
from doctor.rulekit import by_signature

CODE = "DLW111"

dlw111 = by_signature(CODE, order=170)
