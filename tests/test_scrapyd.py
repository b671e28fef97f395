"""Deploying to scrapyd and running the census there, three times, as a scheduled job would.

A real scrapyd 1.6 runs from this interpreter's environment (the project's .venv): that is how the
spider's dependencies reach a scrapyd host, since an egg carries none (docs/scheduling.md). The
project is copied and deployed with scrapyd-client's ``scrapyd-deploy``, which builds the egg through
``setup.py``; the target comes from a user-level ``scrapy.cfg`` (``$XDG_CONFIG_HOME``), the way a user
adds one without editing the project. The census is then scheduled through ``schedule.json`` against
the demo web on 127.0.0.1, whose feeds send ETag and Last-Modified:

1. a first run writes the dataset;
2. a second one, seconds later (hints ignored), gets a 304 for every feed and finds nothing new;
3. one feed gains an item, and a third run finds exactly that item new.
"""

from __future__ import annotations

import configparser
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

import pytest

from crawler.demo.webserver import WebServer, demo_root, demo_seeds, demo_web
from tests.conftest import REPO, read_table

EXPECTED = json.loads((demo_root() / "EXPECTED.json").read_text(encoding="utf-8"))
#: What ``scrapyd-deploy`` needs of the project: the packages, the build files, scrapy.cfg.
PROJECT_FILES = ("crawler", "pipelines", "schemas", "pyproject.toml", "setup.py", "scrapy.cfg", "README.md")
#: How long one scheduled job may take before the test fails (the crawl itself takes a few seconds).
JOB_TIMEOUT = 120.0
#: The feed that gains an item before the third run, and the item.
CHANGED_FEED = "/podcast-d/episodes.rss"
NEW_ITEM = (
    b"<item>\n      <title>Notes for episode 13</title>\n      <link>{{BASE}}/podcast-d/ep13#notes</link>\n"
    b"      <pubDate>Thu, 12 Jun 2025 06:30:00 GMT</pubDate>\n    </item>\n    "
)
#: Settings every run gets: a quick crawl of a local web (no AutoThrottle, short retry waits).
QUICK = {
    "AUTOTHROTTLE_ENABLED": "False",
    "CONCURRENT_REQUESTS_PER_DOMAIN": "8",
    "FEEDCENSUS_RETRY_BACKOFF_BASE": "0.05",
}


def path_of(url: str) -> str:
    """A URL of the demo web without its (per-run) origin."""
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def tail(path: Path, chars: int = 6000) -> str:
    return path.read_text(encoding="utf-8", errors="replace")[-chars:] if path.exists() else f"({path} does not exist)"


@dataclass
class Scrapyd:
    """A scrapyd process on 127.0.0.1 with its directories under ``root``."""

    root: Path
    port: int
    proc: subprocess.Popen[bytes]
    out: IO[bytes]
    env: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    @property
    def log(self) -> Path:
        """scrapyd's own log: the API calls, and one line per job that started, finished or died."""
        return self.root / "scrapyd.out"

    def job_log(self, job: str) -> Path:
        return self.root / "logs" / "feedcensus" / "census" / f"{job}.log"

    def call(self, endpoint: str, data: list[tuple[str, str]] | None = None, **query: str) -> dict[str, Any]:
        """GET (or POST ``data`` to) an endpoint of the JSON API; the answer, which must say status ok."""
        url = self.url + endpoint + ("?" + urllib.parse.urlencode(query) if query else "")
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        with urllib.request.urlopen(url, body, timeout=10) as resp:
            answer: dict[str, Any] = json.load(resp)
        assert answer.get("status") == "ok", f"{endpoint}: {answer}\n--- scrapyd log:\n{tail(self.log)}"
        return answer

    def wait(self, job: str, timeout: float = JOB_TIMEOUT) -> dict[str, Any]:
        """Wait until listjobs.json says the job finished; fail with its log after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            jobs = self.call("listjobs.json", project="feedcensus")
            for finished in jobs["finished"]:
                if finished["id"] == job:
                    return dict(finished)
            assert self.proc.poll() is None, f"scrapyd exited ({self.proc.returncode}):\n{tail(self.log)}"
            time.sleep(0.2)
        self.call("cancel.json", [("project", "feedcensus"), ("job", job)])
        pytest.fail(
            f"job {job} did not finish within {timeout:.0f} s\n--- job log:\n{tail(self.job_log(job))}"
            f"\n--- scrapyd log:\n{tail(self.log)}"
        )

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=5)
        self.out.close()


def start_scrapyd(root: Path) -> Scrapyd:
    """scrapyd from this interpreter's environment, configured by a scrapyd.conf in ``root`` (its cwd)."""
    assert importlib.util.find_spec("scrapyd") is not None, "scrapyd is not installed: pip install -e '.[test]'"
    home = root / "home"
    home.mkdir()
    # HOME in root: no ~/.scrapyd.conf or ~/.scrapy.cfg of this machine's user overrides the test's.
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    for _ in range(3):
        port = free_port()
        config = configparser.ConfigParser()
        config["scrapyd"] = {
            "bind_address": "127.0.0.1",
            "http_port": str(port),
            "eggs_dir": str(root / "eggs"),
            "logs_dir": str(root / "logs"),
            "items_dir": str(root / "items"),
            "dbs_dir": str(root / "dbs"),
            "poll_interval": "0.2",
        }
        with (root / "scrapyd.conf").open("w", encoding="utf-8") as f:
            config.write(f)
        out = (root / "scrapyd.out").open("ab")
        proc = subprocess.Popen(
            [sys.executable, "-m", "scrapyd"], cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT
        )
        server = Scrapyd(root, port, proc, out, env)
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            try:
                server.call("daemonstatus.json")
                return server
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.1)
        server.stop()  # the port was taken in between, or it did not come up: try another
    pytest.fail(f"scrapyd did not start:\n{tail(root / 'scrapyd.out')}")


@pytest.fixture(scope="module")
def scrapyd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scrapyd]:
    server = start_scrapyd(tmp_path_factory.mktemp("scrapyd"))
    try:
        yield server
    finally:
        server.stop()


def deploy(server: Scrapyd, work: Path) -> dict[str, Any]:
    """Copy the project and run ``scrapyd-deploy test`` in the copy; scrapyd's answer."""
    project = work / "project"
    for name in PROJECT_FILES:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, project / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        else:
            project.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, project / name)
    # The target, in the user's own scrapy.cfg: scrapyd-client reads it with the project's, whose
    # [deploy] section gives every target its project name.
    config_home = Path(server.env["XDG_CONFIG_HOME"])
    config_home.mkdir(parents=True, exist_ok=True)
    (config_home / "scrapy.cfg").write_text(f"[deploy:test]\nurl = {server.url}\n", encoding="utf-8")
    scrapyd_deploy = Path(sys.executable).with_name("scrapyd-deploy")
    assert scrapyd_deploy.exists(), "scrapyd-client is not installed: pip install -e '.[test]'"
    proc = subprocess.run(
        [str(scrapyd_deploy), "test"], cwd=project, env=server.env, capture_output=True, text=True, timeout=180
    )
    assert proc.returncode == 0, f"scrapyd-deploy failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    # scrapyd-deploy writes a setup.py of its own only when there is none: the project's was used.
    assert (project / "setup.py").read_bytes() == (REPO / "setup.py").read_bytes()
    answer: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return answer


def schedule(server: Scrapyd, job: str, seeds: Path, out: Path, **settings: str) -> str:
    """schedule.json: the census over the seeds file, writing job ``job`` of the dataset ``out``."""
    data = [("project", "feedcensus"), ("spider", "census"), ("jobid", job), ("seeds", str(seeds))]
    all_settings = {"FEEDCENSUS_OUT": str(out), "FEEDCENSUS_JOB_ID": job, **QUICK, **settings}
    data += [("setting", f"{name}={value}") for name, value in all_settings.items()]
    answer = server.call("schedule.json", data)
    assert answer["jobid"] == job
    return job


def run(server: Scrapyd, job: str, seeds: Path, out: Path, **settings: str) -> dict[str, list[dict[str, Any]]]:
    """Schedule one job, wait for it, check scrapyd and the job's log say it ended well; its rows by table."""
    schedule(server, job, seeds, out, **settings)
    finished = server.wait(job)
    assert finished["spider"] == "census" and finished["end_time"]
    deadline = time.monotonic() + 5  # scrapyd logs the exit before listing the job as finished; allow for flushing
    while f"Process finished: project='feedcensus' spider='census' job='{job}'" not in tail(server.log, 10**7):
        assert "Process died" not in tail(server.log, 10**7), f"job {job} died:\n{tail(server.log)}"
        assert time.monotonic() < deadline, f"scrapyd did not log job {job} as finished:\n{tail(server.log)}"
        time.sleep(0.1)
    log = server.job_log(job).read_text(encoding="utf-8")
    assert "Spider closed (finished)" in log, log[-6000:]
    assert "Traceback" not in log and "] ERROR:" not in log, log[-6000:]
    return {
        t: [r for r in read_table(out, t).to_pylist() if r["job_id"] == job] for t in ("feeds", "items", "fetch_log")
    }


def outcomes(rows: list[dict[str, Any]], paths: set[str]) -> dict[str, set[str]]:
    """The fetch_log outcomes of each of these URL paths, duplicates left out."""
    return {p: {r["outcome"] for r in rows if path_of(r["url"]) == p and r["outcome"] != "duplicate"} for p in paths}


def test_deploy_and_three_scheduled_runs(scrapyd: Scrapyd, tmp_path: Path) -> None:
    started = time.monotonic()
    answer = deploy(scrapyd, tmp_path)
    assert (answer["project"], answer["spiders"]) == ("feedcensus", 2), answer
    # The census, and the census over an archive's index (feedcensus commoncrawl's spider).
    assert scrapyd.call("listspiders.json", project="feedcensus")["spiders"] == ["census", "census-archive"]
    assert scrapyd.call("listversions.json", project="feedcensus")["versions"] == [answer["version"]]
    # The egg: the project's code and the demo web, and the entry point scrapyd finds the settings by.
    (egg,) = (scrapyd.root / "eggs" / "feedcensus").glob("*.egg")
    with zipfile.ZipFile(egg) as zf:
        names = set(zf.namelist())
        entry_points = zf.read("EGG-INFO/entry_points.txt").decode()
    assert {"crawler/spiders/census.py", "crawler/extensions/dataset.py", "schemas/tables.py"} <= names
    assert "crawler/demo/web/seeds.txt" in names and not any(n.startswith("tests/") for n in names)
    assert "[scrapy]\nsettings = crawler.settings" in entry_points

    web = demo_web()
    with WebServer(web) as site:
        seeds = tmp_path / "seeds.txt"
        seeds.write_text("\n".join(demo_seeds(site.url)) + "\n", encoding="utf-8")
        out = tmp_path / "out"

        # 1: the first run writes every feed of the demo web, each with the validators it was sent.
        first = run(scrapyd, "run1", seeds, out)
        feeds = {path_of(f["url"]): f for f in first["feeds"]}
        assert sorted(path_of(f["final_url"]) for f in first["feeds"]) == sorted(EXPECTED["expected_feeds"])
        assert len(first["items"]) == sum(f["item_count"] for f in EXPECTED["feeds"].values())
        assert all(f["etag"] and f["last_modified"] for f in feeds.values()), feeds
        validated = {p for p, f in feeds.items() if f["etag"] or f["last_modified"]}
        assert CHANGED_FEED in validated

        # 2: seconds later, hints ignored: every feed answers 304 to its validators; nothing is new.
        second = run(scrapyd, "run2", seeds, out, FEEDCENSUS_IGNORE_HINTS="True")
        assert outcomes(second["fetch_log"], validated) == {p: {"not_modified"} for p in validated}
        assert "is_new" in read_table(out, "items").schema.names
        assert [i for i in second["items"] if i["is_new"]] == []
        assert sorted(path_of(f["url"]) for f in second["feeds"]) == sorted(feeds)
        assert all(f["changed"] is False and f["new_items"] == 0 for f in second["feeds"]), second["feeds"]

        # 3: one feed gains an item (a new body: a new ETag and Last-Modified); only that item is new.
        before = web.get(CHANGED_FEED)
        assert before is not None
        changed = web.change(CHANGED_FEED, body=before.body.replace(b"<item>", NEW_ITEM, 1))
        assert changed.strong_etag() != before.strong_etag()
        third = run(scrapyd, "run3", seeds, out, FEEDCENSUS_IGNORE_HINTS="True")
        new = [i for i in third["items"] if i["is_new"]]
        assert [(path_of(i["feed_url"]), i["title"], i["link"]) for i in new] == [
            (CHANGED_FEED, "Notes for episode 13", f"{site.url}/podcast-d/ep13#notes")
        ]
        new_items = {path_of(f["url"]): f["new_items"] for f in third["feeds"]}
        assert new_items == {p: int(p == CHANGED_FEED) for p in feeds}
        assert outcomes(third["fetch_log"], validated) == {
            p: {"feed" if p == CHANGED_FEED else "not_modified"} for p in validated
        }
    assert time.monotonic() - started < 90
