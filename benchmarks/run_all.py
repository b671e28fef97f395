"""Run the benchmarks (issue 7, and the sections added since) and rewrite ``benchmarks/RESULTS.md``.

    /work/main/.venv/bin/python benchmarks/run_all.py            # everything, ~30-40 minutes
    /work/main/.venv/bin/python benchmarks/run_all.py --quick    # small sizes, a few minutes
    /work/main/.venv/bin/python benchmarks/run_all.py --only parse,peer

Each benchmark prints its tables as it ends. ``--only`` rewrites only the sections it ran and keeps
the others from the previous RESULTS.md (each section says when it was measured).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from common import BENCH_DIR, WORK, machine_lines, md_table

RESULTS = BENCH_DIR / "RESULTS.md"
SECTIONS = [
    "parse",
    "crawl",
    "memory",
    "peer",
    "incremental",
    "distributed",
    "capture",
    "archive",
    "profile",
    "scaling",
    "stages",
    "figures",
    "census",
    "scale",
    "atomchecks",
]
TITLES = {
    "parse": "1. Parse path vs peers and the lxml limit",
    "crawl": "2. Crawl throughput vs raw Scrapy",
    "memory": "3. Memory as the work grows",
    "peer": "4. Against the peer survey tool",
    "incremental": "5. What a re-crawl costs (issue 12)",
    "distributed": "6. Distributed crawls: one Redis frontier, one and two processes (issue 13)",
    "capture": "7a. What WARC capture costs a crawl (issue 14)",
    "archive": "7b. Reading archives: WARC readers, replay, and the census over an index (issue 14)",
    "profile": "8. The reactor thread, with the per-feed work on it and in worker processes (issue 15)",
    "scaling": "9. Cores and document workers (issue 15)",
    "stages": "10. The per-feed path stage by stage, before the architecture refactor and now (issue 10)",
    # no runner: written by hand, kept as it is by every run
    "figures": "11. Figures that were in code comments (issue 38)",
    "census": "12. A census of listed sites three ways: every record, feed records, archived pages + live feeds (issue 39)",
    "scale": "13. Scale and politeness on a realistic web (issue 41)",
    "atomchecks": "14. What the Atom checks and the HTML security checks cost (issue 40)",
}

ANALYSIS = {
    "parse": """\
Reading the figures. fastfeedparser 0.6.5 is faster than a bare `lxml.etree.fromstring` of the same
bytes: it lifts large CDATA sections out before libxml2 sees them, reads entries with a compiled core
(`fastfeedparser/_core.abi3.so`) and parses with `recover=True` only. On this machine it runs well above
the ~130-165 MB/s the corpus README quotes, and that moves the 0.5x target close to the floor: the
budget line above shows how much of a 0.5x round building the trees alone takes. Our path then also
walks every element for the tally, runs the profile checks (and the RSS 2.0 and namespace rules) and
builds rows and Arrow batches. The 25x-feedparser target is met by a wide margin. In the profile,
`_parse_strict` is mostly libxml2 itself, `_read_item` and `_read_children` are the one-pass walk and
tally (each element sent to its handler through a table), `walk_scope` (in `checks/walk.py`) runs the
profile rules of one scope, `bench_parse.py (<dictcomp>)` is `pa.RecordBatch.from_pylist` for the
round's rows.

Why 0.5x is out of reach here. Building the lxml trees alone takes about two thirds of what a 0.5x round
may take, which leaves the walk, tally, checks and rows of the round's 68,000 elements a third of it,
about 1.5 us an element; ours spends about 11 us an element beyond building the tree. Tried on 2026-11-24:
compiling the parser and the checks' walk (pipelines/document/feedparse.py, checks/walk.py) with mypyc,
which turns the project's own typed Python into a C extension. Benchmark 10 (`bench_stages.py`, the
plain and the compiled tree side by side, 5 rounds): 1,317 -> 1,052 ms a round, 0.23x -> 0.30x of
fastfeedparser, but with 35 % fewer item rows: the compiled modules enforce the annotations at run time
and failed on some feeds. Even if made exact, that is 1.25x, not the 2.2x the target needs; a core
written in C or Rust is what fastfeedparser has, and what this project (pure Python on lxml, by its
design) does not.
""",
    "crawl": """\
