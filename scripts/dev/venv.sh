#!/usr/bin/env bash
# The Python virtual environment of the test suites (.venv, from integration/e2e/requirements.txt on PyPI), made
# again only when the requirements change. Used by make test (in the background, while Swift builds) and
# make fuzz.
set -euo pipefail
cd "$(dirname "$0")/../.."
wanted=$(sha256sum integration/e2e/requirements.txt | cut -c1-64)
if [ -x .venv/bin/pytest ] && [ "$(cat .venv/.requirements-sha 2>/dev/null)" = "$wanted" ]; then
  exit 0
fi
rm -rf .venv
python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -r integration/e2e/requirements.txt
echo "$wanted" >.venv/.requirements-sha
