"""Scrapy settings for feedcensus.

Every override of a Scrapy default says the default and why. feedcensus's
own settings (``FEEDCENSUS_*``) are all here too, with their defaults; they
are documented in README.md and docs/limits.md.
"""

from scrapy.settings import default_settings as _scrapy

BOT_NAME = "feedcensus"
SPIDER_MODULES = ["crawler.spiders"]
NEWSPIDER_MODULE = "crawler.spiders"

# --- Identity and politeness ------------------------------------------------
# Contact URL sent in the User-Agent so site owners can reach whoever runs the crawl.
FEEDCENSUS_CONTACT_URL = "https://github.com/feedcensus/feedcensus"
# Scrapy default: "Scrapy/VERSION (+https://scrapy.org)". A census crawler identifies itself.
USER_AGENT = f"feedcensus/0.1 (+{FEEDCENSUS_CONTACT_URL})"
# Scrapy default: False. A crawler that visits strangers' sites obeys robots.txt.
ROBOTSTXT_OBEY = True
# Scrapy default: 16. Many small documents from many hosts; per-domain limits keep it polite.
CONCURRENT_REQUESTS = 32
# Scrapy default: 8. Two at a time per site is what a site owner accepts from a survey.
CONCURRENT_REQUESTS_PER_DOMAIN = 2
# Scrapy default: False. Adapts the delay to each server's latency.
AUTOTHROTTLE_ENABLED = True
# Scrapy default: 5.0. The first request to a site waits 1 s, not 5, before AutoThrottle learns.
AUTOTHROTTLE_START_DELAY = 1.0
# Scrapy default: 1.0. Allow two requests in flight per site, matching the per-domain limit.
AUTOTHROTTLE_TARGET_CONCURRENCY = 2.0

# --- Limits -------------------------------------------------------------------
# Scrapy default: 1 GiB. Feeds and pages are small; 32 MiB stops bombs early (recorded as too_large).
DOWNLOAD_MAXSIZE = 32 * 1024 * 1024
# Scrapy default: 32 MiB. Warn at 8 MiB, a very large feed.
DOWNLOAD_WARNSIZE = 8 * 1024 * 1024
# Scrapy default: 180 s. A feed that takes over 30 s is recorded as a timeout.
DOWNLOAD_TIMEOUT = 30
# Scrapy default: 60 s. Same reasoning as DOWNLOAD_TIMEOUT.
DNS_TIMEOUT = 15
# Scrapy default: 20. Long redirect chains are a trap; 10 hops is plenty for real sites.
REDIRECT_MAX_TIMES = 10
# Scrapy default: 2. Kept explicit: one try plus two retries (5xx, 408, 429, resets, timeouts).
# Retries wait first (crawler.middlewares.retry.BackoffRetryMiddleware): Retry-After, else exponential backoff.
RETRY_TIMES = 2
# Scrapy default: [500, 502, 503, 504, 522, 524, 408, 429]. Kept explicit; other 4xx are recorded at once.
RETRY_HTTP_CODES = [500, 502, 503, 504, 522, 524, 408, 429]
# Scrapy default: True. Kept explicit: a body shorter than its Content-Length (a lie, a reset)
# is recorded as network_error instead of being parsed as if it were the whole feed.
DOWNLOAD_FAIL_ON_DATALOSS = True
# feedcensus: URLs longer than this (8 KiB) are not requested; recorded as invalid_url.
FEEDCENSUS_MAX_URL_LENGTH = 8192
# Scrapy default: 2083. 0 disables Scrapy's UrlLengthMiddleware, which drops long links from
# callbacks silently (no errback, so no fetch_log row); FEEDCENSUS_MAX_URL_LENGTH records them instead.
URLLENGTH_LIMIT = 0
# Scrapy default: True. Kept explicit: a lookup the network-safety middleware made early is reused by the
# connection. Safety does not rest on it: the guard below judges every answer, cached or not.
DNSCACHE_ENABLED = True
# Scrapy default: scrapy.resolver.CachingThreadedResolver. The same resolver, judging every answer it gives
# before the connection uses it (crawler/handlers/guard.py): the address checked is the address connected
# to, whatever the cache holds, however the name is spelled (DNS rebinding, trailing dots).
TWISTED_DNS_RESOLVER = "crawler.handlers.guard.GuardedResolver"
# Scrapy default: HTTP11DownloadHandler for both. The same handler; a download whose address the guard
# refused fails as `refused`, with the reason, and is not retried.
DOWNLOAD_HANDLERS = {
    "http": "crawler.handlers.guard.GuardedHTTPDownloadHandler",
    "https": "crawler.handlers.guard.GuardedHTTPDownloadHandler",
}
# Scrapy default: 100 s. A <meta http-equiv=refresh> with a longer delay is not followed.
METAREFRESH_MAXDELAY = 100
# Scrapy default: 60 s. AutoThrottle never waits longer than this between requests to one site.
AUTOTHROTTLE_MAX_DELAY = 60.0

