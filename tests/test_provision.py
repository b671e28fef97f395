"""``make test`` on a fresh machine: scripts/provision.sh installs redis-server and Chromium when they are missing.

The script runs for real, with bash, but with a PATH of our making, so that it finds what each case needs and no
more: the machine's own redis-server (or Chromium) is hidden by leaving it out of that PATH. Two programs are stand-ins,
because the real ones must not run in a test: ``apt-get`` (a test may not install packages or reach the internet)
records its arguments and "installs" redis-server by writing an executable into that PATH, and fails for chromium as
a machine without that package would; ``id`` says root or not, so both branches run whoever runs the tests.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO

SCRIPT = REPO / "scripts" / "provision.sh"
BASH = shutil.which("bash") or "/bin/bash"
#: What the script itself runs, taken from the machine.
TOOLS = ("mktemp", "rm", "chmod")

FAKE_APT_GET = """#!{bash}
echo "$*" >> {calls}
case "$*" in
  *" install "*redis-server*) printf '#!{bash}\\n' > {bin}/redis-server; chmod +x {bin}/redis-server ;;
  *" install "*) echo "E: Unable to locate package ${{@: -1}}"; exit 100 ;;
esac
"""


@dataclass
class Run:
    code: int
    stdout: list[str]
    stderr: list[str]
    apt_calls: list[str]


def make_bin(tmp_path: Path, *, uid: int, apt: bool, present: tuple[str, ...] = ()) -> Path:
    """A folder to be the whole PATH: the tools, a stand-in ``id`` saying ``uid``, and the programs in ``present``."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in TOOLS:
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    executable(bin_dir / "id", f"#!{BASH}\necho {uid}\n")
    if apt:
        executable(bin_dir / "apt-get", FAKE_APT_GET.format(bash=BASH, calls=tmp_path / "apt-calls", bin=bin_dir))
    for name in present:
        executable(bin_dir / name, f"#!{BASH}\n")
    return bin_dir


def executable(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755)


def provision(tmp_path: Path, bin_dir: Path, **env: str) -> Run:
    proc = subprocess.run(
        [BASH, str(SCRIPT)],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            "PATH": str(bin_dir),
            "TMPDIR": str(tmp_path),
            "HOME": str(tmp_path),
            "FEEDCENSUS_TOOLS_DIR": str(tmp_path / "tools"),  # never the repository's .venv/tools
            **env,
        },
        check=False,
    )
    calls = tmp_path / "apt-calls"
    apt_calls = calls.read_text(encoding="utf-8").splitlines() if calls.exists() else []
    return Run(proc.returncode, proc.stdout.splitlines(), proc.stderr.splitlines(), apt_calls)


def test_root_with_apt_installs_what_is_missing_in_one_line(tmp_path: Path) -> None:
    run = provision(tmp_path, make_bin(tmp_path, uid=0, apt=True))
    assert run.code == 0
    assert run.stdout == [
        "make test: installing redis-server and chromium with apt-get (tests/test_frontier.py runs a real "
        "redis-server; tests/test_report_html.py renders the report in headless Chromium)"
    ]
    # the lists are updated once, then each package is installed on its own: chromium's failure spares redis-server
    assert [call.split()[-2:] for call in run.apt_calls] == [
        ["update", "-qq"],
        ["--no-remove", "redis-server"],
        ["--no-remove", "chromium"],
    ]
    # never a removal to make room: --no-remove refuses an install that would need one
    assert all(" install -y " in call and " --no-remove " in call for call in run.apt_calls[1:])
    # redis-server came; chromium did not, which one line says, with where apt-get's output is
    assert (tmp_path / "bin" / "redis-server").exists()
    assert len(run.stderr) == 1, run.stderr
    line = run.stderr[0]
    assert line.startswith("make test: chromium not installed (apt-get failed, its output is in ")
    assert "the Chromium test in tests/test_report_html.py will be skipped" in line
    assert line.endswith("install with: sudo apt-get install chromium")
    log = Path(line.split("its output is in ", 1)[1].split(")", 1)[0])
    assert "Unable to locate package chromium" in log.read_text(encoding="utf-8")


