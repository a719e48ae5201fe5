"""The catalog of root causes: one record per code, read by every other part.

The flake8 rules, the doctor's diagnoses, ``doctor explain``, the pytest plugin,
the generated docs (``docs/rules.md``) and the tests all take a cause's code,
title, message, explanation and doc from here, and from nowhere else.

Each cause is a folder, ``flake8_dlworker/causes/<CODE>/``:

- ``cause.md``: a front-matter block (``code``, ``title``, ``message``, ``fix_title``,
  ``static``, ``default_off``, ``references``, and the optional fields of
  :data:`FIELDS`: the cause's flags and the texts its failure prints), then the
  Markdown sections
  ``## Explanation``, ``## What it does``, ``## Why is this bad?``, ``## Fix safety``
  and ``## Options``. A line ``<!-- include: NAME -->`` stands for
  ``causes/_fragments/NAME.md``, text that several causes share.
- ``invalid/`` and ``valid/``: its examples, real programs, one set that the docs, the
  rule tests, the patch tests and the spawn runs all read. A documented example
  (``NN.py``) is short: an INVALID one must report the code, a VALID one must stay
  silent, and the first of each is the doc's Example and Use instead. A named one
  (``dlw108_sqlite.py``, ``clean_handle_lazy.py``) is a whole scenario whose
  ``# DLW1xx: COL`` markers are every finding flake8 must print for it, and which the
  doctor runs under spawn (``# doctor: DLW2xx`` marks the line it must name); the tests
  run the documented ones under spawn too (the docs' pair of each cause that crashes a
  run, or all of them with ``DLW_DOCUMENTED=all``). Examples
  import what they share from the causes folder (``example_data.Squares``, a tiny
  dataset; ``tiny_hf``, a tiny Hugging Face model). ``invalid/NAME.fix.diff`` is what
  ``doctor check --fix`` must do to the example.
- ``patches/NN.py``: the cases of the cause's patch maker, each with the diff it must
  produce in ``patches/NN.fix.diff``.
- the code that is the cause's own, found by its file name (:data:`PARTS`):
  ``rule.py`` its static rule (or its part of a shared one), ``diagnosis.py`` its
  runtime diagnosis rule, ``patch.py`` its patch maker. :func:`part` imports one on
  first use; the lint side asks only for ``rule``, the doctor for the others.

Importing this module must stay cheap for flake8: it reads only the front matter of
each ``cause.md``; the sections and the examples are read on first use.
"""
import os
import re

CAUSES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "causes")

#: the published docs/rules.md; each rule's section is at ``#`` + its code in lower case
RULES_DOC_URL = "https://github.com/flake8-dlworker/flake8-dlworker/blob/main/docs/rules.md"

#: cause.md's section headings and the Rule attributes they fill
SECTIONS = {
    "Explanation": "explanation",
    "What it does": "what_it_does",
    "Why is this bad?": "why_bad",
    "Fix safety": "fix_safety",
    "Options": "options",
}
_INCLUDE = re.compile(r"<!-- include: ([\w-]+) -->")
_DOCUMENTED = re.compile(r"^\d+\.py$")
#: the optional front-matter fields: what each one says about the cause. A list is
#: written one ``- item`` a line; a field that is absent is "no" or empty.
FIELDS = {
    "shared_rule": "NAME: the static rule of several causes that reports it "
                   "(flake8_dlworker/rules/NAME.py), where it has no rule.py of its own",
    "spawn_only": "yes: the static rule is silent under fork (nothing is pickled there)",
    "secondary": "yes: a static finding of it is reported beside another root cause",
    "generic": "yes, posix or windows: a bare 'worker exited unexpectedly' may mean it "
               "(everywhere, or only on that family of systems)",
    "notebook_fix": "yes: the notebook fix (doctor.patches.notebook) answers it",
    "notebook_script_order": "N: the notebook fix runs its maker on the cells' script, "
                             "the Nth",
    "pickle_kind": "what a worker cannot receive, as the pickling tracer and the static "
                   "pickling rule name it: lambda, local (defined in a function), main "
                   "(defined in __main__ only) or handle (an open resource)",
    "pickle_order": "N: the shared pickling diagnosis tries its signatures Nth; the last "
                    "one is what an unpicklable object the text names no cause of is",
    "signatures": "regular expressions of the error texts the doctor recognises as it",
    "crash_texts": "plain texts, any one of which a run of its examples prints",
    "log_lines": "regular expressions of the lines a log prints outside a traceback that "
                 "its diagnosis reads (the log parser keeps them)",
    "log_keys": "plain words, one of which each of its log_lines holds (the log parser's "
                "cheap first look)",
    "pytest_texts": "plain texts that name it to the pytest plugin, in the main process's "
                    "error (pytest_reads: main) or a worker's stderr (pytest_reads: worker)",
    "pytest_reads": "main or worker: where the pytest plugin looks for pytest_texts",
    "pytest_says": "what the pytest plugin says failed when pytest_texts match",
    "handles": "the calls that make a handle (pickle_kind: handle), one a line: "
               "'QUALNAME: how a message names it', then '; fork-unsafe', '; quiet when "
               "disable=' (a progress bar), '; pickles' (the worker fails to rebuild it), "
               "'; makes MODULE.CLASS' (what a function returns): flake8_dlworker.handles",
}
#: the modules a cause's folder may hold, by file name: what each one is
PARTS = {
    "rule": "its static rule, run by the flake8 plugin (no torch, no doctor)",
    "diagnosis": "its runtime diagnosis rule, run by the doctor on a run's evidence",
    "patch": "its patch maker: ``fix(source, where, facts)`` -> the fixed source or None",
}