Reading the figures. The machine has 2 cores and may be shared with other work during a run (the
load averages are in the table), so wall-clock rates move from run to run; CPU per response is the steadier figure and
the "per CPU-second" ratio is what each crawler reaches on one core of its own. Both crawlers are
bound by their reactor thread, which is never idle waiting for the network (the server is never the
bottleneck: its CPU is a small fraction of either crawler's); ours also keeps a second core partly busy
with its document worker, so a machine whose cores are shared with other work slows ours more.
Ours does strictly more per response: autodiscovery on every page, parse + tally + 65 checks on every
feed, and rows to Parquet, where the bare spider drops the body. With the project's settings the bare
spider runs at 3-5x the ~12,000 pages/min the issue quotes for this kind of machine.

Where the gap to the bare spider comes from. Both crawlers are bound by their reactor thread, and the
`shaped` reference splits the gap. Scrapy alone, with the census's shape (an item and the feed's
request from every home page, an item from every feed) and none of its work, reaches the shaped / bare
column: its spider middlewares, scraper, duplicate filter and scheduler for those items and requests
cost that much before the census does anything. On top of that, ours / shaped is the census's own
reactor work: reading a response's headers and sniffing its first 4 KB, a fetch record per page,
the request builder and the earlier jobs' word on each feed, sending each page and feed to a document
worker and taking its answer back (pickling: about 40 us a page and 100 us a feed), the feed pipeline's
rows, scheduling and counts, and the start of a crawl (imports, the dataset and the document worker:
a 1-site crawl takes 2.4 s of CPU, the bare spider 1.15 s). With shaped at 0.8-0.9x bare, 0.75x bare
needs ours / shaped at 0.83-0.94x, up from 0.70-0.85x in the runs of 2026-11-23. The CPU of the two cores is also shared with the document worker
and the loopback server: ours spends more CPU per response in all than a 2-core machine gives a 0.75x
rate, so moving work from the reactor to the workers alone cannot reach the target either.

What is on the reactor thread now. The per-feed path (parse, tally, profile checks, rows, and the
body's hash on a feed's first fetch) and the reading of every HTML page for its feed links and facts
(autodiscovery's tokenizer, platform markers, link judging) run in document worker processes
(`FEEDCENSUS_WORKERS`, by default cores - 1: one on this 2-core machine; the "+ workers" CPU). The
pool is driven from the reactor's event loop (pipelines/document/pool.py): the reactor writes each
task to a worker's pipe and reads its answer, no thread waits for it, and a worker holds up to 8
tasks so it never waits for the reactor between two. What is left on the reactor is Scrapy's
engine, downloader and scraper, its item machinery for a page's and a feed's item, the
spider-middleware chain, scheduling the feed request a page yields, pickling tasks and unpickling
answers, and the project's pipelines (benchmark 8 lists the functions). A feed's items,
element_usage and conformance rows come back as Arrow record batches the worker built, which the
dataset writer decodes at its commit; only its feeds and fetch_log rows are Python values here. The bare spider yields no item
and schedules no request from a response.

The crawl sets Python's thread switch interval to 0.5 ms while its engine runs
(`FEEDCENSUS_SWITCH_INTERVAL`, crawler/extensions/switching.py): the reactor lets go of the
interpreter lock at every socket call, and a helper thread that took it (now only the dataset's
commit thread) kept it for up to Python's 5 ms; the bare and shaped spiders get 0.5 ms too. An
earlier run measured it against Python's 5 ms with the what-if columns (`bench_crawl.py --tuned`,
still there): 0.96-1.04x, within the noise. Holding every commit to the end of a crawl did not
change the rate either (paired 5,000-site crawls: 14,332 vs 14,687 responses a minute), so the
commit thread does not hold the reactor back.

Changes of 2026-11-23 (since the run before), in `crawler/settings.py`: Scrapy's `DepthMiddleware` and
`MetaCopyDetectionMiddleware` (spider middlewares that wrap every item and request a response yields)
and its `OffsiteMiddleware` (parses every request's URL, for a spider's `allowed_domains`) are off: the
census keeps its own depth, builds each request's meta afresh and sets no `allowed_domains`. Paired
5,000-site crawls, 3 rounds: 4.53 -> 4.33 ms of crawl-process CPU a response, +4 % rate. And pyarrow no
longer imports pandas in the crawling process (it did at the dataset's first commit; the document
workers already refused it): 0.5 s less CPU at every crawl's start and about 35 MiB less peak memory
(pipelines/dataset/nopandas.py). Scrapy's `RemoteControl` is left out of `EXTENSIONS_BASE` (Scrapy
imports every listed extension, and its module imports aiohttp: 0.25 s), and the crawling process no
longer imports the parser and the profile checks, which with workers on only the workers run (0.1 s).
A 1-site crawl now takes 2.15 s, against 3.0 s before the last three. Later that day: a crawl on one
machine no longer imports the shared frontier's module (redis and scrapy_redis, 0.1 s of CPU at every
start; only `--frontier` lists its extension), and a document worker builds a feed's Arrow rows as one
struct array instead of one array per column (590 -> 400 us a benchmark feed in the worker). The
worker's CPU is shared with the reactor on 2 cores, so it counts too, but the rate at 10,000 sites did
not move beyond the noise (0.65x before and after). Then the stats collector (`STATS_CLASS`,
crawler/stats.py): Scrapy 2.19's looks every attribute of itself up under a `_cached_` name first, to
warn about a deprecated argument, which made each `inc_value` cost 4.8 us instead of 0.22 us; the
project's is the same collector without that. A census response makes 17 such calls, a bare
spider's 11: about 80 and 50 us a response saved. Paired 5,000-site crawls, 3 rounds, measured more,
within their noise: ours 3.76 -> 3.46 ms of crawl-process CPU a response, bare (given the same
collector, as is shaped) 2.49 -> 2.35 ms, ours / bare 0.63x -> 0.67x. The run of
2026-11-23 22:08 (the run before the one in the tables) met a quieter machine: both crawlers ran faster than in the run
before (at 10,000 sites bare 27,289 a minute against 22,930, ours 16,886 against 14,983), bare more so,
and ours / bare read 0.62x against 0.65x; runs on this machine move by that much. Tried and dropped, no
gain beyond the noise in paired runs: the garbage collector's youngest threshold at 10,000 or 50,000
(it cut the collector's own time from 1.2-1.5 s to 0.06 s of a 40 s crawl, but not the crawl's), and
the document worker at a lower priority (nice 10).