def test_root_with_apt_and_all_installed_says_nothing(tmp_path: Path) -> None:
    run = provision(tmp_path, make_bin(tmp_path, uid=0, apt=True, present=("redis-server", "chromium")))
    assert (run.code, run.stdout, run.stderr, run.apt_calls) == (0, [], [], [])


@pytest.mark.parametrize("chromium", ["chromium-browser", "google-chrome"])
def test_redis_server_named_by_env_and_another_chromium_count(tmp_path: Path, chromium: str) -> None:
    redis = tmp_path / "elsewhere" / "redis-server"
    redis.parent.mkdir()
    executable(redis, f"#!{BASH}\n")
    run = provision(tmp_path, make_bin(tmp_path, uid=0, apt=True, present=(chromium,)), REDIS_SERVER=str(redis))
    assert (run.code, run.stdout, run.stderr, run.apt_calls) == (0, [], [], [])


def test_not_root_says_in_one_line_what_fails_and_how_to_install(tmp_path: Path) -> None:
    run = provision(tmp_path, make_bin(tmp_path, uid=1000, apt=True))
    assert (run.code, run.stdout, run.apt_calls) == (0, [], [])
    assert run.stderr == [
        "make test: redis-server, chromium not installed (not root): tests/test_frontier.py will fail without "
        "redis-server (or set REDIS_SERVER=/path/to/redis-server); the Chromium test in tests/test_report_html.py "
        "will be skipped; install with: sudo apt-get install redis-server chromium"
    ]


def test_no_apt_get_or_told_not_to_install(tmp_path: Path) -> None:
    bin_dir = make_bin(tmp_path, uid=0, apt=False, present=("chromium",))
    run = provision(tmp_path, bin_dir)
    assert (run.code, run.stdout) == (0, [])
    assert len(run.stderr) == 1 and run.stderr[0].startswith("make test: redis-server not installed (no apt-get): ")
    assert run.stderr[0].endswith("install with: sudo apt-get install redis-server")

    executable(bin_dir / "apt-get", FAKE_APT_GET.format(bash=BASH, calls=tmp_path / "apt-calls", bin=bin_dir))
    run = provision(tmp_path, bin_dir, FEEDCENSUS_INSTALL="no")
    assert (run.code, run.stdout, run.apt_calls) == (0, [], [])
    assert len(run.stderr) == 1 and "redis-server not installed (FEEDCENSUS_INSTALL=no)" in run.stderr[0]


def test_the_test_command_provisions_and_ci_only_calls_it() -> None:
    test_sh = (REPO / "scripts" / "test.sh").read_text(encoding="utf-8")
    commands = [line for line in test_sh.splitlines() if line and not line.startswith("#")]
    assert commands.index("bash scripts/provision.sh") < next(i for i, c in enumerate(commands) if "pytest" in c)
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert [line for line in ci.splitlines()[1:] if line and not line.startswith("#")] == [
        "set -euo pipefail",
        'cd "$(dirname "$0")/.."',
        "make test",
    ]
    assert os.access(REPO / ".ci" / "run", os.X_OK)


def test_a_program_that_cannot_be_run_counts_as_missing(tmp_path: Path) -> None:
    """A redis-server on PATH that is not executable (hidden, a broken install) is missing: bash's `command -v`
    names it anyway, so the script checks that it is a file it can run."""
    bin_dir = make_bin(tmp_path, uid=0, apt=True, present=("chromium",))
    (bin_dir / "redis-server").write_text("", encoding="utf-8")  # mode 644: there, but not runnable
    run = provision(tmp_path, bin_dir)
    assert run.code == 0
    assert [call.split()[-1] for call in run.apt_calls] == ["-qq", "redis-server"]
    assert os.access(bin_dir / "redis-server", os.X_OK)  # the stand-in apt-get "installed" it
