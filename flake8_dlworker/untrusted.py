"""Text the user did not write for us to print: what a report may show of it.

Two rules, each in one place, used by every printer:

- :func:`inert`: text from a log, a script's source, a file name or an exception is
  printed with its control characters spelled out (``\\x1b``), so that no escape
  sequence, C1 control, backspace or carriage return reaches the terminal, and no
  bidirectional override reorders what is shown.  Tabs stay, and newlines where the
  text is several lines (:func:`inert_line` spells them out too).
- :func:`is_secret`: a name or key that a report must not show: one equal to, or
  containing, the value of an environment variable of the run, or shaped like a key
  (a well-known credential prefix, a long random-looking run of letters and digits,
  ``user:password``).  The pickle probe asks it for every attribute name and dict key
  it prints.

Importing this module imports neither torch nor flake8.
"""
import functools
import math
import os
import re

#: C0 and C1 controls, DEL, and the invisible marks that reorder or hide text
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e"
                      "\u2060-\u2069\ufeff]")
_CONTROL_LINE = re.compile("[\n%s]" % _CONTROL.pattern[1:-1])


def _spell(match):
    code = ord(match.group())
    return "\\x%02x" % code if code < 0x100 else "\\u%04x" % code


def inert(text):
    """``text`` with every control character but tab and newline spelled out."""
    if not isinstance(text, str):
        text = str(text)
    return _CONTROL.sub(_spell, text)


def inert_line(text):
    """:func:`inert`, newlines spelled out too: for a value shown on one line."""
    if not isinstance(text, str):
        text = str(text)
    return _CONTROL_LINE.sub(_spell, text)


def inert_tree(value):
    """Every string in a JSON-like value made :func:`inert`, keys included."""
    if isinstance(value, str):
        return inert(value)
    if isinstance(value, dict):
        return {inert_tree(k): inert_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [inert_tree(v) for v in value]
    return value


# --- secrets -------------------------------------------------------------------------

#: an environment value shorter than this is a flag or a word, not a secret
MIN_ENV_VALUE = 6
#: well-known credential prefixes followed by their token (Hugging Face, OpenAI,
#: Anthropic, GitHub, GitLab, Slack, AWS access key ids)
_CREDENTIAL = re.compile(
    r"(?:hf_|sk-(?:proj-|ant-)?|gh[pousr]_|github_pat_|glpat-|xox[abprs]-)[A-Za-z0-9]{12,}"
    r"|(?:AKIA|ASIA)[A-Z0-9]{12,}")
#: ``user:password`` (also inside a URL): a password of mixed characters
_USER_PASSWORD = re.compile(r"(?:^|[\s/@])[\w.+-]+:(?P<password>[^\s:/@]{6,})(?:@|$)")
#: a run of letters and digits, as keys and hashes are written
_RUN = re.compile(r"[A-Za-z0-9]{12,}")


def is_secret(text, environ=None):
    """Whether ``text`` (a name or key) may be a secret, so that a report hides it."""
    if not isinstance(text, str) or not text:
        return False
    if _CREDENTIAL.search(text):
        return True
    match = _USER_PASSWORD.search(text)
    if match and _classes(match.group("password")) >= 3:
        return True
    if any(_random_looking(run) for run in _RUN.findall(text)):
        return True
    return any(value in text for value in _environment_values(environ))


def _classes(text):
    """How many of lower case, upper case, digits and other characters ``text`` uses."""
    return sum((any(c.islower() for c in text), any(c.isupper() for c in text),
                any(c.isdigit() for c in text), any(not c.isalnum() for c in text)))


def _random_looking(run):
    """A long run that mixes digits with letters (a hash, a token), or letters whose
    cases and characters are spread as a random key's are, not as a CamelCase name's."""
    digits = sum(c.isdigit() for c in run)
    if len(run) >= 16 and 0 < digits < len(run):
        return True
    upper = sum(c.isupper() for c in run) / len(run)
    return len(run) >= 20 and 0.25 <= upper <= 0.75 and _entropy(run) > 3.7


def _entropy(text):
    counts = {}
    for char in text:
        counts[char] = counts.get(char, 0) + 1
    return -sum(n / len(text) * math.log2(n / len(text)) for n in counts.values())


def _environment_values(environ=None):
    """The values of the run's environment that could be secrets: long enough, and not
    the path of something that exists (a home, a working directory, a tool)."""
    environ = os.environ if environ is None else environ
    for value in environ.values():
        if len(value) >= MIN_ENV_VALUE and not _existing_path(value):
            yield value


@functools.lru_cache(maxsize=1024)
def _existing_path(value):
    try:
        return os.path.isabs(value) and os.path.exists(value)
    except (ValueError, OSError):
        return False
