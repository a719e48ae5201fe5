"""DLW106: a DataLoader's options that torch rejects at construction.

The doctor's runtime rule(s) of the cause: ``@rule(order=N)`` places each among
every cause's rules (doctor.diagnose tries them in that order).
"""
from doctor.rulekit import by_signature

CODE = "DLW106"

dlw106 = by_signature(CODE, order=10, confidence="certain", symptoms=False)