Changes of 2026-11-23, late: the census's own work per request and at the start. Scrapy's duplicate
filter fingerprints every request, canonicalising its URL with w3lib first (57 us a request); the
project's fingerprinter (`REQUEST_FINGERPRINTER_CLASS`, crawler/fingerprint.py) gives the same bytes and
hashes a URL that is canonical already as it is (4 us); the bare spider's requests are `dont_filter`,
so it never paid this. `feedcensus crawl` read its inputs twice (once to refuse a crawl with none usable,
once in the spider) and split every seed URL three times; now once, with a faster seeds check: 200,000
seeds took 30.9 s of CPU before the first request, 6.5 s now. What crosses the document pool pickles as
its class and field values (schemas/pickling.py): a page's task and answer 44 -> 28 us of the crawling
process, a feed's job 39 -> 29 us. Paired 5,000-site crawls after the first two (2 rounds): 3.89 ms of
crawl-process CPU a response before and after, within the noise: about 1.5 % was expected. The
re-crawl (`ours-recrawl`, new in this table) gained most: the state index remembers a feed's state
between its request and its response (a lookup was 173 us, the second 0.75 us), skips the overlay of
running jobs when there is none, and the known feeds are counted in SQLite at the start instead of
building every state; paired 3,000-site re-crawls, 2 rounds: 12,622 -> 13,407 responses a minute
(+6 %), 4.77 -> 4.48 ms of crawl-process CPU a response. Tried and dropped: pickling aware datetimes as
microseconds and the vocabulary's enums by name with a `Pickler` per message (a feed's job 52 -> 33 us
to pickle, but its answer no faster, the pickler's set-up taking what the datetimes saved); a pre-check
in front of Scrapy's `MetaRefreshMiddleware`, which decodes every HTML page to look for a refresh
(about 100 us a page): the bare spider pays the same, so it would not move the ratio.

Changes of 2026-11-24: the crawl's start, which weighs most at 1,000 sites. A 1-site crawl took 1.94 s
against the bare spider's 0.9: about 0.45 s more before the spider opens (pyarrow and the census's own
imports, the dataset, the earlier jobs' state), then its first page waited about 0.45 s for the
document worker, which was started only when the spider opened, to import its code. Now the first
worker's process starts as the crawler is made (crawler/extensions/documentpool.py, before Scrapy builds its engine),
so its imports overlap the crawl's own start, and workers refuse numpy, which pyarrow imports as it is
imported (ready in 0.23 s instead of 0.33, 11 MiB less each). Paired, 6 rounds: a 1-site crawl 1.94 ->
1.58 s of wall time; 1,000 sites 8.98 -> 8.88 s. And the benchmark now writes the project's bytecode
before it times anything (`common.compile_project`): this machine sets `PYTHONDONTWRITEBYTECODE` and
the project is installed editable, so until now every run of ours compiled the project's modules from
source, in the crawling process and in its worker (about 0.2 s of each run's start), where Scrapy
starts from its installed bytecode. The runs before this one carry that cost.

Changes of 2026-11-24, later: the garbage collector, and where the reactor's time goes. Python's cyclic
collector took 1.07 s of a 5,000-site crawl's 29 s of reactor CPU (timed with `gc.callbacks`) while
finding only about 6,000 objects in cycles: at its default threshold it ran about 800 times, and its
full collections walk every live object. The crawl now runs it every 10,000 new objects and freezes
what exists when the engine starts (`FEEDCENSUS_GC_THRESHOLD`, crawler/extensions/gc_threshold.py):
0.04 s in 10 runs. The bare and shaped spiders get the same setting through the same extension (the
bare spider's collector took 0.16 s of its 21 s). The sniffer no longer reads the namespaces a feed's
root declares when the root has no prefix (24 -> 15 us a document). Paired 5,000-site crawls, 4 rounds,
before and after both: 0.66x -> 0.69x of the bare spider (medians; ranges 0.65-0.67 and 0.64-0.80).
Measured per thread (/proc schedstat) in a 5,000-site crawl: the reactor thread was on the CPU 28.5 s
of 29.9 s of wall time, waited 1.0-1.4 s for a core (4,400-8,000 involuntary switches: the loopback
server and the worker take its core when they wake), and was idle 0.4 s; the bare spider's thread waited
0.01 s (96 switches), because its machine has a core to spare for the server. Pinning the reactor and
the worker to a core each did not change that (1.9 s), nor did a lower priority for the worker. With py-spy `--gil`, 82 % of the reactor
thread's samples hold no frame of the project at all (Scrapy, Twisted and asyncio for the same
responses as the bare spider plus the census's items and requests), 18 % do.

An upper bound for the cheap cuts left, measured on 2026-11-24 (paired 3,000-site rounds, 4 each, a
scratch tree): four of them at once, each cut to nothing rather than made cheaper (no robots.txt log
middleware when robots.txt is off, no per-document time limit timer in the pool, no next-fetch
schedule on the reactor, no network-safety check), took the crawl process from 3.05 to 2.98 ms of CPU
a response (-2 %), and the rate ratio did not move beyond the rounds' noise (0.70x against 0.69x,
medians). The same holds for unpickling the workers' answers: in a loop, a feed's answer takes 43 us
to unpickle and a page's 19 us (a third of it looking up the classes by name again for every
message), about 1 % of a response's reactor time; in the py-spy of a crawl the same calls take 2.4 %
(cold caches), and halving them would not reach 0.75x.

