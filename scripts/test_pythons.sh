#!/usr/bin/env bash
# The lint side, `doctor check` and `doctor explain` on other Pythons, without torch:
#   bash scripts/test_pythons.sh [VERSION ...]      (default: 3.9 3.13)
# Each version gets a venv of its own, .venv-VERSION, with the project and its test
# tools but no torch; the tests that run real DataLoader workers skip there (tests/needs.py).
set -euo pipefail
cd "$(dirname "$0")/.."
TESTS="tests/test_flake8_plugin.py tests/test_fixtures_flake8.py tests/test_rule_examples.py
       tests/test_flow.py tests/test_explain.py tests/test_explain_untrusted.py
       tests/test_logparse.py tests/test_check_formats.py tests/test_platforms.py
       tests/test_generated_code.py tests/test_stdlib.py tests/test_docs.py
       tests/test_notebook_check.py"

find_python() {
    # pyenv's versions first: its shim on PATH answers only for the selected versions
    local version=$1 root=${PYENV_ROOT:-$HOME/.pyenv} candidate
    for candidate in $(ls -d "$root"/versions/"$version".* 2> /dev/null | sort -V -r) ""; do
        if [ -n "$candidate" ] && "$candidate/bin/python$version" -c pass 2> /dev/null; then
            echo "$candidate/bin/python$version"
            return
        fi
    done
    if "python$version" -c pass 2> /dev/null; then
        command -v "python$version"
        return
    fi
    echo "test_pythons: no working python$version under $root/versions or on PATH" >&2
    return 1
}

for version in "${@:-3.9 3.13}"; do
    for v in $version; do
        python=$(find_python "$v")
        venv=.venv-$v
        if [ ! -x "$venv/bin/python" ]; then
            "$python" -m venv "$venv"
            "$venv/bin/pip" install -q -e . pytest pytest-xdist hypothesis hypothesmith jsonschema
        fi
        echo "== Python $v ($python)"
        # shellcheck disable=SC2086
        "$venv/bin/python" -m pytest -q -p no:cacheprovider -n auto $TESTS
    done
done
