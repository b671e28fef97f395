"""docs/limits.md lists every limit with its setting name; the politeness defaults hold."""

from __future__ import annotations

import re
from pathlib import Path

from crawler import settings

DOC = Path(__file__).resolve().parents[1] / "docs" / "limits.md"
SOURCE = Path(settings.__file__).read_text(encoding="utf-8")


def section(name: str) -> str:
    m = re.search(rf"# --- {name} -+\n(.*?)(?=\n# --- |\Z)", SOURCE, re.DOTALL)
    assert m is not None, name
    return m.group(1)


def test_every_limit_setting_is_documented() -> None:
    doc = DOC.read_text(encoding="utf-8")
    names = re.findall(r"^([A-Z][A-Z0-9_]+) = ", section("Limits") + section("Identity and politeness"), re.MULTILINE)
    names += ["FEEDCENSUS_OPML_MAX_INCLUDE_DEPTH", "FEEDCENSUS_ALLOW_PRIVATE_NETWORKS"]
    assert len(names) > 15
    missing = [n for n in names if f"`{n}`" not in doc]
    assert missing == []


def test_every_limit_setting_has_a_comment_saying_the_default() -> None:
    lines = section("Limits").splitlines()
    for i, line in enumerate(lines):
        if re.match(r"^[A-Z][A-Z0-9_]+ = ", line):
            comments = []
            j = i - 1
            while j >= 0 and lines[j].startswith("#"):
                comments.append(lines[j])
                j -= 1
            text = " ".join(comments)
            assert "default" in text.lower() or text.startswith("# feedcensus"), line


def test_documented_failure_outcomes_exist() -> None:
    from crawler.outcomes import FAILURE_OUTCOMES

    doc = DOC.read_text(encoding="utf-8")
    missing = [o for o in FAILURE_OUTCOMES if f"`{o}`" not in doc]
    assert missing == []


def test_politeness_defaults() -> None:
    assert settings.ROBOTSTXT_OBEY is True
    assert settings.AUTOTHROTTLE_ENABLED is True
    assert 1 <= settings.CONCURRENT_REQUESTS_PER_DOMAIN <= 4
    assert settings.FEEDCENSUS_CONTACT_URL.startswith("https://")
    assert settings.FEEDCENSUS_CONTACT_URL in settings.USER_AGENT
    assert settings.USER_AGENT.startswith("feedcensus/")
    assert 10 * 1024 * 1024 <= settings.DOWNLOAD_MAXSIZE <= 100 * 1024 * 1024  # tens of MB
    assert settings.DOWNLOAD_TIMEOUT <= 60
    assert settings.URLLENGTH_LIMIT == 0 and settings.FEEDCENSUS_MAX_URL_LENGTH == 8192