class CatalogError(Exception):
    """A cause's files do not follow the layout above."""


class Rule:
    """One cause. The front matter's fields are plain attributes; the sections
    (``explanation``, ``what_it_does``, ``why_bad``, ``fix_safety``, ``options``) and
    the examples (``valid``, ``invalid``, ``example``, ``use_instead``) load on first use.
    """

    def __init__(self, folder, code, title, message, fix_title, static, default_off,
                 references):
        self.folder = folder
        self.code = code
        self.title = title
        #: flake8 message after the code, a ``str.format`` template; one line: cause, then fix.
        self.message = message
        self.fix_title = fix_title
        #: static: a flake8 rule exists (1xx); runtime-only causes (2xx) are False.
        self.static = static
        #: host-dependent rules are off unless selected (flake8 ``extend_default_ignore``).
        self.default_off = default_off
        self.references = references
        #: the optional fields of FIELDS, as written (a str, or a list of str)
        self.fields = {}
        self._sections = None
        self._examples = {}

    def __repr__(self):
        return "Rule(%s: %s)" % (self.code, self.title)

    def section(self, attribute):
        if self._sections is None:
            self._sections = _read_sections(os.path.join(self.folder, "cause.md"))
        return self._sections[attribute]

    def examples(self, kind):
        """The sources of the documented examples of one ``kind``, in file-name order."""
        if kind not in self._examples:
            self._examples[kind] = tuple(
                _read(path) for path in self.example_paths(kind, documented=True))
        return self._examples[kind]

    def example_paths(self, kind, documented=False):
        """``valid``, ``invalid`` or ``patches`` (the patch maker's own cases, each with
        the diff it must produce in ``NN.fix.diff``): the programs' paths, the documented
        ones (``NN.py``) first, then the named ones; only the documented ones when asked."""
        folder = os.path.join(self.folder, kind)
        if not os.path.isdir(folder):
            return []
        names = [n for n in sorted(os.listdir(folder))
                 if n.endswith(".py") and (_DOCUMENTED.match(n) or not documented)]
        return [os.path.join(folder, n) for n in names]

    def field(self, name, default=None):
        """An optional front-matter field (a key of FIELDS), or ``default``."""
        if name not in FIELDS:
            raise KeyError(name)
        return self.fields.get(name, default)

    def flag(self, name):
        return self.field(name, "no") == "yes"

    def texts(self, name):
        """A list field (``signatures``, ``crash_texts``, ``pytest_texts``) as a tuple."""
        value = self.field(name, ())
        return (value,) if isinstance(value, str) else tuple(value)

    def has(self, name):
        """True when the cause's folder holds the module ``name`` (a key of PARTS)."""
        return os.path.isfile(os.path.join(self.folder, name + ".py"))

    def module(self, name):
        """The dotted name of the cause's own module ``name``
        (``flake8_dlworker.causes.<CODE>.patch``), or None where the cause has none. The
        catalog imports none of them: the static rules are the plugin's to import, the
        diagnosis rules and patches the doctor's (:func:`part`)."""
        if name not in PARTS:
            raise KeyError(name)
        if not self.has(name):
            return None
        return "%s.causes.%s.%s" % (__package__, self.code, name)

    #: two to five plain sentences, used by the doctor's ``explanation``.
    explanation = property(lambda self: self.section("explanation"))
    # ruff's doc sections, Markdown.
    what_it_does = property(lambda self: self.section("what_it_does"))
    why_bad = property(lambda self: self.section("why_bad"))
    fix_safety = property(lambda self: self.section("fix_safety"))
    options = property(lambda self: self.section("options"))
    #: Fixit-style documented examples: VALID stay silent, INVALID must report this code.
    valid = property(lambda self: self.examples("valid"))
    invalid = property(lambda self: self.examples("invalid"))
    example = property(lambda self: self.invalid[0])
    use_instead = property(lambda self: self.valid[0])