# --- Components --------------------------------------------------------------------
# Scrapy default: scrapy.core.downloader.Downloader. The same, holding CONCURRENT_REQUESTS_PER_DOMAIN when a
# host's slot has no delay: Scrapy 2.19 started every queued request of the host at once (crawler/downloader.py).
DOWNLOADER = "crawler.downloader.PoliteDownloader"
SPIDER_MIDDLEWARES = {
    # Runs on HTML responses after the spider: finds feed links and requests them.
    "crawler.middlewares.autodiscovery.AutodiscoveryMiddleware": 950,
    # Off: each spider middleware wraps every item and request a response yields (paired 5,000-site
    # crawls: these two and the offsite one below cost 4 % of the crawl's CPU). The census keeps its own
    # depth (crawler/requests.py: FetchContext.depth orders requests), so Scrapy's depth meta, its
    # request_depth_max stat and DEPTH_LIMIT have nothing to do; the request builder makes each
    # request's meta afresh, so there is no copied response.meta for MetaCopyDetection to warn about.
    "scrapy.spidermiddlewares.depth.DepthMiddleware": None,
    "scrapy.spidermiddlewares.metacopy.MetaCopyDetectionMiddleware": None,
}
DOWNLOADER_MIDDLEWARES = {
    # Scrapy's RetryMiddleware retries at once; this subclass waits (backoff, Retry-After) first.
    "scrapy.downloadermiddlewares.retry.RetryMiddleware": None,
    "crawler.middlewares.retry.BackoffRetryMiddleware": 550,
    # A 429 or 503 pauses its whole host (Retry-After, else a back-off), not only the request it answered.
    # Just above the retry middleware, so it sees the answer before the retry is made.
    "crawler.middlewares.hostpause.HostPauseMiddleware": 560,
    # Scrapy's robots.txt middleware lets requests that wait for robots.txt through (crawler/middlewares/robots.py).
    "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
    "crawler.middlewares.robots.RobotsTxtMiddleware": 100,
    # Records Scrapy's own robots.txt requests in fetch_log (next to the engine: after retries).
    "crawler.middlewares.robotslog.RobotsLogMiddleware": 40,
    # Refuses private/loopback targets found in content, and non-http(s) schemes.
    "crawler.middlewares.netsafety.NetworkSafetyMiddleware": 50,
    # Off: it only filters by a spider's allowed_domains, which the census spiders do not set (a feed
    # lives on any host); it parsed every request's URL and connected to request_scheduled for nothing.
    "scrapy.downloadermiddlewares.offsite.OffsiteMiddleware": None,
    # feedcensus commoncrawl: a Range answer holding one archive record becomes the response it holds.
    # Just above HttpCompression (590), which then decodes a record stored Content-Encoding-coded.
    "crawler.middlewares.archived.ArchiveRecordMiddleware": 595,
    # With --warc: every response and its request into WARC files. Next to the downloader (after
    # DownloaderStats, 850): it sees bodies before HttpCompression (590) decodes them, and redirects.
    "crawler.middlewares.warc.WarcCaptureMiddleware": 890,
}
ITEM_PIPELINES = {
    # Feed documents -> parse, tally, checks -> table rows; reflexive discovery.
    "pipelines.feed.FeedPipeline": 300,
    # Holds a feed's row until the page its channel links to says whether it advertises the feed.
    "pipelines.reflexive.ReflexivePipeline": 500,
    # Every row to Parquet, in batches, under temporary names renamed into place.
    "pipelines.parquet.ParquetPipeline": 900,
}
# Scrapy default: True (2.19). An HTTP server that runs code inside the crawl process and writes job
# files to disk; a census job needs neither, like the telnet console below. (The extension is also left
# out of EXTENSIONS_BASE below, so setting this to True does not turn it on.)
REMOTE_CONTROL_ENABLED = False
# Scrapy default: its built-in extensions, RemoteControl among them. Scrapy imports each extension in
# the list to ask whether it is configured (and each one named in EXTENSIONS, None or not, to normalise
# the names), and the remote control's module imports aiohttp: about 0.25 s at every crawl's start for
# an extension that is off. Scrapy's own list without it, so an extension a later Scrapy adds is kept.
EXTENSIONS_BASE = {
    path: order
    for path, order in _scrapy.EXTENSIONS_BASE.items()
    if path != "scrapy.extensions.remote_control.RemoteControl"
}
EXTENSIONS = {
    # Every setting given above this file's (a command line, a spider, a distributed job's) is checked
    # first: a value it cannot hold is one line naming it, for scrapy crawl and scrapyd as for feedcensus.
    "crawler.extensions.settingscheck.SettingsCheck": -100,
    # Scrapy default: enabled on 127.0.0.1. Nobody needs a telnet console into a census job.
    "scrapy.extensions.telnet.TelnetConsole": None,
    # Scrapy default: AutoThrottle, lowering a host's delay only on 200s. The same, lowering it on 304 and
    # 206 answers too (crawler/extensions/throttle.py): a re-crawl of unchanged feeds is not held at the
    # start delay. Still switched by AUTOTHROTTLE_ENABLED.
    "scrapy.extensions.throttle.AutoThrottle": None,
    "crawler.extensions.throttle.AdaptiveThrottle": 0,
    # A host's robots.txt Crawl-delay becomes its delay between requests (Scrapy reads only the rules).
    "crawler.extensions.throttle.CrawlDelay": 1,
    # The run's dataset: the one writer every row goes through, commits on a background thread,
    # and the resume state (what an interrupted run of the job already wrote). Built first.
    "crawler.extensions.dataset.Dataset": 100,
    # What the earlier jobs of the dataset say about each feed (incremental crawls): validators, hints,
    # items already seen. Read when the spider opens.
    "crawler.extensions.history.History": 110,
    # The document workers (FEEDCENSUS_WORKERS): processes that parse feeds and read pages for the pipeline
    # and the autodiscovery middleware, off the reactor thread.
    "crawler.extensions.documentpool.DocumentWorkers": 140,
    # Progress lines / live progress and the end-of-crawl summary.
    "crawler.extensions.progress.Progress": 500,
    # With --resume: journals every scheduled request so a killed crawl can continue.
    "crawler.extensions.resume.CrawlJournal": 510,
    # One workers row per crawl process (its totals), written before the last commit.
    "crawler.extensions.workers.WorkerRecord": 520,
    # Where each response's WARC record is (written with --warc, or served by a replay), for the rows.
    "crawler.extensions.archive.ArchiveLocations": 130,
    # (With FEEDCENSUS_FRONTIER the census spider adds crawler.frontier.FrontierWorker here, at 120: this
    # worker's heartbeat, leases and the end of the job. Not listed for every crawl: Scrapy imports each
    # listed extension, and that module imports redis and scrapy_redis, 0.1 s at every crawl's start.)
    # FEEDCENSUS_SWITCH_INTERVAL for the life of the engine (crawler/extensions/switching.py).
    "crawler.extensions.switching.SwitchInterval": 530,
    # FEEDCENSUS_GC_THRESHOLD for the life of the engine (crawler/extensions/gc_threshold.py).
    "crawler.extensions.gc_threshold.GcThreshold": 540,
}
# Scrapy default: scrapy.statscollectors.MemoryStatsCollector. The same collector without the
# attribute lookup Scrapy 2.19 added to warn about a deprecated argument, which made every stats call
# about 20 times slower, at 17 calls a response (crawler/stats.py; the figures: benchmarks/RESULTS.md,
# section 11).
STATS_CLASS = "crawler.stats.CensusStats"
# Scrapy default: scrapy.utils.request.RequestFingerprinter. The same fingerprints, made much faster
# for a URL that is canonical already (crawler/fingerprint.py; the figures: benchmarks/RESULTS.md,
# section 11).
REQUEST_FINGERPRINTER_CLASS = "crawler.fingerprint.CensusFingerprinter"
# Scrapy default: RFPDupeFilter. Same filter, seeded on --resume with the URLs the job already wrote.
DUPEFILTER_CLASS = "crawler.extensions.resume.ResumeDupeFilter"

