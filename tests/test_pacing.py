"""The connection pool that sends a request when its start is due (crawler/handlers/pacing.py), in a reactor
of its own (a child process) against a real loopback server that logs when each request arrives.

The downloader's answer (how long a connected request waits) is scripted here; what it is in a job is tested
in tests/test_budget_distributed.py. What is tested: a request held on its connection arrives when its wait
is over, not before; a wait longer than ``HOLD_MAX`` closes the connection and connects again when the start
comes; a connection lost while it was held (a server closes an idle one) is made again; a download
cancelled during its wait (Scrapy's download timeout) sends nothing; and a kept-alive connection from the pool
(which Twisted hands out wrapped) is held the same way.
"""

from __future__ import annotations

import json
import subprocess
import sys

from crawler.demo.routes import Route, Web
from tests.conftest import TimedServer

CHILD = """
import json, sys, time
from scrapy.utils.reactor import install_reactor
install_reactor("twisted.internet.asyncioreactor.AsyncioSelectorReactor")
from twisted.internet import defer, reactor, task
from twisted.web.client import Agent, readBody
from crawler.handlers.pacing import HOLD_MAX, PacedConnectionPool

base = sys.argv[1].encode()
from scrapy.core.downloader.handlers.http11 import _LenientHTTP11ClientFactory

waits = {
    "held": [0.6, 0.0], "reconnected": [HOLD_MAX + 0.5], "kept": [0.6, 0.0], "dropped": [0.6, 0.0],
    "cancelled": [0.8, 0.0],
}
log = {}

class Pool(PacedConnectionPool):
    def _when_due(self, connection, *args):
        log.setdefault("kinds", []).append(type(connection).__name__)
        self.last = getattr(connection, "_clientProtocol", connection)
        return super()._when_due(connection, *args)

def paced(request):
    left = waits[request]
    if request == "dropped" and len(left) == 2:  # its connection is lost while it is held (the server closed it)
        reactor.callLater(0.2, pool.last.transport.loseConnection)
    return left.pop(0) if left else 0.0

pool = Pool(reactor, paced)
pool._factory = _LenientHTTP11ClientFactory  # Scrapy's protocol, as the download handler's pool has it
agent = Agent(reactor, pool=pool)

def get(name):
    pool.requesting = name  # as the handler does: the request whose connection is asked for next
    log[name] = {"sent": time.monotonic()}
    return agent.request(b"GET", base + b"/" + name.encode())

@defer.inlineCallbacks
def main():
    for name in ("held", "reconnected", "kept", "dropped"):  # "kept": the connection "held" left in the pool
        try:
            body = yield get(name).addCallback(readBody)
        except Exception as exc:  # said in the log, for the test to show
            log[name].update(body=repr(exc))
        else:
            log[name].update(done=time.monotonic(), body=body.decode())
    pending = get("cancelled")
    yield task.deferLater(reactor, 0.3, lambda: None)
    pending.cancel()
    try:
        yield pending
    except defer.CancelledError:
        log["cancelled"]["failed"] = "CancelledError"
    yield task.deferLater(reactor, 1.0, lambda: None)  # its wait would be over: nothing must be sent
    log["left"] = {name: left for name, left in waits.items()}
    print(json.dumps(log))
    reactor.stop()

reactor.callWhenRunning(main)
reactor.run()
"""


def test_a_connected_request_is_sent_when_its_start_is_due_and_not_when_cancelled() -> None:
    web = Web()
    for name in ("held", "reconnected", "kept", "dropped", "cancelled"):
        web.add(f"/{name}", Route(name.encode(), headers={"Content-Type": "text/plain"}))
    with TimedServer(web) as server:
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, server.url], capture_output=True, text=True, timeout=60, check=False
        )
        arrivals = dict((target, at) for at, target in server.log)
    assert proc.returncode == 0, proc.stderr[-3000:]
    log = json.loads(proc.stdout)
    answered = ("held", "reconnected", "kept", "dropped")
    assert [log[name]["body"] for name in answered] == list(answered), log
    # each waited what it was told before it reached the server (the pool asked again after the wait: 0)
    assert 0.6 <= arrivals["/held"] - log["held"]["sent"] < 1.5, (arrivals, log)
    assert 2.5 <= arrivals["/reconnected"] - log["reconnected"]["sent"] < 3.5, (arrivals, log)
    assert 0.6 <= arrivals["/kept"] - log["kept"]["sent"] < 1.5, (arrivals, log)
    assert log["left"]["held"] == log["left"]["kept"] == [] and log["left"]["reconnected"] == []
    assert "_RetryingHTTP11ClientProtocol" in log["kinds"], log  # a kept-alive connection was held as well
    # one lost while it was held: the request went on another connection, when its wait was over
    assert 0.6 <= arrivals["/dropped"] - log["dropped"]["sent"] < 1.5, (arrivals, log)
    # the cancelled one failed as cancelled, and never reached the server
    assert log["cancelled"].get("failed") == "CancelledError" and "/cancelled" not in arrivals, (arrivals, log)