def _read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _front_matter(path):
    """The ``key: value`` lines (``- item`` lines make a list) between the two ``---``."""
    fields, key = {}, None
    with open(path, encoding="utf-8") as handle:
        if handle.readline().rstrip("\n") != "---":
            raise CatalogError("%s: no front matter" % path)
        for line in handle:
            line = line.rstrip("\n")
            if line == "---":
                return fields
            if line.startswith("- ") and isinstance(fields.get(key), list):
                fields[key].append(line[2:].strip())
            else:
                key, _, value = line.partition(":")
                value = value.strip()
                fields[key] = value if value else []
    raise CatalogError("%s: the front matter is not closed" % path)


def _read_sections(path):
    text = _read(path)
    body = text.split("\n---\n", 1)[1]
    sections, name, lines, fenced = {}, None, [], False
    for line in body.split("\n") + ["## "]:
        if line.startswith("```"):
            fenced = not fenced
        if not fenced and line.startswith("## "):
            if name is not None:
                sections[SECTIONS[name]] = _section_text(name, "\n".join(lines))
            name, lines = line[3:], []
            if name and name not in SECTIONS:
                raise CatalogError("%s: unknown section %r" % (path, name))
        else:
            lines.append(line)
    missing = set(SECTIONS.values()) - set(sections)
    if missing:
        raise CatalogError("%s: missing sections %s" % (path, ", ".join(sorted(missing))))
    return sections


def _section_text(name, text):
    text = _INCLUDE.sub(lambda m: _read(os.path.join(CAUSES, "_fragments", m.group(1) + ".md"))
                        .strip("\n"), text).strip("\n")
    if name == "Explanation":  # a plain paragraph, wrapped in the file: one line of text
        return " ".join(text.split())
    return text


def _flag(path, fields, key):
    value = fields.get(key, "no")
    if value not in ("yes", "no"):
        raise CatalogError("%s: %s must be yes or no, not %r" % (path, key, value))
    return value == "yes"


_REQUIRED = {"code", "title", "message", "fix_title", "static", "default_off", "references"}


def _load():
    rules = {}
    for code in sorted(os.listdir(CAUSES)):
        folder = os.path.join(CAUSES, code)
        path = os.path.join(folder, "cause.md")
        if not os.path.isfile(path):
            continue
        fields = _front_matter(path)
        if fields.get("code") != code:
            raise CatalogError("%s: code %r is not its folder's name" % (path, fields.get("code")))
        rule = rules[code] = Rule(folder, code, fields["title"], fields["message"],
                                  fields["fix_title"], _flag(path, fields, "static"),
                                  _flag(path, fields, "default_off"),
                                  tuple(fields.get("references") or ()))
        unknown = set(fields) - set(FIELDS) - _REQUIRED
        if unknown:
            raise CatalogError("%s: unknown fields %s" % (path, ", ".join(sorted(unknown))))
        rule.fields = {key: value for key, value in fields.items() if key in FIELDS}
    return rules


RULES = _load()  # code -> Rule, in code order


def get(code):
    return RULES[code]


def module(code, name):
    """The dotted name of ``code``'s own module ``name`` (see :data:`PARTS`), or None:
    none, or no such code."""
    rule = RULES.get(code)
    return rule.module(name) if rule is not None else None


def having(name):
    """The codes whose folder holds the module ``name``, in code order."""
    return tuple(code for code, rule in RULES.items() if rule.has(name))


def code_for(name, value):
    """The one code whose field ``name`` is ``value`` (``code_for("pickle_kind", "lambda")``)."""
    found = flagged(name, value)
    if len(found) != 1:
        raise CatalogError("%d causes have %s: %s" % (len(found), name, value))
    return found[0]


def flagged(name, value="yes"):
    """The codes whose field ``name`` is ``value``, in code order."""
    return tuple(code for code, rule in RULES.items() if rule.field(name) == value)


def ordered(name):
    """The codes that have the number field ``name``, in its order."""
    found = [(int(rule.field(name)), code) for code, rule in RULES.items()
             if rule.field(name) is not None]
    return tuple(code for _, code in sorted(found))