Changes of 2026-11-24, evening: Scrapy's item machinery, and a fairer reference. Scrapy starts
`CONCURRENT_ITEMS` asyncio tasks (and one more) for every response's output, however little it
yields; the project now sets 1, not 8 (a census response yields at most one item that waits for
anything). Paired 3,000-site crawls, 3 rounds: ours 3.51 -> 3.31 ms of crawl-process CPU a response,
the bare spider, given the same setting, 2.62 -> 2.45; the ratio did not move (0.74x and 0.73x). And
the bare and shaped spiders now log as `feedcensus crawl` does: with the root logger's own level at
INFO, so that Scrapy's DEBUG messages for every response and item ("Crawled", "Scraped from") are
never built. Scrapy's own set-up leaves the root logger at NOTSET and filters at its handler, so the
references built and dropped a log record for every response and item, which ours never did
(py-spy: 3 % of the shaped spider's samples; paired 3,000-site runs: the bare spider 2.27 -> 2.20 ms
of CPU a response). This run is the first with both. Against the run at 0e65e98 a few minutes
before it (`CONCURRENT_ITEMS` at 1, the references' logging as it was): the bare spider 26,800 ->
28,826 responses a minute at 10,000 sites, ours 18,068 -> 18,416, ours / bare 0.68x -> 0.64x, and at
1,000 sites 0.71x -> 0.67x. The paired runs credit the references' logging with about 3 % of the bare
spider's CPU a response, about 0.02 of the ratio; the rest is the machine between runs: only the
paired rounds inside one run compare.

What 0.75x takes on this machine, from this run's 10,000-site rounds. 0.75x of the bare spider's
28,826 responses a minute is 21,620, 360 a second. Ours spends 3.1-3.3 ms of the crawl process's CPU
a response, and the crawl process was on a CPU for 98 % of its wall time: that alone caps the rate at
18,100-19,400 a minute (0.63-0.67x), and 0.75x needs the reactor's work cut to 2.78 ms a response,
10-16 % less, with a core to itself all the time. The document worker spends 2.7-2.8 ms a response more and the loopback server 0.13-0.15:
6.0-6.3 ms of CPU in all for each response, where two cores give 5.56 ms for each of 360 responses a
second. So 0.75x is beyond this machine's two cores at today's CPU per response, however the work is
split between the reactor and the worker, and would need both the reactor's share and the worker's
cut (the worker's by 3-7 %), with no time lost waiting for a core, where the reactor lost 3-5 % of
its time to that in the 5,000-site measurement per thread above. The census's own reactor work is a long tail (about a fifth of the
reactor's samples, no function over 7 %; benchmark 8 and the paragraphs above), and the worker's is
the per-feed path of benchmark 1, which runs at 0.22x fastfeedparser in Python over lxml. More cores
for the crawl itself is what `--frontier` gives (benchmark 6).

Found while building this benchmark (cProfile of a 1,000-site crawl) and since set in
`crawler/settings.py`: Scrapy's `CONCURRENT_ITEMS` default of 100 starts 100 asyncio worker tasks for
every response (the bare spider's too, although its callback returns nothing), and
`WARN_ON_GENERATOR_RETURN_VALUE` re-reads and re-parses a generator callback's source
(`inspect.getsource` + `ast.parse`) on responses, because its cache is keyed on bound methods that do
not stay alive (the bare spider's callback is no generator). In an earlier run on this machine, before
those settings, our crawl used 5.0-5.9 ms of CPU per response at 1,000 sites, and 3.8 ms with both set.
The bare spider gets the project's `CONCURRENT_ITEMS` too (all the settings listed above): with
Scrapy's default of 100 it spends about a third of its CPU starting those tasks, and the ratio would
flatter us.
""",
    "memory": """\
Peak RSS (the crawl process; a document worker's own peak, its VmHWM, after the +) is measured with
the document pool on, the default. Rows are written to Parquet in batches (`FEEDCENSUS_BATCH_ROWS`,
20,000 rows per table), each feed's tree lives only in a worker while it is parsed, and the spider
gives Scrapy its next input only once the scheduler has run empty while the engine backs out
(`CensusSpider.paced`). Without that, Scrapy reads every input into its in-memory scheduler while
the crawl runs flat out, about 4 KB a request: 8,650 requests were held at 10,000 sites with one
worker, and the last session measured +42 % from 10,000 to 50,000 feeds. So memory depends on the
batch size and on Scrapy's in-flight requests, not on the number of feeds.
Peak RSS is the kernel's high-water mark of the crawl process: each command is started through a
small fork+exec wrapper, because an exec'd child's `ru_maxrss` starts at the RSS of the process it
was forked from (the benchmark process holds the 44 MB corpus and more).
""",
    "peer": """\
feed-survey fetches with `requests` in a thread pool (32 threads), parses with lxml and keeps aggregate
counters for an HTML/Markdown report. It strips the trailing slash from every URL before fetching
(`feed_survey.url.normalize_url`), so it asks for `/s7` where the OPML says `/s7/`; the generated web
answers that with a 301 to `/s7/` as real servers do, which is why it makes more requests than sites x 2.
Its "stale" verdicts come from the generated feeds' fixed 2025 dates and do not change the timing.
Ours in this row runs with its defaults apart from politeness (reflexive discovery on, OPML pages on).
""",
    "incremental": """\
Run 2 is the figure that matters for a scheduled job: nothing is parsed and no item row is rewritten;
the survey of run 2 still covers all 198 feeds through `feeds.parsed_job`. The bytes left are the
bodies of the feeds served without validators (their hash, not a 304, says they did not change). Run
3 fetches no feed at all: the corpus feeds carry no ttl or caching headers and their items are older
than the 28-day window, so each one's next fetch is `--max-interval` (24 h) after the last; each gets
a `not_due` row saying so.
""",
    "distributed": """\
Since 2026-11-24 a worker takes up to 16 requests from the frontier in one round trip
(`FEEDCENSUS_FRONTIER_PREFETCH`) and holds back the requests its responses make, to push them with
its next take (crawler/frontier/): 0.11-0.12 round trips per response in this run, against 2.03
in the run before. And the job's inputs now wait in the queue behind every request found in a
response. Breadth-first by depth had put every home page before every feed, so the document worker
got all the feeds at the end and the reactor sat idle 20-35 % of the second half of the crawl (py-spy
of a 3,000-site crawl, sampled over time; this was the unexplained 12 % idle of the run before). A
plain crawl never had that order: it gives Scrapy an input only when its scheduler has run empty.
With both, one process on a frontier runs at 0.85x the plain crawl (0.70x in the run before; paired
3,000-site rounds before and after the change: 12,214 -> 16,347 responses a minute, 0.71x -> 0.90x
of plain). Pushing a request also no longer copies it (`FrontierQueue.encode`: 103 -> 32 us).

Each crawl process has its document worker (`FEEDCENSUS_WORKERS`, by default cores - 1: one on this
machine), which takes the per-feed and per-page work off the reactor. A single plain crawl keeps
1.82 of the 2 cores busy, so a second crawl process has little left to use here, and less now that
one process on the frontier is faster: two workers on a seeded job reach 1.06x one (1.23x in the run
before, 1.82x before the document pool), a coordinator and a worker 1.01x (1.16x, 1.64x), and two
processes on a frontier 0.87x one plain crawl. The machine was loaded during this run (load averages
2-3.9 before the runs; one `seeded x1` took 99 s against 75 s for the other), so the pair ratios'
ranges are wide. The targets of 1.7x were set for one busy core per process; on a machine with more
cores than a process and its workers use, `--frontier` adds what this one cannot show. Measured at
cfbcb70; the review mends after it (eaa10bf: one more HGET inside the pop script per request taken,
a timer per batch of held-back requests) cost nothing measurable: paired 3,000-site rounds on the
frontier, 14,311 responses a minute after them against 14,198 before (medians of 2 rounds each).

Coordinator + worker: the coordinator first queues every input (its scheduler takes nothing from the
frontier until `start()` is exhausted), then crawls like any worker, so the worker finds the queue
full as soon as it joins and the two split the requests about evenly (responses per process). Before
this, Scrapy's lazy start loop had the coordinator push each input and pop it back at once on a fast
web: the worker made 1-3 % of the requests and the pair ran at 0.95x one coordinator.

Two workers on a seeded job (every seed queued beforehand): the frontier shares the work evenly, and
the ratio is what two processes reach on this machine's 2 cores, shared with redis-server, the web
server and each process's start-up. Each crawl process is CPU-bound on one core (benchmark 2); the
"cores kept busy" line shows how close a run came to using the whole machine. The machine may be
shared: the load averages and CPU per response of each run are in the table, and a run slowed by
other load (more CPU per response, a higher load average before it) moves its pair's ratio.

Redis: most commands run inside the frontier's Lua scripts (one `evalsha` per batch of pushes, per
take of up to 16 requests, or per release batch); a response now costs about 14 commands inside them.
A queued request costs Redis memory for its queue entry (the URL, then the request as JSON, with
Scrapy's defaults and the URL left out) and about 90 bytes for its fingerprint in the duplicate
filter, which stays after the request is consumed.
""",
    "capture": """\
The WARC writer compresses each record (zlib level 6, one gzip member per record, so a record can be
read alone) and computes its SHA-1 digests on the crawl's reactor thread; that is the CPU the ratio
shows. The archive is about a quarter of the bytes received: the loopback web's HTML and feeds
compress well, as real ones do.
""",
    "archive": """\
fastwarc (a compiled reader) reads the records about four times faster than warcio, and a replay's
index (every record's headers, read once before it starts) costs about 1.4 s of CPU per 145 MB. A
replay is the census without the network: its CPU is what parsing, tallying, checking and writing
cost, below the live crawl's (no sockets, no DNS), on one core. On two processes (a coordinator and
a worker sharing a Redis frontier) the worker served about half the responses, but the pair spent
about 14 % more CPU (each process's start-up and index, the frontier's round trips) and waited at
the end of the job for its heartbeats, which keeps the ratio well below 2x on a job this short.

The census over an index fetches each record alone by a Range request: its CPU per record is what
docs/common-crawl.md turns into the cost of a full Common Crawl survey. Its wall time here is not
feedcensus's: the loopback Range server (Python's `http.server`, `crawler/demo/rangeserver.py`)
answered Scrapy's requests at about 15 a second in some runs and ten times faster in others, with
both processes idle in between (a py-spy dump showed the crawler waiting in epoll and the server in
`serve_forever`). It happens at 2 requests in flight to the one archive host (the project's
`CONCURRENT_REQUESTS_PER_DOMAIN`): 400 records took 30 s at 2 and 4.2 s at 8. The cause was not
found. Read the CPU column.
""",
    "profile": """\
The per-feed path (parse, tally, profile checks, rows) was the largest single cost on the reactor
thread. With the document pool (`FEEDCENSUS_WORKERS`, pipelines/document/pool.py) what is left of it
there is pickling the task, unpickling the answer (a feed's items, element_usage and conformance
rows arrive as Arrow record batches the worker built, passed to the dataset writer as they are),
scheduling the next fetch and, when an earlier fetch of the feed is known, marking new items and the
SHA-256 of the body that says whether it changed (on a first fetch the worker does both). HTML pages are read in the workers too, so autodiscovery's tokenizer and marker search
are not on the reactor thread either. The rest of the reactor thread is Scrapy's engine,
downloader, scraper and signals, Twisted and asyncio: the part the bare spider pays too.
""",
    "scaling": """\
`taskset` limits the crawl (and its worker processes) to the cores listed; the loopback web's server
runs outside that limit. On one core, workers only add the cost of moving documents and pages
between processes. On two, one worker takes the per-feed path and the reading of pages off the
reactor's core (the default, `auto`); a second worker has no core of its own and costs more than it
gives. A machine with more cores gives the reactor thread a core of its own and the workers the
others: the crawl then runs as fast as the crawl process alone can go. One run each: rates move by
up to 15 % from run to run on this machine.
""",
    "stages": """\
`tree-d221c6b` is the source of the last commit before issue 10's refactor (new folders, one dataset
writer, a table-driven parser, the checks split by section), extracted by `git archive`; the other row
is this tree. Both run the same harness (`bench_stages.py`), in child processes taking turns, each
round timing fastfeedparser in the same process, and both make the same rows (the conformance rows
differ by the rules added since). The checks are faster now, with more rules. Parsing costs more, and
the second table says where from: the per-item identity step (`_identify`: each item's content hash
and identity, SHA-256 over its text, and the lengths and kind of its bodies, which issues 12 and 16
asked for after the refactor) is most of the difference. What is left after it is the rest of issue
16's breadth (languages, link relations, hub, generator, platforms) and the rows and Arrow batches of
the columns issues 12, 13, 14 and 16 added (items 14 columns then, 24 now; feeds 25, now 47).
""",
}


def section_block(name: str, body: str, when: str) -> str:
    return f"<!-- section:{name} -->\n## {TITLES[name]}\n\nMeasured {when}.\n\n{body.rstrip()}\n\n{ANALYSIS[name]}<!-- /section:{name} -->\n"


def old_sections() -> dict[str, str]:
    if not RESULTS.exists():
        return {}
    text = RESULTS.read_text()
    return {
        m.group(1): m.group(0) + "\n" for m in re.finditer(r"<!-- section:(\w+) -->.*?<!-- /section:\1 -->", text, re.S)
    }


#: Targets per section: (target, measured, met).
Targets = dict[str, list[tuple[str, str, bool]]]


def _parse_args(argv: list[str] | None) -> tuple[argparse.Namespace, list[str]]:
    """The options, and the sections to run (in the order given)."""
    parser = argparse.ArgumentParser(description="Run the benchmarks and rewrite benchmarks/RESULTS.md.")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="small sizes: parse 2 rounds, crawl 500/2,000, memory up to 5,000, peer 300, distributed 2,000",
    )
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated subset of {','.join(SECTIONS)}")
    parser.add_argument("--no-write", action="store_true", help="print only, leave RESULTS.md alone")
    args = parser.parse_args(argv)
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    unknown = set(only) - set(SECTIONS)
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(sorted(unknown))}")
    return args, only


def _stamp(quick: bool) -> str:
    """When a section was measured (and whether with small sizes)."""
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC") + (" (--quick)" if quick else "")


def _run_parse(only: list[str], quick: bool, blocks: dict[str, str], targets: Targets) -> None:
    import bench_parse

    print("== 1. parse", file=sys.stderr, flush=True)
    p = bench_parse.run(rounds=2 if quick else 5, feedparser_rounds=1)
    print(p.markdown)
    blocks["parse"] = section_block("parse", p.markdown, _stamp(quick))
    targets["parse"] = p.targets


def _run_crawl(only: list[str], quick: bool, blocks: dict[str, str], targets: Targets) -> None:
    """Benchmarks 2 and 3 share one generated web and reuse each other's runs."""
    import bench_crawl

    sizes = ([500, 2000] if quick else [1000, 10_000]) if "crawl" in only else []
    memory = ([500, 2000, 5000] if quick else [1000, 10_000, 50_000]) if "memory" in only else []
    print("== 2./3. crawl and memory", file=sys.stderr, flush=True)
    c = bench_crawl.run(sizes, memory, repeats=1 if quick else 3, shaped=bool(sizes))
    if "crawl" in only:
        print(c.markdown_crawl)
        blocks["crawl"] = section_block("crawl", c.markdown_crawl, _stamp(quick))
        targets["crawl"] = [t for t in c.targets if "bare" in t[0]]
    if "memory" in only:
        print(c.markdown_memory)
        blocks["memory"] = section_block("memory", c.markdown_memory, _stamp(quick))
        targets["memory"] = [t for t in c.targets if "RSS" in t[0]]


def _run_incremental(only: list[str], quick: bool, blocks: dict[str, str], targets: Targets) -> None:
    import bench_incremental

    print("== 5. incremental", file=sys.stderr, flush=True)
    _, text = bench_incremental.run()
    print(text)
    blocks["incremental"] = section_block("incremental", text, _stamp(quick))


def _run_distributed(only: list[str], quick: bool, blocks: dict[str, str], targets: Targets) -> None:
    import bench_distributed

    print("== 6. distributed", file=sys.stderr, flush=True)
    d = bench_distributed.run(sites=2000 if quick else 10_000, repeats=1 if quick else 2)
    print(d.markdown)
    blocks["distributed"] = section_block("distributed", d.markdown, _stamp(quick))
    targets["distributed"] = d.targets


def _run_capture(only: list[str], quick: bool, blocks: dict[str, str], targets: Targets) -> None:
    import bench_capture

    print("== 7a. capture", file=sys.stderr, flush=True)
    sites = 500 if quick else 2000
    text = bench_capture.markdown(bench_capture.run(sites, 1 if quick else 3), sites)
    print(text)
    blocks["capture"] = section_block("capture", text, _stamp(quick))


def _run_archive(only: list[str], quick: bool, blocks: dict[str, str], targets: Targets) -> None:
    import bench_archive

    print("== 7b. archive", file=sys.stderr, flush=True)
    text = bench_archive.run(500 if quick else 10_000, 1)
    print(text)
    blocks["archive"] = section_block("archive", text, _stamp(quick))


def _run_peer(only: list[str], quick: bool, blocks: dict[str, str], targets: Targets) -> None:
    import bench_peer

    print("== 4. peer", file=sys.stderr, flush=True)
    r = bench_peer.run(300 if quick else 1000)
    print(r.markdown)
    blocks["peer"] = section_block("peer", r.markdown, _stamp(quick))


def _run_profile(only: list[str], quick: bool, blocks: dict[str, str], targets: Targets) -> None:
    import bench_profile

    print("== 8. profile", file=sys.stderr, flush=True)
    text = bench_profile.run(1000 if quick else 3000)
    print(text)
    blocks["profile"] = section_block("profile", text, _stamp(quick))


def _run_stages(only: list[str], quick: bool, blocks: dict[str, str], targets: Targets) -> None:
    import bench_stages

    print("== 10. stages", file=sys.stderr, flush=True)
    text = bench_stages.run(WORK, rounds=3 if quick else 7)
    print(text)
    blocks["stages"] = section_block("stages", text, _stamp(quick))


def _run_scaling(only: list[str], quick: bool, blocks: dict[str, str], targets: Targets) -> None:
    import bench_crawl

    print("== 9. scaling", file=sys.stderr, flush=True)
    text = bench_crawl.scaling(2000 if quick else 10_000)
    print(text)
    blocks["scaling"] = section_block("scaling", text, _stamp(quick))


def _run_scale(only: list[str], quick: bool, blocks: dict[str, str], targets: Targets) -> None:
    """bench_scale.py writes its own labelled block into RESULTS.md (block "latest"); the section is kept from there."""
    import bench_scale
    import scalerig

    print("== 11. scale", file=sys.stderr, flush=True)
    if not os.access(scalerig.CGROUP_ROOT, os.W_OK):
        print(f"   skipped: needs root and a cgroup v1 CPU hierarchy at {scalerig.CGROUP_ROOT}", file=sys.stderr)
        return
    size = ["--sites", "1200", "--hosts", "1000", "--large", "30,60"] if quick else []
    result = bench_scale.main([*size, "--label", "latest"])
    targets["scale"] = result.targets


#: (sections any of which start it, runner), in the order they run.
RUNNERS: list[tuple[set[str], Callable[[list[str], bool, dict[str, str], Targets], None]]] = [
    ({"parse"}, _run_parse),
    ({"crawl", "memory"}, _run_crawl),
    ({"peer"}, _run_peer),
    ({"incremental"}, _run_incremental),
    ({"distributed"}, _run_distributed),
    ({"capture"}, _run_capture),
    ({"archive"}, _run_archive),
    ({"profile"}, _run_profile),
    ({"scaling"}, _run_scaling),
    ({"stages"}, _run_stages),
    ({"scale"}, _run_scale),
]


def _target_rows(targets: Targets, old: dict[str, str], previous: str) -> dict[str, list[list[str]]]:
    """Target rows per section: measured now, or kept from the previous RESULTS.md for a section not run."""
    by_section: dict[str, list[list[str]]] = {}
    for name in SECTIONS:
        if name in targets:
            by_section[name] = [[t, m, "met" if ok else "**MISSED**"] for t, m, ok in targets[name]]
        elif name in old:
            found = re.search(r"<!-- targets:" + name + r"\n(.*?)/targets -->", previous, re.S)
            if found and found.group(1).strip():
                by_section[name] = [row.split("\t") for row in found.group(1).strip().splitlines()]
    return by_section


def _results_text(
    argv: list[str] | None, elapsed: float, blocks: dict[str, str], by_section: dict[str, list[list[str]]]
) -> str:
    target_rows = [row for rows in by_section.values() for row in rows]
    target_md = md_table(["target", "measured", "verdict"], target_rows) if target_rows else "(none measured)"
    hidden = "".join(
        f"<!-- targets:{name}\n" + "\n".join("\t".join(r) for r in rows) + "\n/targets -->\n"
        for name, rows in by_section.items()
    )
    return (
        "# Benchmark results\n\n"
        "Written by `python benchmarks/run_all.py` (see benchmarks/README.md); do not edit by hand. "
        "Performance is judged as ratios measured in one run on the same machine.\n\n"
        "## Machine\n\n"
        + "\n".join(machine_lines())
        + f"\n- Last run: `{' '.join(['run_all.py', *(argv or sys.argv[1:])])}`, "
        f"{elapsed / 60:.1f} min\n\n## Targets\n\n{target_md}\n\n{hidden}\n"
        + "\n".join(blocks[n] for n in SECTIONS if n in blocks)
    )


def write_results(argv: list[str] | None, elapsed: float, blocks: dict[str, str], targets: Targets) -> None:
    """Rewrite RESULTS.md: the sections run now, the others kept from the previous file."""
    old = old_sections()
    for name in SECTIONS:
        if name not in blocks and name in old:
            blocks[name] = old[name]
    previous = RESULTS.read_text() if RESULTS.exists() else ""
    by_section = _target_rows(targets, old, previous)
    Path(RESULTS).write_text(_results_text(argv, elapsed, blocks, by_section))
    print(f"wrote {RESULTS}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    args, only = _parse_args(argv)
    blocks: dict[str, str] = {}
    targets: Targets = {}
    started = time.monotonic()
    for sections, runner in RUNNERS:
        if sections & set(only):
            runner(only, args.quick, blocks, targets)
    elapsed = time.monotonic() - started
    print(f"== done in {elapsed / 60:.1f} min", file=sys.stderr)
    if not args.no_write:
        write_results(argv, elapsed, blocks, targets)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
