"""The docs stay true: every setting `pricesvc --help` knows is in docs/configuration.md with the same
default, the README opens with the two commands, and the README and design.md name every command
`pricesvc --help` lists and every module Package.swift builds."""

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


def commands_from_help(env) -> list[str]:
    usage = env.run("--help").stdout.split("settings (flag")[0]
    names = re.findall(r"^  pricesvc ([a-z][a-z-]*)\b", usage, flags=re.MULTILINE)
    assert len(names) >= 10, usage
    return sorted(set(names))


def modules_from_package() -> tuple[list[str], list[str]]:
    """Package.swift's Swift modules and its C shims (systemLibrary), tests and plugins left out."""
    package = (REPO / "Package.swift").read_text()
    swift = re.findall(r"\.(?:target|executableTarget)\(name: \"([A-Za-z]+)\"", package)
    shims = re.findall(r"\.systemLibrary\(name: \"([A-Za-z]+)\"", package)
    assert len(swift) >= 10 and shims, package
    return swift, shims


def test_the_readme_and_design_name_every_command_pricesvc_has(env):
    commands = commands_from_help(env)
    readme_row = next(line for line in (REPO / "README.md").read_text().splitlines()
                      if line.startswith("| `Sources/pricesvc` |"))
    design = (REPO / "docs/design.md").read_text()
    design_line = re.search(r"^pricesvc .*?(?=^\S)", design, flags=re.MULTILINE | re.DOTALL).group(0)
    assert [c for c in commands if f"`{c}`" not in readme_row] == [], readme_row
    assert [c for c in commands if not re.search(rf"[ :,]{re.escape(c)}[,;]", design_line)] == [], design_line


def test_the_readme_and_design_name_every_module_package_swift_builds():
    swift, shims = modules_from_package()
    readme = (REPO / "README.md").read_text()
    listed = set(re.findall(r"^\| `Sources/([A-Za-z*]+)` \|", readme, flags=re.MULTILINE))
    design = (REPO / "docs/design.md").read_text().split("```")[1]
    described = set(re.findall(r"^([A-Za-z*]+)\s", design, flags=re.MULTILINE))
    assert all(shim.startswith("C") for shim in shims) and "C*" in listed and "C*" in described
    assert sorted(set(swift) - listed) == [], "README's module table misses these"
    assert sorted(set(swift) - described) == [], "docs/design.md's module list misses these"
    assert sorted(listed - set(swift) - {"C*"}) == [], "README lists modules Package.swift does not build"
    assert sorted(described - set(swift) - {"C*", "Fuzz"}) == [], "design.md lists modules Package.swift does not build"
