"""The docs stay true: every setting `pricesvc --help` knows is in docs/configuration.md with the same
default, and the README opens with the two commands."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def settings_from_help(env) -> dict[str, str]:
    text = env.run("--help").stdout
    block = text.split("settings (flag, or environment variable; flags win):")[1]
    lines = [line for line in block.splitlines() if line.strip()]
    settings = {}
    for name_line, help_line in zip(lines[0::2], lines[1::2]):
        variable = name_line.split()[1]
        default = re.search(r"\(default (.*)\)$", help_line.strip())
        settings[variable] = default.group(1) if default else ""
    return settings


def test_every_setting_is_documented_with_its_default(env):
    documented = {}
    for row in (REPO / "docs/configuration.md").read_text().splitlines():
        cells = [cell.strip() for cell in row.split("|")]
        if len(cells) > 4 and cells[1].startswith("`PRICESVC_"):
            documented[cells[1].strip("`")] = cells[3].strip("`") if cells[3] != "(none)" else ""
    settings = settings_from_help(env)
    assert len(settings) >= 25
    assert documented == settings


def test_the_readme_opens_with_make_run_and_make_test():
    readme = (REPO / "README.md").read_text()
    first_block = readme.split("```")[1]
    assert "make run" in first_block and "make test" in first_block
    assert (REPO / ".ci/run").read_text().strip().endswith("make test")
