"""Files of a folder over HTTP on 127.0.0.1, answering Range requests (as S3 and Common Crawl's endpoint do).

The tests and benchmarks of ``feedcensus commoncrawl`` serve WARC files with it: ``Range: bytes=a-b``
gets a 206 with those bytes, no Range the whole file, a missing file a 404. ``requests`` lists what
was asked (path, Range header).
"""

from __future__ import annotations

import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


class RangeServer:
    """Files of a folder over HTTP on 127.0.0.1, answering ``Range: bytes=a-b`` with 206 (as S3 and Common Crawl do)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.requests: list[tuple[str, str | None]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                outer.requests.append((self.path, self.headers.get("Range")))
                path = (outer.folder / self.path.lstrip("/").split("?")[0]).resolve()
                if not path.is_file() or not path.is_relative_to(outer.folder.resolve()):
                    self.send_error(404)
                    return
                size = path.stat().st_size
                start, end = 0, size - 1
                wanted = re.fullmatch(r"bytes=(\d+)-(\d+)", self.headers.get("Range") or "")
                if wanted:
                    start, end = int(wanted[1]), min(int(wanted[2]), size - 1)
                    self.send_response(206)
                    self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
                else:
                    self.send_response(200)
                with path.open("rb") as fh:
                    fh.seek(start)
                    data = fh.read(max(end - start + 1, 0))
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> RangeServer:
        self.thread.start()
        return self

    def __enter__(self) -> RangeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