# --- Engine ---------------------------------------------------------------------------
# Scrapy default: 100. Scrapy starts this many asyncio tasks for every response's output, however
# little it yields: a large part of the crawl's CPU at 100, and still measurable at 8
# (benchmarks/RESULTS.md, section 11). A census response yields at most one item that waits for a
# document worker (a feed's); what else waits is the dataset's back-pressure (ParquetPipeline: too many commits
# queued), and a page's feed requests, yielded after its item, then wait with it, as they should.
CONCURRENT_ITEMS = 1
# Scrapy default: True. The check parses the callback's source with ast, and its cache is keyed
# by the bound method, which dies at once, so it runs again for every response
# (benchmarks/RESULTS.md, section 11). Our callbacks return no values; ruff and the tests guard that.
WARN_ON_GENERATOR_RETURN_VALUE = False
# Python default: 0.005 s (sys.setswitchinterval). Seconds a thread may keep the interpreter lock while
# another waits for it. The reactor lets go of the lock at every socket call; the thread that commits
# the dataset then holds it for up to this long. 0.5 ms: a faster crawl in paired runs
# (benchmarks/RESULTS.md, benchmark 2, the what-if columns). 0: the interval is left alone.
FEEDCENSUS_SWITCH_INTERVAL = 0.0005
# Python default (CPython 3.11): 700 (gc.set_threshold). The young generation's threshold of the cyclic
# garbage collector while the engine runs; the objects alive when it starts are frozen out of the
# collector's sight too (gc.freeze). The collector took 1.07 s of a 5,000-site crawl's 29 s of reactor
# CPU with Python's defaults, 0.04 s with these (crawler/extensions/gc_threshold.py). 0: left alone.
FEEDCENSUS_GC_THRESHOLD = 10000
# Scrapy default: "DEBUG". INFO keeps scheduled jobs' logs readable. It is the level of the log
# (`scrapy crawl`, or `feedcensus crawl --log-file`); `feedcensus crawl` shows only warnings and
# errors on the terminal unless --log-level says otherwise (crawler/cli/crawl.py).
LOG_LEVEL = "INFO"
# Scrapy default: "ERROR". A URL that still fails after its retries is data (its fetch_log row
# says why), not an error of the crawl: logged at INFO, not shown on the terminal by default.
RETRY_GIVE_UP_LOG_LEVEL = "INFO"
# Every request has priority -depth by the census's own depth (crawler/requests.py), breadth-first,
# which keeps the frontier small and fair. Scrapy's DepthMiddleware is off (SPIDER_MIDDLEWARES), so its
# settings (DEPTH_PRIORITY, DEPTH_LIMIT, DEPTH_STATS_VERBOSE) are not read.
# Scrapy defaults: LIFO queues. FIFO makes requests of one priority go in the order they were made.
SCHEDULER_DISK_QUEUE = "scrapy.squeues.PickleFifoDiskQueue"
SCHEDULER_MEMORY_QUEUE = "scrapy.squeues.FifoMemoryQueue"
# Scrapy default: "utf-8"... kept; explicit for the CSV/JSON exports nobody uses here.
FEED_EXPORT_ENCODING = "utf-8"

