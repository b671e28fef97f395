"""A real ``redis-server`` for tests: on a free 127.0.0.1 port, with its data in a throwaway folder.

``RedisServer`` is a context manager with ``.url``, ``.stop()`` (SIGTERM: it writes its
append-only file and exits), ``.kill()`` (SIGKILL), ``.restart()`` (same port, same folder:
the data survives through ``--appendonly yes``; ``keep_data=False`` loses it) and ``.start()``. ``redis_server`` is the
pytest fixture; import it into a test module. No mocks: when ``redis-server`` is not
installed the tests that need it fail and say so (``apt-get install redis-server``;
``.ci/run`` installs it), they are never skipped.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from urllib.parse import quote

import pytest

#: Where Debian installs it; ``REDIS_SERVER`` names another binary.
DEBIAN_REDIS = "/usr/bin/redis-server"
START_TIMEOUT = 10.0


def redis_server_binary() -> str:
    """The redis-server to run; fails the calling test (never skips it) when there is none."""
    for candidate in (os.environ.get("REDIS_SERVER"), shutil.which("redis-server"), DEBIAN_REDIS):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    pytest.fail(
        "redis-server is not installed: the frontier tests need a real one "
        "(apt-get install redis-server, which `make test` does when run as root; or set REDIS_SERVER=/path/to/redis-server)",
        pytrace=False,
    )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """One redis-server process on 127.0.0.1 (see the module's docstring)."""

    def __init__(self, folder: str | os.PathLike[str] | None = None, *, password: str | None = None) -> None:
        self.binary = redis_server_binary()
        self._own_folder = folder is None
        self.folder = Path(folder) if folder is not None else Path(tempfile.mkdtemp(prefix="feedcensus-redis-"))
        self.folder.mkdir(parents=True, exist_ok=True)
        self.password = password
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        auth = f":{quote(self.password, safe='')}@" if self.password else ""
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    @property
    def log(self) -> Path:
        return self.folder / "redis.log"

    def start(self) -> RedisServer:
        if self.proc is not None and self.proc.poll() is None:
            return self
        args = [
            self.binary,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--dir", str(self.folder),
            "--save", "",
            "--appendonly", "yes",
            "--daemonize", "no",
            "--logfile", str(self.log),
        ]  # fmt: skip
        if self.password:
            args += ["--requirepass", self.password]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                stderr = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
                raise RuntimeError(f"redis-server exited with {self.proc.returncode}: {stderr}{self._log_tail()}")
            if self._answers():
                return
            time.sleep(0.02)
        self.kill()
        raise RuntimeError(f"redis-server did not answer on 127.0.0.1:{self.port} within {START_TIMEOUT:g} s")

    def _answers(self) -> bool:
        """Whether it answers a PING (an auth error counts: it is up and has loaded its data)."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                reply = sock.recv(64)
        except OSError:
            return False
        return reply.startswith((b"+PONG", b"-NOAUTH"))

    def _log_tail(self) -> str:
        try:
            return "\n" + self.log.read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def stop(self) -> None:
        """SIGTERM: redis-server writes its append-only file and exits."""
        self._end(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL: gone at once."""
        self._end(signal.SIGKILL)

    def restart(self, *, keep_data: bool = True) -> RedisServer:
        """Stop, then start again on the same port with the same folder: its data comes back, unless
        ``keep_data=False`` (its data files are deleted first, as on a server run without persistence)."""
        self.stop()
        if not keep_data:
            for path in self.folder.iterdir():
                if path.name.startswith(("appendonly", "dump")):
                    shutil.rmtree(path) if path.is_dir() else path.unlink()
        return self.start()

    def _end(self, sig: signal.Signals) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(sig)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()

    def cleanup(self) -> None:
        self.kill()
        if self._own_folder:
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.cleanup()


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A fresh redis-server for one test, its data under the test's tmp_path."""
    folder = tmp_path / "redis"
    folder.mkdir()
    with RedisServer(folder) as server:
        yield server
