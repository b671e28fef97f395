"""The scale benchmark's rig (``bench_scale.py``): the realistic web in its own process, and cgroup v1 CPU groups.

A process is put in a group by starting it through ``in_group``: a shell that writes its own pid into the
group's ``cgroup.procs`` and then execs the command, so the command and all its children (the document
workers) are held to the group's quota. Groups are made on demand and removed with ``remove()``; what is
still in them then was started by the benchmark, and is killed first.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import realweb
from common import PYTHON, WORK

CGROUP_ROOT = Path("/sys/fs/cgroup/cpu")
#: The CFS period a group's quota is counted over, by default. The kernel's own default, 100 ms, lets a
#: process held to a quarter of a core run 25 ms at full speed and then stop for 75: neither the burst nor
#: the stop is what a slower machine does, and the stop holds a request already started for a good part
#: of a host's delay. Over 10 ms the quarter is spread as a slower machine spreads it (stops of 7.5 ms at
#: most). Figures: benchmarks/RESULTS.md, section 13.
PERIOD_US = 10_000


# --- cgroups --------------------------------------------------------------------------------------


class CpuGroups:
    """cgroup v1 CPU groups ``fc-bench-<pid>-<n>`` made on demand and all removed at the end."""

    def __init__(self) -> None:
        self.made: list[Path] = []

    def make(self, quota_us: int, period_us: int = PERIOD_US) -> Path:
        """A fresh group; ``quota_us`` per ``period_us``, -1 for no limit."""
        path = CGROUP_ROOT / f"fc-bench-{os.getpid()}-{len(self.made)}"
        path.mkdir()
        self.made.append(path)
        (path / "cpu.cfs_period_us").write_text(str(period_us))
        (path / "cpu.cfs_quota_us").write_text(str(quota_us))
        return path

    @staticmethod
    def pids(path: Path) -> list[int]:
        try:
            return [int(p) for p in (path / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def kill_all(self) -> None:
        """SIGKILL what is left in the groups: only processes this benchmark started live there."""
        for path in self.made:
            for pid in self.pids(path):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)

    def remove(self) -> None:
        for path in self.made:
            for _ in range(50):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:  # busy: a process still in it
                    self.kill_all()
                    time.sleep(0.1)
        self.made.clear()


def in_group(group: Path, argv: list[str]) -> list[str]:
    """``argv`` started by a shell that first moves itself into ``group``: its children inherit it."""
    return ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(group), *argv]


# --- the web ----------------------------------------------------------------------------------------


class Web:
    """realweb.py in a subprocess."""

    def __init__(self, plan: realweb.Plan, latency: float, logdir: Path) -> None:
        self.plan = plan
        self.logdir = logdir
        ready = WORK / f"realweb-{os.getpid()}.ready"
        ready.unlink(missing_ok=True)
        argv = [PYTHON, str(Path(realweb.__file__)), "--sites", str(plan.sites), "--hosts", str(plan.hosts)]
        argv += ["--large", ",".join(map(str, plan.large)), "--seed", str(plan.seed), "--latency", str(latency)]
        logdir.mkdir(parents=True, exist_ok=True)
        errors = logdir / "realweb.stderr"  # a file, not a pipe nobody reads: a full pipe would stall the server
        with open(errors, "wb") as err:
            self.proc = subprocess.Popen([*argv, "--logdir", str(logdir), "--ready", str(ready)], stderr=err)
        deadline = time.monotonic() + 120
        while not ready.exists() or not ready.read_text():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise SystemExit(f"realweb did not start: {errors.read_text(errors='replace')[-2000:]}")
            time.sleep(0.1)
        self.port = int(json.loads(ready.read_text())["port"])
        ready.unlink()

    def _get(self, path: str) -> None:
        with urllib.request.urlopen(f"http://{realweb.address(0)}:{self.port}{path}", timeout=10) as r:
            r.read()

    def start_run(self, name: str) -> Path:
        self._get(f"/__log?run={name}")
        return self.logdir / f"{name}.tsv"

    def flush(self) -> None:
        self._get("/__flush")

    def cpu(self) -> float:
        import psutil

        t = psutil.Process(self.proc.pid).cpu_times()
        return float(t.user + t.system)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