# --- feedcensus --------------------------------------------------------------------
# Where the datasets go (a local path or a URI pyarrow understands, e.g. s3://bucket/prefix).
FEEDCENSUS_OUT = "out"
# Partition value for this run; empty means the UTC start time (e.g. 20261122T001500Z).
FEEDCENSUS_JOB_ID = ""
# Rows buffered per table before a Parquet file is written.
FEEDCENSUS_BATCH_ROWS = 20000
# A buffered table is written at least this often (seconds), so a killed crawl loses little.
FEEDCENSUS_FLUSH_SECONDS = 30.0
# Fetch the page a feed's channel <link> names, and record whether it advertises the feed.
FEEDCENSUS_REFLEXIVE = True
# Fetch the htmlUrl pages of OPML outlines that also have an xmlUrl.
FEEDCENSUS_OPML_PAGES = True
# Follow autodiscovery links found in <body> too. The specs put them in <head>, but major sites put
# their feed link in the body (a YouTube channel page does): such a link is followed and still
# recorded with in_head = false and its non-conformance reason (not-in-head). --head-only sets False.
FEEDCENSUS_FOLLOW_BODY_LINKS = True
# When a page advertises no feed, try feed-looking <a> links and common feed paths.
FEEDCENSUS_GUESS = False
# How deep OPML include outlines are followed.
FEEDCENSUS_OPML_MAX_INCLUDE_DEPTH = 5
# Refuse URLs found in content that resolve to private, loopback or link-local addresses.
FEEDCENSUS_ALLOW_PRIVATE_NETWORKS = False
# Crawl through the proxy http_proxy/https_proxy name. Off: with the guard on, a proxy is refused in one line,
# since the proxy resolves names itself and the guard cannot see the addresses they lead to.
FEEDCENSUS_ALLOW_PROXY = False
# Folder of the resumable state (--resume); empty: the crawl cannot be resumed.
FEEDCENSUS_RESUME_DIR = ""
# First retry waits this long (seconds), doubling each time; a Retry-After header replaces it.
FEEDCENSUS_RETRY_BACKOFF_BASE = 1.0
# The longest a retry waits, whatever Retry-After asks for (seconds).
FEEDCENSUS_RETRY_AFTER_MAX = 60.0
# The longest a host is left alone after a 429 or 503, whatever its Retry-After asks for (seconds).
FEEDCENSUS_HOST_PAUSE_MAX = 3600.0
# The longest delay between requests a robots.txt Crawl-delay can ask for (seconds).
FEEDCENSUS_CRAWL_DELAY_MAX = 60.0
# Seconds between progress log lines when not on a terminal.
FEEDCENSUS_PROGRESS_INTERVAL = 30.0
# When stderr is a terminal, redraw one live progress line (False: periodic log lines only).
FEEDCENSUS_LIVE_PROGRESS = True
# Incremental crawls (docs/scheduling.md): the earlier jobs in FEEDCENSUS_OUT are the state. A known
# feed is fetched only when its publisher's hints (ttl, skipHours/skipDays, sy:updatePeriod, Cache-Control,
# Expires, Retry-After) or, without hints, its own rate of new items say it is due; the others get a
# not_due fetch_log row and a carried-forward feeds row. False: every run fetches everything anew.
FEEDCENSUS_INCREMENTAL = True
# Send If-None-Match / If-Modified-Since from the last fetch, so an unchanged feed costs a 304 and no parse.
FEEDCENSUS_CONDITIONAL = True
# Fetch every known feed now, whatever its hints say (still conditionally). --ignore-hints.
FEEDCENSUS_IGNORE_HINTS = False
# Bounds on a publisher's hints (seconds): never fetch a feed more often than the first, nor
# leave it longer than the second. --min-interval / --max-interval.
FEEDCENSUS_MIN_INTERVAL = 300.0
FEEDCENSUS_MAX_INTERVAL = 86400.0
# WARC capture (docs/archives.md): a folder to write every response and its request into, as gzip'd
# WARC 1.1 files (crawl --warc DIR). Empty: no capture.
FEEDCENSUS_WARC_DIR = ""
# Autodiscovery requests the feeds a page advertises. False: the links are recorded (followed =
# false) but not requested (feedcensus commoncrawl sets it: the archive is the web there).
FEEDCENSUS_FOLLOW_LINKS = True
# A WARC file is closed and the next one started once it passes this many bytes (compressed).
FEEDCENSUS_WARC_MAX_BYTES = 1_000_000_000
# Replay (docs/archives.md, feedcensus replay): the WARC files (paths or globs) every response is
# served from, with no network; `feedcensus replay` puts the index it built here. Empty: a live crawl.
# It takes effect with the download handlers and resolver `feedcensus replay` sets
# (crawler/handlers/warc.py).
FEEDCENSUS_REPLAY: list[str] = []
# Feed documents are parsed, tallied, checked and turned into rows, and HTML pages read for their feed
# links, in up to this many worker processes (pipelines/document/pool.py, crawler/extensions/documentpool.py),
# started as the crawl needs them; "auto" (the default): the cores this process may use, minus one for
# the reactor (none on one core). 0 keeps that work in the crawling process (for debugging, and what a
# single core gets anyway).
FEEDCENSUS_WORKERS: int | str = "auto"
# Seconds one document may take in a worker before the worker is stopped and replaced; a feed is
# then recorded as parse_timeout, a page with that error and without its links. Over a thousand
# times what the slowest benchmark feed takes (benchmarks/RESULTS.md, section 11).
FEEDCENSUS_PARSE_TIMEOUT = 60.0
# Distributed crawls (docs/distributed.md). A Redis URL: the job's queue, duplicate filter and leases
# live there and any number of `feedcensus worker` processes share them. Empty: Scrapy's own
# in-memory scheduler, as always. (Set, it makes the census spider set SCHEDULER to
# crawler.frontier.FrontierScheduler and add the FrontierWorker extension: CensusSpider.update_settings.)
FEEDCENSUS_FRONTIER = ""
# The frontier URL as logged and recorded (credentials removed); set by the CLI.
FEEDCENSUS_FRONTIER_DISPLAY = ""
# This process's name in the job (host:pid:token); empty: made up at start.
FEEDCENSUS_WORKER_ID = ""
# A worker silent this long (seconds) counts as dead: another puts its in-flight requests back.
FEEDCENSUS_FRONTIER_LEASE = 60.0
# How often (seconds) a worker says it is alive and looks for dead ones.
FEEDCENSUS_FRONTIER_HEARTBEAT = 5.0
# How long (seconds) a job's keys stay in Redis after it ends (its duplicate filter, for status).
FEEDCENSUS_FRONTIER_KEY_TTL = 604800
# How many requests a worker takes from the job's queue in one round trip (each leased to it at once;
# 1 takes them one by one, as a round trip per request).
FEEDCENSUS_FRONTIER_PREFETCH = 16
# Run feed autodiscovery on HTML pages (the AutodiscoveryMiddleware); off, pages are only recorded.
AUTODISCOVERY_ENABLED = True
