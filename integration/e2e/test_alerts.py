"""docs/alerts.yml: the Prometheus rules are valid (`promtool check rules`),
each fires on the series it is about and not on healthy ones (`promtool test rules`). That every pricesvc
series they name is served is test_dashboard.py's check, which waits for the maintenance series."""

import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RULES = REPO / "docs/alerts.yml"


def _promtool() -> str:
    promtool = shutil.which("promtool")
    assert promtool, "promtool is missing: scripts/dev/install-deps.sh installs Debian's prometheus package"
    return promtool


def test_promtool_checks_the_alert_rules():
    result = subprocess.run([_promtool(), "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS: 7 rules found" in result.stdout, result.stdout


def test_each_alert_fires_on_its_series_and_not_on_healthy_ones():
    result = subprocess.run([_promtool(), "test", "rules", "alerts_test.yml"], capture_output=True, text=True,
                            timeout=120, cwd=REPO / "integration/alerts")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout

