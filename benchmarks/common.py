"""Shared helpers for the benchmark scripts: paths, the machine description, tables, measured subprocesses.

Standard library plus psutil (declared in pyproject's ``bench`` extra).
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
WORK = BENCH_DIR / ".work"  # gitignored scratch space: generated webs, crawl outputs, the peer venv
CORPUS = REPO.parent / "shared" / "corpus"
PYTHON = sys.executable
VENV_BIN = Path(sys.executable).parent
FEEDCENSUS = str(VENV_BIN / "feedcensus")

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def compile_project() -> None:
    """Write the project's bytecode (``__pycache__``) before anything is timed, as installing a package does.

    The project is installed editable, so its modules are compiled from source at import unless
    ``__pycache__`` is there; with ``PYTHONDONTWRITEBYTECODE`` set (as on some machines) that is every
    run, in the crawling process and in every document worker (about 0.2 s of a crawl's start),
    while Scrapy, in site-packages, has its bytecode from its install. Compiled here, every
    contender starts from bytecode. (py_compile writes whatever that variable says.)"""
    import compileall

    for package in ("crawler", "pipelines", "schemas"):
        compileall.compile_dir(REPO / package, quiet=1)


def version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def total_ram_gib() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return float("nan")


def machine_lines() -> list[str]:
    """The machine description RESULTS.md starts with."""
    pkgs = ["scrapy", "twisted", "lxml", "pyarrow", "fastfeedparser", "feedparser", "psutil"]
    return [
        f"- Date: {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}",
        f"- CPU: {cpu_model()}, {os.cpu_count()} logical cores ({platform.machine()})",
        f"- RAM: {total_ram_gib():.1f} GiB",
        f"- OS: {platform.system()} {platform.release()}",
        f"- Python: {platform.python_version()} ({platform.python_implementation()})",
        "- Packages: " + ", ".join(f"{p} {version(p)}" for p in pkgs),
        f"- feedcensus at commit: {git_head()}",
    ]


def git_head() -> str:
    """The commit measured, and whether the working tree had changes on top of it (read-only git calls)."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
        )
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "crawler", "pipelines", "schemas"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head.stdout.strip() + (" + uncommitted changes in crawler/pipelines/schemas" if dirty.stdout.strip() else "")


def md_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table (also what the scripts print: it reads fine in a terminal)."""
    cells = [[str(c) for c in headers], *[[str(c) for c in r] for r in rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    out = ["| " + " | ".join(c.ljust(w) for c, w in zip(cells[0], widths, strict=True)) + " |"]
    out.append("| " + " | ".join("-" * w for w in widths) + " |")
    out.extend("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) + " |" for r in cells[1:])
    return "\n".join(out)


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


@dataclass(slots=True)
class Measured:
    """What one measured subprocess cost."""

    argv: list[str]
    returncode: int
    wall: float
    user: float
    sys: float
    max_rss_mib: float  # the kernel's high-water mark for the process (ru_maxrss)
    rss_samples: list[tuple[float, float]] = field(default_factory=list)  # (seconds, MiB) polled
    stdout: str = ""
    stderr: str = ""

    @property
    def cpu(self) -> float:
        return self.user + self.sys


#: Runs argv in a grandchild and writes its own rusage as JSON to argv[1]. Needed because the kernel starts an
#: exec'd child's ru_maxrss at the RSS of the process it was forked from: measured straight from a benchmark
#: process that holds 200 MB of corpus, every crawler would "peak" at 200 MB. This wrapper is ~10 MB.
_WRAPPER = """
import json, os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, ru = os.wait4(pid, 0)
with open(sys.argv[1], "w") as f:
    json.dump({"user": ru.ru_utime, "sys": ru.ru_stime, "maxrss_kib": ru.ru_maxrss}, f)
sys.exit(os.waitstatus_to_exitcode(status) & 0xFF)
"""


def run_measured(
    argv: Sequence[str], *, env: dict[str, str] | None = None, cwd: Path | None = None, sample_every: float = 0.5
) -> Measured:
    """Run a command to the end: wall time, its own user+sys CPU and peak RSS (wait4), RSS samples (psutil).

    The project's bytecode is written first (:func:`compile_project`; a few ms when it is up to date)."""
    import json

    import psutil

    compile_project()

    WORK.mkdir(parents=True, exist_ok=True)
    out_path = WORK / f".out-{os.getpid()}-{time.monotonic_ns()}"
    usage_file = Path(f"{out_path}.usage")
    with open(f"{out_path}.stdout", "wb") as so, open(f"{out_path}.stderr", "wb") as se:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [PYTHON, "-c", _WRAPPER, str(usage_file), *argv], stdout=so, stderr=se, env=env, cwd=cwd
        )
        samples: list[tuple[float, float]] = []
        done = threading.Event()

        def poll() -> None:
            try:
                p = psutil.Process(proc.pid)
                while not done.wait(sample_every):
                    children = p.children(recursive=True)
                    if children:  # the wrapper alone, before exec or after the end, is not the crawler
                        rss = sum(c.memory_info().rss for c in children)
                        if rss:  # 0: the crawler has ended and is not yet reaped (a zombie has no memory)
                            samples.append((time.perf_counter() - start, rss / 2**20))
            except psutil.Error:
                pass

        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        returncode = proc.wait()
        wall = time.perf_counter() - start
        done.set()
        poller.join()
    usage = json.loads(usage_file.read_text()) if usage_file.exists() else {"user": 0.0, "sys": 0.0, "maxrss_kib": 0}
    stdout = Path(f"{out_path}.stdout").read_text(errors="replace")
    stderr = Path(f"{out_path}.stderr").read_text(errors="replace")
    for suffix in (".stdout", ".stderr", ".usage"):
        Path(f"{out_path}{suffix}").unlink(missing_ok=True)
    return Measured(
        argv=list(argv),
        returncode=returncode,
        wall=wall,
        user=usage["user"],
        sys=usage["sys"],
        max_rss_mib=usage["maxrss_kib"] / 1024,
        rss_samples=samples,
        stdout=stdout,
        stderr=stderr,
    )


def tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])
