"""Tests for pipelines.document.checks: every rule both ways, on small literal RSS documents.

Most documents are built from the profile's own sample channel (the Dallas
Times-Herald) so that the one "clean" feed passes every rule, and each case
changes one thing.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import FrozenInstanceError
from datetime import UTC, datetime
from pathlib import Path
from typing import NoReturn

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree

from pipelines.document.checks import NOT_FEED_RULES, RULES, Finding, Rule, check_feed
from pipelines.document.checks.datetimes import analyse_date, universal_date
from pipelines.document.checks.rss1 import RDF_ROOT
from pipelines.document.feedparse import parse_feed

#: The Atom 1.0 rules (tests/test_checks_atom.py): no Section table, one walk of their own.
ATOM_RULES = frozenset(rule_id for rule_id, rule in RULES.items() if rule.source == "atom")
SHARED = Path(__file__).resolve().parents[1].parent / "shared"
PROFILE = SHARED / "specs" / "rss-best-practices-profile.txt"
BENCHMARK_FEEDS = SHARED / "corpus" / "benchmark_feeds"
NOW = datetime(2007, 10, 16, 12, 0, tzinfo=UTC)

NAMESPACES = (
    'xmlns:atom="http://www.w3.org/2005/Atom" xmlns:dc="http://purl.org/dc/elements/1.1/" '
    'xmlns:content="http://purl.org/rss/1.0/modules/content/" '
    'xmlns:slash="http://purl.org/rss/1.0/modules/slash/"'
)
SELF_LINK = '<atom:link href="http://dallas.example.com/rss.xml" rel="self" type="application/rss+xml" />'
NOLAN = (
    "Texas Rangers pitcher Nolan Ryan hurled the seventh no-hitter of his legendary career on Arlington "
    "Appreciation Night, defeating the Toronto Blue Jays 3-0."
)
IMAGE = """<image>
  <link>http://dallas.example.com</link>
  <title>Dallas Times-Herald</title>
  <url>http://dallas.example.com/masthead.gif</url>
  <description>Read the Dallas Times-Herald</description>
  <height>32</height>
  <width>96</width>
</image>"""
TEXT_INPUT = """<textInput>
  <description>Your aggregator supports the textInput element. What software are you using?</description>
  <link>http://www.cadenhead.org/textinput.php</link>
  <name>query</name>
  <title>TextInput Inquiry</title>
</textInput>"""
CLOUD = (
    '<cloud domain="server.example.com" path="/rpc" port="80" protocol="xml-rpc" registerProcedure="cloud.notify" />'
)
ENCLOSURE = '<enclosure length="24986239" type="audio/mpeg" url="http://dallas.example.com/joebob_050689.mp3" />'

GUID = "<guid>http://dallas.example.com/1991/05/02/nolan.htm</guid>"
W3CDTF = "2007-10-15T14:10:00Z"
#: Namespace elements the NAMESPACES of ``doc`` do not declare, declared on the element itself.
SY = '<sy:updateFrequency xmlns:sy="http://purl.org/rss/1.0/modules/syndication/">'
ITUNES = 'xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"'
TB = '<trackback:ping xmlns:trackback="http://madskills.com/public/xml/rss/module/trackback/"'

_ABSENT = object()


def doc(
    *,
    channel: str = "",
    after_items: str = "",
    version: str = 'version="2.0"',
    title: str | None = "<title>Dallas Times-Herald</title>",
    link: str | None = "<link>http://dallas.example.com</link>",
    description: str | None = "<description>Current headlines from the Dallas Times-Herald newspaper</description>",
    self_link: str = SELF_LINK,
    item_pre: str = "",
    item_title: str | None = "<title>Seventh Heaven! Ryan Hurls Another No Hitter</title>",
    item_link: str | None = "<link>http://dallas.example.com/1991/05/02/nolan.htm</link>",
    item_description: str | None = f"<description>{NOLAN}</description>",
    item_guid: str | None = "<guid>http://dallas.example.com/1991/05/02/nolan.htm</guid>",
    item: str = "",
    extra_channel: str = "",
) -> str:
    head = "".join(x for x in (title, link, description) if x)
    body = "".join(x for x in (item_pre, item_title, item_link, item_description, item_guid, item) if x)
    return (
        f'<?xml version="1.0" encoding="utf-8"?>\n<rss {version} {NAMESPACES}>\n<channel>\n{head}\n{self_link}\n'
        f"{channel}\n<item>\n{body}\n</item>\n{after_items}\n</channel>\n{extra_channel}</rss>\n"
    )


def run(text: str, *, fmt: str | None = None, now: datetime = NOW) -> list[Finding]:
    """The findings on ``text``: checked as ``fmt``, by default "rdf" for an rdf:RDF root and "rss" otherwise."""
    body = text.encode("utf-8")
    root = etree.fromstring(body, etree.XMLParser(resolve_entities=False, no_network=True))
    if fmt is None:
        fmt = "rdf" if root.tag == RDF_ROOT else "rss"
    return check_feed(root, format=fmt, body=body, now=now)


def rules_of(text: str, **kw: object) -> set[str]:
    return {f.rule for f in run(text, **kw)}  # type: ignore[arg-type]


# (rule, failing document, passing document). Every rule of RULES appears at least once.
CASES: list[tuple[str, str, str]] = [
    ("undefined-element", doc(item="<fullitem>x</fullitem>"), doc(item="<category>movies</category>")),
    ("undefined-element", doc(channel="<textinput><title>t</title></textinput>"), doc()),
    ("version-not-2-0", doc(version='version="3.0"'), doc()),
    ("version-not-2-0", doc(version='version="0.94"'), doc(version='version="0.91"')),
    ("version-missing", doc(version=""), doc()),
    ("version-missing", doc(version=""), doc(version='version="0.91"')),
    ("channel-missing", f'<rss version="2.0" {NAMESPACES}></rss>', doc()),
    ("multiple-channels", doc(extra_channel="<channel><title>x</title></channel>"), doc()),
    # 3.1
    ("text-element-has-children", doc(channel="<copyright>2007 <b>Dallas</b></copyright>"), doc(channel="<copyright>Copyright 2007 Dallas Times-Herald</copyright>")),
    ("character-data-not-hex", doc(title="<title><![CDATA[<foo> bar]]></title>"), doc(title="<title>&#x3C;foo&#x3E; bar</title>")),
    ("character-data-not-hex", doc(item_title="<title>A &lt;B</title>"), doc(item_title="<title>A &#x3C;B</title>")),
    ("character-data-not-hex", doc(item_title="<title>&amp;&lt;/</title>"), doc(item_title="<title>&amp;&lt; /</title>")),
    ("character-data-not-hex", doc(item_title="<title>I &#60;b&#62;3 Phil</title>"), doc(item_title="<title>I &#60;3 Phil Ringnalda</title>")),
    ("character-data-not-hex", doc(item_title="<title>Nice &lt;gorilla&gt; what's he weigh?</title>"), doc(item_title="<title>Nice &#x3C;gorilla&#x3E; what's he weigh?</title>")),
    # 3.2 (the profile's own examples pass validity)
    ("date-invalid", doc(channel="<pubDate>2007-10-15T14:10:00Z</pubDate>"), doc(channel="<pubDate>Mon, 15 Oct 2007 14:10:00 GMT</pubDate>")),
    ("date-invalid", doc(channel="<lastBuildDate>Mon, 15 Oct 2007 25:10:00 EST</lastBuildDate>"), doc(channel="<lastBuildDate>Mon, 15 Oct 2007 09:10:00 EST</lastBuildDate>")),
    ("date-invalid", doc(item="<pubDate>Mon, 31 Feb 2007 08:10:00 -0600</pubDate>"), doc(item="<pubDate>Mon, 15 Oct 2007 08:10:00 -0600</pubDate>")),
    ("date-invalid", doc(item="<pubDate></pubDate>"), doc(item="<pubDate>Fri, 05 Oct 2007 09:00:00 CST</pubDate>")),
    ("date-weekday-mismatch", doc(channel="<pubDate>Tue, 15 Oct 2007 14:10:00 GMT</pubDate>"), doc(channel="<pubDate>Mon, 15 Oct 2007 14:10:00 GMT</pubDate>")),
    ("date-two-digit-year", doc(channel="<pubDate>Mon, 15 Oct 07 14:10:00 GMT</pubDate>"), doc(channel="<pubDate>Mon, 15 Oct 2007 14:10:00 GMT</pubDate>")),
    ("date-comment-or-extra-space", doc(channel="<pubDate>Mon, 15 Oct 2007  14:10:00 GMT</pubDate>"), doc(channel="<pubDate>\n  Mon, 15 Oct 2007 14:10:00 GMT\n</pubDate>")),
    ("date-comment-or-extra-space", doc(channel="<pubDate>Mon, 15 Oct 2007 14:10:00 GMT (Monday)</pubDate>"), doc(channel="<pubDate>Mon, 15 Oct 2007 14:10:00 GMT</pubDate>")),
    ("date-military-zone", doc(channel="<pubDate>Mon, 15 Oct 2007 14:10:00 A</pubDate>"), doc(channel="<pubDate>Mon, 15 Oct 2007 14:10:00 Z</pubDate>")),
    ("date-not-universal-form", doc(channel="<lastBuildDate>Mon, 15 Oct 2007 09:10:00 EST</lastBuildDate>"), doc(channel="<lastBuildDate>Thu, 04 Oct 2007 23:59:45 +0000</lastBuildDate>")),
    ("date-not-universal-form", doc(channel="<pubDate>Mon, 15 Oct 2007 08:10:00 -0600</pubDate>"), doc(channel="<pubDate>Thu, 04 Oct 2007 23:59:45 -0000</pubDate>")),
    ("date-not-universal-form", doc(channel="<pubDate>thu, 04 oct 2007 23:59:45 gmt</pubDate>"), doc(channel="<pubDate>Thu, 4 Oct 2007 23:59:45 GMT</pubDate>")),
    ("item-date-in-future", doc(item="<pubDate>Sat, 20 Oct 2007 12:00:00 GMT</pubDate>"), doc(item="<pubDate>Fri, 05 Oct 2007 09:00:00 CST</pubDate>")),
    # 3.3
    ("email-missing", doc(item="<author>Joe Bob Briggs</author>"), doc(item="<author>jbb@dallas.example.com (Joe Bob Briggs)</author>")),
    ("email-missing-real-name", doc(channel="<webMaster>helpdesk@dallas.example.com</webMaster>"), doc(channel="<webMaster>helpdesk@dallas.example.com (Help Desk)</webMaster>")),
    ("email-format", doc(channel="<managingEditor>Frank Luksa &lt;luksa@dallas.example.com&gt;</managingEditor>"), doc(channel="<managingEditor>luksa@dallas.example.com (Frank Luksa)</managingEditor>")),
    ("email-format", doc(channel="<managingEditor>mailto:jlehrer@dallas.example.com</managingEditor>"), doc(channel="<managingEditor>jlehrer@dallas.example.com (Jim Lehrer)</managingEditor>")),
    # 3.4
    ("url-not-absolute", doc(item="<comments>/feedback/1983/06/joebob.htm</comments>"), doc(item="<comments>http://dallas.example.com/feedback/1983/06/joebob.htm</comments>")),
    ("url-not-absolute", doc(link="<link>//dallas.example.com</link>"), doc(link="<link> http://dallas.example.com</link>")),
    ("url-not-absolute", doc(channel="<docs>rss-specification</docs>"), doc(channel="<docs>https://www.rssboard.org/rss-specification</docs>")),
    ("url-not-ascii", doc(item_link="<link>http://dallas.example.com/café</link>"), doc(item_link="<link>http://dallas.example.com/caf%C3%A9</link>")),
    # 4.1.1
    ("channel-missing-required", doc(description=None), doc()),
    ("duplicate-channel-element", doc(channel="<ttl>60</ttl><ttl>60</ttl>"), doc(channel="<category>Media</category><category>News</category>")),
    ("items-before-channel-elements", doc(after_items="<ttl>60</ttl>"), doc(channel="<ttl>60</ttl>")),
    ("cloud-missing-attribute", doc(channel='<cloud domain="server.example.com" path="/rpc" port="80" protocol="xml-rpc" />'), doc(channel=CLOUD)),
    ("cloud-attribute-invalid", doc(channel=CLOUD.replace("xml-rpc", "rest")), doc(channel=CLOUD)),
    ("cloud-attribute-invalid", doc(channel=CLOUD.replace('"80"', '"eighty"')), doc(channel=CLOUD.replace("xml-rpc", "soap"))),
    ("docs-not-rssboard", doc(channel="<docs>http://blogs.law.harvard.edu/tech/rss</docs>"), doc(channel="<docs>https://www.rssboard.org/rss-specification</docs>")),
    # 4.1.1.9 image
    ("image-missing-required", doc(channel=IMAGE.replace("<url>http://dallas.example.com/masthead.gif</url>", "")), doc(channel=IMAGE)),
    ("duplicate-image-element", doc(channel=IMAGE.replace("<width>96</width>", "<width>96</width><width>88</width>")), doc(channel=IMAGE)),
    ("image-link-mismatch", doc(channel=IMAGE.replace("<link>http://dallas.example.com</link>", "<link>http://la.example.com</link>")), doc(channel=IMAGE.replace("<link>http://dallas.example.com</link>", "<link>http://dallas.example.com/</link>"))),
    ("image-title-mismatch", doc(channel=IMAGE.replace("<title>Dallas Times-Herald</title>", "<title>Masthead</title>")), doc(channel=IMAGE)),
    ("image-url-format", doc(channel=IMAGE.replace("masthead.gif", "masthead.svg")), doc(channel=IMAGE.replace("masthead.gif", "masthead.JPEG?v=2"))),
    ("image-too-tall", doc(channel=IMAGE.replace("<height>32</height>", "<height>401</height>")), doc(channel=IMAGE.replace("<height>32</height>", "<height>400</height>"))),
    ("image-too-wide", doc(channel=IMAGE.replace("<width>96</width>", "<width>145</width>")), doc(channel=IMAGE.replace("<width>96</width>", "<width>144</width>"))),
    ("image-size-not-integer", doc(channel=IMAGE.replace("<width>96</width>", "<width>96px</width>")), doc(channel=IMAGE)),
    # 4.1.1.10 - 4.1.1.18
    ("language-invalid", doc(channel="<language>english</language>"), doc(channel="<language>epo</language>")),
    ("language-invalid", doc(channel="<language>xx-yy</language>"), doc(channel="<language>en-us</language>")),
    ("rating-not-pics", doc(channel="<rating>PG-13</rating>"), doc(channel='<rating>(PICS-1.1 "http://www.rsac.org/ratingsv01.html" l by "webmaster@example.com" on "2007.01.29T10:09-0800" r (n 0 s 0 v 0 l 0))</rating>')),
    ("skip-day-invalid", doc(channel="<skipDays><day>Sat</day></skipDays>"), doc(channel="<skipDays>\n  <day>Saturday</day>\n  <day>Sunday</day>\n</skipDays>")),
    ("skip-day-duplicate", doc(channel="<skipDays><day>Saturday</day><day>Saturday</day></skipDays>"), doc(channel="<skipDays><day>Saturday</day><day>Sunday</day></skipDays>")),
    ("skip-hour-invalid", doc(channel="<skipHours><hour>25</hour></skipHours>"), doc(channel="<skipHours>\n  <hour>0</hour>\n  <hour>1</hour>\n  <hour>2</hour>\n  <hour>22</hour>\n  <hour>23</hour>\n</skipHours>")),
    ("skip-hour-invalid", doc(channel="<skipHours><hour>1.5</hour></skipHours>"), doc(channel="<skipHours><hour>1</hour></skipHours>")),
    ("skip-hour-24", doc(channel="<skipHours><hour>24</hour></skipHours>"), doc(channel="<skipHours><hour>0</hour></skipHours>")),
    ("skip-hour-duplicate", doc(channel="<skipHours><hour>1</hour><hour>1</hour></skipHours>"), doc(channel="<skipHours><hour>1</hour><hour>2</hour></skipHours>")),
    ("skip-hour-duplicate", doc(channel="<skipHours><hour>0</hour><hour>24</hour></skipHours>"), doc(channel="<skipHours><hour>0</hour><hour>23</hour></skipHours>")),
    ("text-input-present", doc(channel=TEXT_INPUT), doc()),
    ("text-input-missing-required", doc(channel=TEXT_INPUT.replace("<name>query</name>", "")), doc(channel=TEXT_INPUT)),
    ("duplicate-text-input-element", doc(channel=TEXT_INPUT.replace("<name>query</name>", "<name>query</name><name>q</name>")), doc(channel=TEXT_INPUT)),
    ("text-input-name-invalid", doc(channel=TEXT_INPUT.replace("<name>query</name>", "<name>1query</name>")), doc(channel=TEXT_INPUT.replace("<name>query</name>", "<name>q:search-term_1.x</name>"))),
    ("text-input-name-invalid", doc(channel=TEXT_INPUT.replace("<name>query</name>", "<name>my query</name>")), doc(channel=TEXT_INPUT)),
    ("ttl-not-positive-integer", doc(channel="<ttl>one hour</ttl>"), doc(channel="<ttl>60</ttl>")),
    ("ttl-not-positive-integer", doc(channel="<ttl>0</ttl>"), doc(channel="<ttl> 1440 </ttl>")),
    # 4.1.1.20 item
    ("item-missing-title-and-description", doc(item_title=None, item_description=None), doc(item_title=None)),
    ("item-missing-title-and-description", doc(item_title=None, item_description=None), doc(item_description=None)),
    ("duplicate-item-element", doc(item="<link>http://dallas.example.com/other.htm</link>"), doc(item="<category>movies</category><category domain=\"rec.arts.movies.reviews\">1983/V</category>")),
    ("description-relative-url", doc(item_description='<description>last week &lt;a href="/title/tt0086525/"&gt;Valley Girl&lt;/a&gt; came out</description>'), doc(item_description='<description>I\'m headed for France. I wasn\'t gonna go this year, but then last week &lt;a href="http://www.imdb.com/title/tt0086525/"&gt;Valley Girl&lt;/a&gt; came out and I said to myself, Joe Bob, you gotta get out of the country for a while.</description>')),
    ("description-relative-url", doc(item_description='<description><![CDATA[<img src="joebob.jpg">]]></description>'), doc(item_description='<description><![CDATA[I\'m headed for France. I wasn\'t gonna go this year, but then last week <a href="http://www.imdb.com/title/tt0086525/">Valley Girl</a> came out and I said to myself, Joe Bob, you gotta get out of the country for a while.]]></description>')),
    ("html-unsafe-element", doc(item_description="<description>a &lt;script&gt;go()&lt;/script&gt;</description>"), doc(item_description="<description>a &lt;p&gt;script&lt;/p&gt;</description>")),
    ("html-unsafe-element", doc(item_description="<description>x</description><content:encoded xmlns:content='http://purl.org/rss/1.0/modules/content/'><![CDATA[<iframe src='http://example.com/'></iframe>]]></content:encoded>"), doc(item_description="<description>x</description><content:encoded xmlns:content='http://purl.org/rss/1.0/modules/content/'><![CDATA[<img src='http://example.com/i.png'>]]></content:encoded>")),
    ("html-unsafe-attribute", doc(item_description="<description>&lt;a onclick='go()'&gt;x&lt;/a&gt;</description>"), doc(item_description="<description>&lt;a title='onclick'&gt;x&lt;/a&gt;</description>")),
    ("html-unsafe-style", doc(item_description="<description>&lt;p style='position: absolute'&gt;x&lt;/p&gt;</description>"), doc(item_description="<description>&lt;p style='color: red'&gt;x&lt;/p&gt;</description>")),
    ("enclosure-missing-attribute", doc(item='<enclosure length="24986239" url="http://dallas.example.com/joebob_050689.mp3" />'), doc(item=ENCLOSURE)),
    ("enclosure-length-not-integer", doc(item=ENCLOSURE.replace('"24986239"', '"24 MB"')), doc(item=ENCLOSURE.replace('"24986239"', '"0"'))),
    ("enclosure-length-unknown", doc(item=ENCLOSURE.replace('"24986239"', '"-1"')), doc(item=ENCLOSURE.replace('"24986239"', '"0"'))),
    ("enclosure-length-unknown", doc(item=ENCLOSURE.replace('"24986239"', '""')), doc(item=ENCLOSURE)),
    ("enclosure-url-not-absolute", doc(item=ENCLOSURE.replace("http://dallas.example.com/", "")), doc(item=ENCLOSURE)),
    ("duplicate-enclosure", doc(item=ENCLOSURE + ENCLOSURE.replace(".mp3", ".ogg")), doc(item=ENCLOSURE)),
    ("guid-permalink-not-url", doc(item_guid="<guid>joebob-1983-05-06</guid>"), doc(item_guid='<guid isPermaLink="false">tag:dallas.example.com,4131:news</guid>')),
    ("guid-permalink-not-url", doc(item_guid='<guid isPermaLink="true">1983/05/06/joebob.htm</guid>'), doc(item_guid="<guid>http://dallas.example.com/1983/05/06/joebob.htm</guid>")),
    ("guid-is-permalink-invalid", doc(item_guid='<guid isPermaLink="yes">http://dallas.example.com/1983/05/06/joebob.htm</guid>'), doc(item_guid='<guid isPermaLink="true">http://dallas.example.com/1983/05/06/joebob.htm</guid>')),
    ("item-missing-guid", doc(item_guid=None), doc()),
    ("source-missing-url", doc(item="<source>Los Angeles Herald-Examiner</source>"), doc(item='<source url="http://la.example.com/rss.xml">Los Angeles Herald-Examiner</source>')),
    ("source-url-not-absolute", doc(item='<source url="rss.xml">Los Angeles Herald-Examiner</source>'), doc(item='<source url="http://la.example.com/rss.xml">Los Angeles Herald-Examiner</source>')),
    # 5
    ("missing-atom-self-link", doc(self_link=""), doc()),
    ("missing-atom-self-link", doc(self_link='<atom:link href="http://dallas.example.com/" rel="alternate" />'), doc()),
    ("atom-link-missing-href", doc(self_link=SELF_LINK + '<atom:link rel="hub" />'), doc(self_link=SELF_LINK + '<atom:link href="http://hub.example.com/" rel="hub" />')),
    ("content-before-description", doc(item_pre="<content:encoded>&lt;p&gt;full&lt;/p&gt;</content:encoded>"), doc(item="<content:encoded>&lt;p&gt;full&lt;/p&gt;</content:encoded>")),
    ("content-without-description", doc(item_description=None, item="<content:encoded>full</content:encoded>"), doc(item_description=None)),
    ("author-and-dc-creator", doc(item="<author>jbb@dallas.example.com (Joe Bob Briggs)</author><dc:creator>Joe Bob Briggs</dc:creator>"), doc(item="<dc:creator>Joe Bob Briggs</dc:creator>")),
    ("contact-and-dc-creator", doc(channel="<managingEditor>luksa@dallas.example.com (Frank Luksa)</managingEditor><dc:creator>Frank Luksa</dc:creator>"), doc(channel="<dc:creator>Frank Luksa</dc:creator>")),
    ("contact-and-dc-creator", doc(channel="<webMaster>helpdesk@dallas.example.com (Help)</webMaster><dc:creator>Frank Luksa</dc:creator>"), doc(channel="<webMaster>helpdesk@dallas.example.com (Help)</webMaster>")),
    ("slash-comments-not-integer", doc(channel="<lastBuildDate>Sun, 14 Oct 2007 17:17:44 GMT</lastBuildDate>", item="<slash:comments>many</slash:comments>"), doc(channel="<lastBuildDate>Sun, 14 Oct 2007 17:17:44 GMT</lastBuildDate>", item="<slash:comments>13</slash:comments>")),
    ("slash-comments-without-last-build-date", doc(item="<slash:comments>13</slash:comments>"), doc(channel="<lastBuildDate>Sun, 14 Oct 2007 17:17:44 GMT</lastBuildDate>", item="<slash:comments>13</slash:comments>")),
    # RSS 2.0 alone (source rss2)
    ("skip-days-empty", doc(channel="<skipDays></skipDays>"), doc(channel="<skipDays><day>Sunday</day></skipDays>")),
    ("guid-duplicate", doc(after_items=f"<item><title>b</title>{GUID}</item>"), doc(after_items="<item><title>b</title><guid>http://dallas.example.com/1991/05/02/ryan.htm</guid></item>")),
    ("guid-duplicate", doc(after_items="<item><title>b</title><guid><![CDATA[http://dallas.example.com/1991/05/02/nolan.htm]]></guid></item>"), doc()),
    ("guid-duplicate", doc(after_items="<item><title>b</title><guid>http://dallas.example.com/1991/05/02/nolan&#46;htm</guid></item>"), doc()),
    # namespaces (source namespace)
    ("duplicate-namespace-element", doc(channel=f"<dc:date>{W3CDTF}</dc:date><dc:date>{W3CDTF}</dc:date>"), doc(channel=f"<dc:date>{W3CDTF}</dc:date>")),
    ("duplicate-namespace-element", doc(item="<content:encoded>a</content:encoded><content:encoded>b</content:encoded>"), doc(item="<content:encoded>a</content:encoded>")),
    ("duplicate-namespace-element", doc(channel=f"{SY}2</sy:updateFrequency>{SY}2</sy:updateFrequency>"), doc(channel=f"{SY}2</sy:updateFrequency>")),
    ("duplicate-namespace-element", doc(channel="<dc:rights>a</dc:rights><dc:rights>b</dc:rights>"), doc(channel="<dc:creator>a</dc:creator><dc:creator>b</dc:creator>")),
    ("duplicate-namespace-element", doc(channel=f"<dc:date>{W3CDTF}</dc:date><dc:date>{W3CDTF}</dc:date>"), doc(item=f"<dc:date>{W3CDTF}</dc:date><dc:date>{W3CDTF}</dc:date>")),
    ("namespace-duplicates-core", doc(channel=f"<pubDate>Mon, 15 Oct 2007 14:10:00 GMT</pubDate><dc:date>{W3CDTF}</dc:date>"), doc(channel=f"<dc:date>{W3CDTF}</dc:date>")),
    ("namespace-duplicates-core", doc(item="<category>movies</category><dc:subject>movies</dc:subject>"), doc(item="<category>movies</category>")),
    ("namespace-duplicates-core", doc(channel="<language>en-us</language><dc:language>en-us</dc:language>"), doc(channel="<language>en-us</language>")),
    ("dc-language-invalid", doc(channel="<dc:language>english</dc:language>"), doc(channel="<dc:language>en-us</dc:language>")),
    ("dc-language-invalid", doc(channel="<dc:language></dc:language>"), doc(channel="<dc:language>fr</dc:language>")),
    ("sy-update-frequency-invalid", doc(channel=f"{SY}0</sy:updateFrequency>"), doc(channel=f"{SY}1</sy:updateFrequency>")),
    ("sy-update-frequency-invalid", doc(channel=f"{SY}1.5</sy:updateFrequency>"), doc(channel=f"{SY} 2 </sy:updateFrequency>")),
    ("namespace-undefined-element", doc(item="<dc:modified>2007-10-15</dc:modified>"), doc(item="<dc:date>2007-10-15</dc:date>")),
    ("itunes-missing-attribute", doc(channel=f"<itunes:image {ITUNES}>http://dallas.example.com/a.jpg</itunes:image>"), doc(channel=f'<itunes:image {ITUNES} href="http://dallas.example.com/a.jpg"/>')),
    ("itunes-owner-missing-email", doc(channel=f"<itunes:owner {ITUNES}><itunes:name>Jim Lehrer</itunes:name></itunes:owner>"), doc(channel=f"<itunes:owner {ITUNES}><itunes:email>jlehrer@dallas.example.com</itunes:email></itunes:owner>")),
    ("itunes-owner-email-invalid", doc(channel=f"<itunes:owner {ITUNES}><itunes:email>Jim Lehrer</itunes:email></itunes:owner>"), doc(channel=f"<itunes:owner {ITUNES}><itunes:email>jlehrer@dallas.example.com</itunes:email></itunes:owner>")),
    ("trackback-url-not-absolute", doc(item=f'{TB} xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" rdf:resource="http://example.org/tb.cgi?tb_id=1"/>'), doc(item=f"{TB}>http://example.org/tb.cgi?tb_id=1</trackback:ping>")),
]  # fmt: skip


def test_clean_profile_feed_has_no_findings() -> None:
    full = doc(
        channel="\n".join(
            [
                "<category>Media</category>",
                '<category domain="dmoz">News/Newspapers/Regional/United_States/Texas</category>',
                CLOUD,
                "<copyright>Copyright 2007 Dallas Times-Herald</copyright>",
                "<docs>https://www.rssboard.org/rss-specification</docs>",
                "<generator>Microsoft Spaces v1.1</generator>",
                IMAGE,
                "<language>epo</language>",
                "<lastBuildDate>Sun, 14 Oct 2007 17:17:44 GMT</lastBuildDate>",
                "<managingEditor>jlehrer@dallas.example.com (Jim Lehrer)</managingEditor>",
                "<pubDate>Sun, 14 Oct 2007 05:00:00 GMT</pubDate>",
                "<skipDays><day>Saturday</day><day>Sunday</day></skipDays>",
                "<skipHours><hour>0</hour><hour>23</hour></skipHours>",
                "<ttl>60</ttl>",
                "<webMaster>helpdesk@dallas.example.com (Help Desk)</webMaster>",
            ]
        ),
        item="\n".join(
            [
                "<author>jbb@dallas.example.com (Joe Bob Briggs)</author>",
                '<category domain="rec.arts.movies.reviews">1983/V</category>',
                "<comments>http://dallas.example.com/feedback/1983/06/joebob.htm</comments>",
                ENCLOSURE,
                "<pubDate>Thu, 04 Oct 2007 23:59:45 GMT</pubDate>",
                '<source url="http://la.example.com/rss.xml">Los Angeles Herald-Examiner</source>',
                "<content:encoded>&lt;p&gt;Full text&lt;/p&gt;</content:encoded>",
                "<slash:comments>13</slash:comments>",
            ]
        ),
    )
    assert run(full) == []


@pytest.mark.parametrize(("rule", "bad", "good"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule_fails_and_passes(rule: str, bad: str, good: str) -> None:
    assert rule in rules_of(bad), f"{rule} should fire"
    assert rule not in rules_of(good), f"{rule} should not fire"


def test_every_rule_has_a_case() -> None:
    """Every rule ``check_feed`` reports (``lint``'s non-feed rules are tested with the documents that are no feed)."""
    assert {c[0] for c in CASES + RSS1_CASES} == set(RULES) - NOT_FEED_RULES - ATOM_RULES  # Atom: test_checks_atom
    assert {c[0] for c in RSS1_CASES} == {rid for rid, r in RULES.items() if r.source == "rss1"}


# Each rule that has a W3C Feed Validator name, checked on a literal example taken from the profile text.
PROFILE_EXAMPLES: list[tuple[str, str, bool]] = [
    # (rule, document, expected to fire)
    ("date-invalid", doc(channel="<pubDate>Mon, 15 Oct 2007 14:10:00 GMT</pubDate>"), False),
    ("date-invalid", doc(channel="<lastBuildDate>Mon, 15 Oct 2007 09:10:00 EST</lastBuildDate>"), False),
    ("date-invalid", doc(item="<pubDate>Mon, 15 Oct 2007 08:10:00 -0600</pubDate>"), False),
    ("date-not-universal-form", doc(item="<pubDate>Thu, 04 Oct 2007 23:59:45 +0000</pubDate>"), False),
    ("date-not-universal-form", doc(item="<pubDate>Thu, 04 Oct 2007 23:59:45 -0000</pubDate>"), False),
    ("date-not-universal-form", doc(item="<pubDate>Thu, 04 Oct 2007 23:59:45 GMT</pubDate>"), False),
    ("date-not-universal-form", doc(item="<pubDate>Fri, 05 Oct 2007 09:00:00 CST</pubDate>"), True),
    ("date-weekday-mismatch", doc(item="<pubDate>Thu, 04 Oct 2007 23:59:45 GMT</pubDate>"), False),
    ("date-weekday-mismatch", doc(channel="<pubDate>Sun, 14 Oct 2007 05:00:00 GMT</pubDate>"), False),
    ("date-two-digit-year", doc(item="<pubDate>Thu, 04 Oct 07 23:59:45 GMT</pubDate>"), True),
    ("date-comment-or-extra-space", doc(item="<pubDate>Thu, 04 Oct 2007 23:59:45   GMT</pubDate>"), True),
    ("date-military-zone", doc(item="<pubDate>Thu, 04 Oct 2007 23:59:45 Z</pubDate>"), False),
    ("email-missing-real-name", doc(channel="<managingEditor>luksa@dallas.example.com (Frank Luksa)</managingEditor>"), False),
    ("email-missing-real-name", doc(channel="<webMaster>helpdesk@dallas.example.com</webMaster>"), True),
    ("email-format", doc(item="<author>jbb@dallas.example.com (Joe Bob Briggs)</author>"), False),
    ("email-missing", doc(item="<author>jbb@dallas.example.com (Joe Bob Briggs)</author>"), False),
    ("character-data-not-hex", doc(title="<title>The &#x26;amp; entity</title>"), False),
    ("character-data-not-hex", doc(title="<title>A&#x3C;B</title>"), False),
    ("character-data-not-hex", doc(title="<title>The &amp;amp; entity</title>"), False),  # the validator's ContainsHTML
    ("character-data-not-hex", doc(title="<title>&lt;b&gt;Bold&lt;/b&gt; move</title>"), False),  # ContainsHTML
    ("character-data-not-hex", doc(title="<title>&amp;lt;b&amp;gt;Bold</title>"), False),  # ContainsHTML
    ("character-data-not-hex", doc(title="<title>NYT &gt; Health</title>"), False),
    ("character-data-not-hex", doc(item_title="<title>Sam &#38; Max</title>"), False),
    ("character-data-not-hex", doc(item_title="<title>AT&amp;T</title>"), False),
    ("character-data-not-hex", doc(item_title="<title><![CDATA[Bill & Ted's Excellent Adventure]]></title>"), False),
    ("character-data-not-hex", doc(item_title="<title>A &lt; B</title>"), False),
    ("character-data-not-hex", doc(item_title="<title>&lt;em&gt;Breaking&lt;/foo&gt;</title>"), True),  # foo: no HTML
    ("character-data-not-hex", doc(item_title="<title>A &lt;B</title><link>http://x.example/&#x26;</link>"), False),
    ("character-data-not-hex", doc(version='version="0.91"', item_title="<title>A &lt;B</title>"), False),
    ("character-data-not-hex", doc(version="", item_title="<title>A &lt;B</title>"), True),
    ("url-not-absolute", doc(link="<link>http://dallas.example.com</link>"), False),
    ("url-not-absolute", doc(item_link="<link>http://dallas.example.com/1983/05/06/joebob.htm</link>"), False),
    ("url-not-absolute", doc(channel="<docs>https://www.rssboard.org/rss-specification</docs>"), False),
    ("version-not-2-0", doc(version='version="2.0"'), False),
    ("version-missing", doc(version='version="2.0"'), False),
    ("channel-missing-required", doc(), False),
    ("duplicate-channel-element", doc(channel="<generator>Microsoft Spaces v1.1</generator>" * 2), True),
    ("duplicate-item-element", doc(item="<title>Joe Bob Goes to the Drive-In</title>"), True),
    ("items-before-channel-elements", doc(after_items="<generator>Microsoft Spaces v1.1</generator>"), True),
    ("cloud-missing-attribute", doc(channel=CLOUD), False),
    ("image-missing-required", doc(channel=IMAGE), False),
    ("image-too-wide", doc(channel=IMAGE), False),
    ("image-size-not-integer", doc(channel=IMAGE), False),
    ("image-too-tall", doc(channel=IMAGE), False),
    ("image-title-mismatch", doc(channel=IMAGE), False),
    ("image-link-mismatch", doc(channel=IMAGE), False),
    ("image-url-format", doc(channel=IMAGE), False),
    ("language-invalid", doc(channel="<language>epo</language>"), False),
    ("skip-day-invalid", doc(channel="<skipDays><day>Saturday</day><day>Sunday</day></skipDays>"), False),
    ("skip-hour-invalid", doc(channel="<skipHours><hour>0</hour><hour>22</hour><hour>23</hour></skipHours>"), False),
    ("skip-hour-24", doc(channel="<skipHours><hour>24</hour></skipHours>"), True),
    ("text-input-present", doc(channel=TEXT_INPUT), True),
    ("text-input-missing-required", doc(channel=TEXT_INPUT), False),
    ("text-input-name-invalid", doc(channel=TEXT_INPUT), False),
    ("ttl-not-positive-integer", doc(channel="<ttl>60</ttl>"), False),
    ("item-missing-title-and-description", doc(item_title=None), False),
    ("item-missing-title-and-description", doc(item_description=None), False),
    ("enclosure-missing-attribute", doc(item=ENCLOSURE), False),
    ("enclosure-length-not-integer", doc(item=ENCLOSURE), False),
    ("enclosure-length-unknown", doc(item=ENCLOSURE.replace('"24986239"', '"0"')), False),
    ("enclosure-url-not-absolute", doc(item=ENCLOSURE), False),
    ("duplicate-enclosure", doc(item=ENCLOSURE * 2), True),
    ("guid-permalink-not-url", doc(item_guid="<guid>http://dallas.example.com/1983/05/06/joebob.htm</guid>"), False),
    ("guid-permalink-not-url", doc(item_guid='<guid isPermaLink="false">tag:dallas.example.com,4131:news</guid>'), False),
    ("guid-permalink-not-url", doc(item_guid="<guid>tag:dallas.example.com,4131:news</guid>"), False),
    ("guid-is-permalink-invalid", doc(item_guid='<guid isPermaLink="false">tag:dallas.example.com,4131:news</guid>'), False),
    ("item-missing-guid", doc(item_guid=None), True),
    ("source-missing-url", doc(item='<source url="http://la.example.com/rss.xml">Los Angeles Herald-Examiner</source>'), False),
    ("source-url-not-absolute", doc(item='<source url="http://la.example.com/rss.xml">Los Angeles Herald-Examiner</source>'), False),
    ("missing-atom-self-link", doc(self_link='<atom:link href="http://dallas.example.com/rss.xml" rel="self" type="application/rss+xml" />'), False),
    ("atom-link-missing-href", doc(), False),
    ("content-before-description", doc(item="<content:encoded>full</content:encoded>"), False),
    ("content-without-description", doc(item="<content:encoded>full</content:encoded>"), False),
    ("author-and-dc-creator", doc(item="<dc:creator>Joe Bob Briggs</dc:creator>"), False),
    ("author-and-dc-creator", doc(item="<author>jbb@dallas.example.com (Joe Bob Briggs)</author><dc:creator>Joe Bob Briggs</dc:creator>"), True),
    ("contact-and-dc-creator", doc(channel="<managingEditor>jlehrer@dallas.example.com (Jim Lehrer)</managingEditor><dc:creator>Joe Bob Briggs</dc:creator>"), True),
    ("slash-comments-without-last-build-date", doc(item="<slash:comments>13</slash:comments>"), True),
    ("slash-comments-not-integer", doc(channel="<lastBuildDate>Sun, 14 Oct 2007 17:17:44 GMT</lastBuildDate>", item="<slash:comments>13</slash:comments>"), False),
    ("undefined-element", doc(channel=IMAGE + TEXT_INPUT + CLOUD), False),
    ("text-element-has-children", doc(item_title="<title>Seventh Heaven! <em>Ryan</em> Hurls Another No Hitter</title>"), True),
    ("multiple-channels", doc(), False),
    ("channel-missing", doc(), False),
    ("description-relative-url", doc(item_description='<description>&lt;a href="http://www.imdb.com/title/tt0086525/"&gt;Valley Girl&lt;/a&gt;</description>'), False),
    ("skip-day-duplicate", doc(channel="<skipDays><day>Saturday</day><day>Sunday</day></skipDays>"), False),
    ("skip-hour-duplicate", doc(channel="<skipHours><hour>0</hour><hour>1</hour><hour>2</hour><hour>22</hour><hour>23</hour></skipHours>"), False),
    ("cloud-attribute-invalid", doc(channel=CLOUD), False),
    ("duplicate-image-element", doc(channel=IMAGE), False),
    ("duplicate-text-input-element", doc(channel=TEXT_INPUT), False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("rule", "text", "fires"), PROFILE_EXAMPLES, ids=[f"{c[0]}-{i}" for i, c in enumerate(PROFILE_EXAMPLES)]
)
def test_profile_examples(rule: str, text: str, fires: bool) -> None:
    assert (rule in rules_of(text)) is fires


def test_every_w3c_rule_has_a_profile_example() -> None:
    covered = {c[0] for c in PROFILE_EXAMPLES}
    missing = {rid for rid, r in RULES.items() if r.w3c and r.source == "profile"} - covered
    assert not missing


def test_rules_table_is_well_formed() -> None:
    assert len(RULES) >= 40
    kebab = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*\Z")
    for key, rule in RULES.items():
        assert isinstance(rule, Rule)
        assert rule.id == key
        assert kebab.match(rule.id), rule.id
        assert rule.severity in ("error", "warning"), rule.id
        assert rule.title and "\n" not in rule.title
        assert isinstance(rule.w3c, tuple), rule.id
        assert all(re.fullmatch(r"[A-Z][A-Za-z0-9]+", name) for name in rule.w3c), rule.w3c
        assert len(set(rule.w3c)) == len(rule.w3c), rule.id
        assert rule.source in ("profile", "rss2", "namespace", "rss1", "atom"), rule.id
        assert rule.id.startswith("rss1-") == (rule.source == "rss1"), rule.id
        assert rule.source != "atom" or rule.id.startswith("atom-"), rule.id
    assert len({r.id for r in RULES.values()}) == len(RULES)
    brief = {
        "InvalidRFC2822Date", "ProblematicalRFC822Date", "DuplicateElement", "DuplicateEnclosure", "MissingGuid",
        "ContainsRelRef", "InvalidWidth", "InvalidHeight", "EmailFormat", "MissingRealName", "MisplacedItem",
        "ImageTitleDoesntMatch", "ImageLinkDoesntMatch", "AvoidTextInput", "NeedDescriptionBeforeContent",
        "SlashDate", "UseZeroForMidnight", "UseZeroForUnknown", "MissingAtomSelfLink", "CharacterData",
    }  # fmt: skip
    assert brief <= {name for r in RULES.values() for name in r.w3c}
    with pytest.raises(FrozenInstanceError):
        RULES["date-invalid"].severity = "warning"  # type: ignore[misc]


def test_rule_sections_exist_in_profile() -> None:
    if not PROFILE.is_file():
        pytest.skip(f"profile text not found at {PROFILE}")
    headings = set(re.findall(r"^(\d+(?:\.\d+)*)\.? ", PROFILE.read_text(encoding="utf-8"), re.M))
    for rule in RULES.values():
        if rule.source == "rss1":  # a section of the RSS 1.0 specification (5 core syntax, 6 modules)
            assert rule.section in RSS1_SECTIONS, (rule.id, rule.section)
        elif rule.source == "atom":  # a section of RFC 4287
            assert re.fullmatch(r"[1-8](?:\.\d+)*", rule.section), (rule.id, rule.section)
        else:
            assert rule.section in headings, (rule.id, rule.section)


def test_findings_shape_counts_and_examples() -> None:
    long_title = "A&lt;B " + "x" * 500
    text = doc(
        title=f"<title>{long_title}</title>",
        item_guid=None,
        item="<pubDate>2007-10-15</pubDate><pubDate>junk</pubDate>",
    )
    body = text.replace("<item>", "<item><title>second</title><description>d</description></item><item>", 1)
    findings = run(body)
    assert len({(f.rule, f.scope) for f in findings}) == len(findings)
    by_rule = {(f.rule, f.scope): f for f in findings}
    assert by_rule[("item-missing-guid", "item")].count == 2
    dates = by_rule[("date-invalid", "item")]
    assert (dates.count, dates.example, dates.severity) == (2, "2007-10-15", "error")
    assert by_rule[("duplicate-item-element", "item")].example == "pubDate"
    chardata = by_rule[("character-data-not-hex", "channel")]
    assert chardata.example is not None and len(chardata.example) <= 200 and chardata.example.startswith("A&lt;B")
    assert chardata.severity == "warning"
    # findings come in RULES order
    order = list(RULES)
    assert [order.index(f.rule) for f in findings] == sorted(order.index(f.rule) for f in findings)


def test_scopes_are_separate() -> None:
    text = doc(channel="<pubDate>yesterday</pubDate>", item="<pubDate>today</pubDate>")
    scopes = {f.scope for f in run(text) if f.rule == "date-invalid"}
    assert scopes == {"channel", "item"}


def test_future_dates_use_now_and_default_to_the_clock() -> None:
    text = doc(item="<pubDate>Sat, 20 Oct 2007 12:00:00 GMT</pubDate>")
    assert "item-date-in-future" in rules_of(text)
    assert "item-date-in-future" not in rules_of(text, now=datetime(2008, 1, 1))  # naive means UTC
    body = text.encode()
    root = etree.fromstring(body)
    assert "item-date-in-future" not in {f.rule for f in check_feed(root, format="rss", body=body)}
    far = doc(item="<pubDate>Fri, 01 Jan 2100 00:00:00 GMT</pubDate>").encode()
    assert "item-date-in-future" in {f.rule for f in check_feed(etree.fromstring(far), format="rss", body=far)}


def test_character_data_needs_body_and_skips_utf16() -> None:
    text = doc(title="<title>AT&lt;T</title>")
    root = etree.fromstring(text.encode())
    assert "character-data-not-hex" not in {f.rule for f in check_feed(root, format="rss")}
    utf16 = text.replace('encoding="utf-8"', 'encoding="utf-16"').encode("utf-16")
    root16 = etree.fromstring(utf16)
    rules = {f.rule for f in check_feed(root16, format="rss", body=utf16, now=NOW)}
    assert "character-data-not-hex" not in rules
    assert "missing-atom-self-link" not in rules  # the rest of the checks still ran on the tree


def test_other_formats_get_no_findings_and_rss1_only_its_own() -> None:
    atom = b'<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title></feed>'
    rdf = (
        b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">'
        b"<channel><title>t</title><language>en</language></channel></rdf:RDF>"
    )
    atom_findings = check_feed(etree.fromstring(atom), format="atom", body=atom)
    assert {(f.rule, f.example) for f in atom_findings} == {
        ("atom-missing-required", "atom:id, atom:updated"),
        ("atom-self-link-missing", "atom:feed"),
    }
    rss1 = check_feed(etree.fromstring(rdf), format="rdf", body=rdf)
    assert {f.rule for f in rss1} == {"rss1-undefined-element", "rss1-missing-required", "rss1-about-missing"}
    assert {f.source for f in rss1} == {"rss1"}
    assert check_feed(etree.fromstring(doc().encode()), format="unknown") == []
    assert check_feed(etree.fromstring(rdf), format="unknown") == []  # not a feed: the census keeps no rule rows
    assert check_feed(None, format="rss") == []
    assert check_feed(None, format="rdf") == []
    # an RSS 2.0 document with what RSS 1.0 rejects gets no RSS 1.0 rule, and RSS 1.0 none of the profile's
    assert not {f.source for f in run(doc(channel="<language>en</language>"))} & {"rss1"}
    assert {f.source for f in run(RSS1.replace("</channel>", "<ttl>x</ttl></channel>", 1))} == {"rss1"}


def test_recovered_and_odd_documents_do_not_raise() -> None:
    broken = (
        b'<rss version="2.0"><channel><title>AT&T <b>bold</b></title><link>x</link>'
        b"<item><pubDate>Mon, 99 Foo 20071 99:99:99 +9999</pubDate><enclosure length='&#45;1'/>"
        b"<guid isPermaLink=''></guid><skipHours><hour/></skipHours></item>"
        b"<item><title/></item></channel><channel/><!-- c --><?pi x?></rss>"
    )
    root = etree.fromstring(broken, etree.XMLParser(recover=True, resolve_entities=False, no_network=True))
    findings = check_feed(root, format="rss", body=broken, now=NOW)
    assert all(isinstance(f, Finding) and f.rule in RULES and f.count >= 1 for f in findings)
    rules = {f.rule for f in findings}
    assert {"multiple-channels", "text-element-has-children", "date-invalid", "enclosure-length-unknown"} <= rules
    assert {"guid-is-permalink-invalid", "undefined-element", "item-missing-title-and-description"} <= rules
    entity = (
        b'<!DOCTYPE rss [<!ENTITY co "Dallas &#38;#38; Co">]><rss version="2.0"><channel><title>&co;</title>'
        b"<link>http://d.example.com</link><description>&co;</description></channel></rss>"
    )
    root = etree.fromstring(entity, etree.XMLParser(resolve_entities=False, no_network=True))
    rules = {f.rule for f in check_feed(root, format="rss", body=entity)}
    assert "text-element-has-children" not in rules  # an unresolved entity reference is not a child element
    assert "channel-missing-required" not in rules


def _parse(body: bytes) -> etree._Element | None:
    try:
        return etree.fromstring(body, etree.XMLParser(resolve_entities=False, no_network=True))
    except etree.XMLSyntaxError:
        return etree.fromstring(body, etree.XMLParser(resolve_entities=False, no_network=True, recover=True))


def _format(root: etree._Element | None) -> str:
    if root is None or not isinstance(root.tag, str):
        return "unknown"
    local = etree.QName(root).localname.lower()
    return {"rss": "rss", "rdf": "rdf", "feed": "atom"}.get(local, "unknown")


def test_benchmark_corpus_never_raises() -> None:
    if not BENCHMARK_FEEDS.is_dir():
        pytest.skip(f"benchmark corpus not found at {BENCHMARK_FEEDS}")
    files = sorted(p for p in BENCHMARK_FEEDS.iterdir() if p.is_file() and not p.name.endswith((".md", ".tsv")))
    assert len(files) > 100
    checked = 0
    elapsed = 0.0
    for path in files:
        body = path.read_bytes()
        root = _parse(body)
        fmt = _format(root)
        start = time.perf_counter()
        findings = check_feed(root, format=fmt, body=body)
        elapsed += time.perf_counter() - start
        assert all(f.rule in RULES and f.count >= 1 for f in findings), path.name
        assert all(f.example is None or len(f.example) <= 200 for f in findings), path.name
        if fmt == "rss":
            checked += 1
            assert findings is not None
        elif fmt == "rdf":
            assert {f.source for f in findings} <= {"rss1", "namespace"}, path.name
        elif fmt == "atom":
            assert {f.source for f in findings} <= {"atom"}, path.name
        else:
            assert findings == []
    assert checked > 100
    assert elapsed < 10  # generous: measured ~0.1 s for the whole corpus


# ---------------------------------------------------------------- the parser's notes (lifted CDATA, kept children)

LONG = "<p>See <a href='/about'>this</a> & that</p>\n" * 60  # lifted by parse_feed(with_notes=True)


def test_check_feed_with_the_parsers_notes_finds_the_same() -> None:
    item = (
        f"<item><description><![CDATA[{LONG}]]></description>"
        "<title>Fish &lt;and chips</title><pubDate>Thu, 04 Oct 2007 23:59:45 GMT</pubDate>"
        f"<content:encoded><![CDATA[{LONG}]]></content:encoded><guid>x</guid></item>\n"
    )
    body = doc(after_items=item * 3).encode()
    plain = parse_feed(body)
    noted = parse_feed(body, with_notes=True)
    assert noted.notes is not None and noted.notes.children  # the channel and items were kept
    expected = check_feed(plain.root, format="rss", body=body, now=NOW)
    found = check_feed(noted.root, format="rss", body=body, now=NOW, notes=noted.notes)
    assert found == expected
    rules = {f.rule: f for f in found}
    assert rules["description-relative-url"].example == "/about"  # read from the restored CDATA
    assert rules["character-data-not-hex"].example == "Fish &lt;and chips"  # found by line, after the lifted lines
    assert rules["guid-permalink-not-url"].count == 3  # the three added items, read through the kept children


_DAY_NAMES = st.sampled_from(["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"])
_MONTH_NAMES = st.sampled_from(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"])


@settings(max_examples=500, deadline=None)
@given(
    _DAY_NAMES,
    st.integers(0, 35),
    _MONTH_NAMES,
    st.integers(0, 9999),
    st.integers(0, 25),
    st.integers(0, 61),
    st.integers(0, 61),
    st.sampled_from(["+0000", "-0000", "GMT"]),
    st.sampled_from(["", " ", "\n\t"]),
)
def test_universal_date_shortcut_agrees_with_the_full_analysis(
    wd: str, day: int, mon: str, year: int, hh: int, mm: int, ss: int, zone: str, pad: str
) -> None:
    value = f"{pad}{wd}, {day:02d} {mon} {year:04d} {hh:02d}:{mm:02d}:{ss:02d} {zone}{pad}"
    fast = universal_date(value)
    try:
        full = analyse_date(value)
    except ValueError:  # year 0: the full analysis raises, and the shortcut must leave it to it
        assert fast is None
        return
    if fast is None:
        assert not full.valid
    else:
        assert full.valid and full.universal and not full.comment_or_space and not full.military
        assert not full.two_digit_year
        assert fast == (full.timestamp, full.weekday_ok)


# ---------------------------------------------------------------- one RFC 822 tokeniser, military zones

_ZONES = st.sampled_from(["GMT", "gmt", "UT", "EST", "pdt", "Z", "A", "b", "M", "N", "Y", "J", "+0000", "-0000", "+0130", "-2359", "+0099", "UTC"])  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from(["", "Mon, ", "Thu, ", "thu , ", "Thursday, "]),
    st.integers(0, 35),
    st.sampled_from(["Jan", "Feb", "oct", "DEC", "Sept"]),
    st.sampled_from(["07", "99", "2007", "0000", "2024", "20071"]),
    st.integers(0, 25),
    st.integers(0, 61),
    st.sampled_from(["", ":00", ":45", ":60", ":61"]),
    _ZONES,
    st.sampled_from([":", " : "]),
    st.sampled_from([" ", "  ", "\t"]),
)
def test_the_date_rules_and_parse_date_read_rfc822_the_same_way(
    wd: str, day: int, mon: str, year: str, hh: int, mm: int, ss: str, zone: str, colon: str, space: str
) -> None:
    from pipelines.document.dates import FallbackBudget, parse_date

    value = space.join([f"{wd}{day}", mon, year, f"{hh:02d}{colon}{mm:02d}{ss}", zone])
    analysis = analyse_date(value)
    # no dateparser (an empty budget): what it makes of a value that is no RFC 822 date is not compared here,
    # and it takes ~27 ms to give up on each
    dt, form = parse_date(value, FallbackBudget(misses=0))
    assert analysis.valid is (form in ("rfc822-universal", "rfc822-other-zone", "rfc822-2digit-year"))
    if analysis.valid:
        assert dt is not None and analysis.timestamp == dt.timestamp()
        assert analysis.two_digit_year is (form == "rfc822-2digit-year")
        assert analysis.universal is (form == "rfc822-universal")


@pytest.mark.parametrize("zone", ["A", "B", "I", "K", "M", "N", "Y", "a"])
def test_military_zones_are_valid_read_as_utc_and_warned_about(zone: str) -> None:
    # RFC 822 section 5 defines them with their signs reversed; RFC 1123 5.2.14 and RFC 2822 4.3: treat as -0000,
    # i.e. the time is Universal Time and the local zone unknown. Both the checks and parse_date read them so.
    from pipelines.document.dates import parse_date

    future = f"Sat, 20 Oct 2007 12:00:00 {zone}"  # after NOW when read as UTC
    rules = rules_of(doc(item=f"<pubDate>{future}</pubDate>"))
    assert {"date-military-zone", "date-not-universal-form", "item-date-in-future"} <= rules
    assert "date-invalid" not in rules
    assert analyse_date(future).timestamp == datetime(2007, 10, 20, 12, tzinfo=UTC).timestamp()
    assert parse_date(future) == (datetime(2007, 10, 20, 12, tzinfo=UTC), "rfc822-other-zone")
    past = f"Fri, 05 Oct 2007 09:00:00 {zone}"
    assert "item-date-in-future" not in rules_of(doc(item=f"<pubDate>{past}</pubDate>"))
    assert "date-military-zone" not in rules_of(doc(item="<pubDate>Sat, 20 Oct 2007 12:00:00 Z</pubDate>"))


# ---------------------------------------------------------------- a rule that raises


class _OddGuid(etree.ElementBase):
    """A guid whose attributes cannot be read: the guid rules raise on it."""

    def get(self, key: object, default: object = None) -> NoReturn:
        raise ValueError(f"cannot read {key}")


def test_a_rule_that_raises_is_reported_and_the_other_rules_still_run() -> None:
    text = doc(item="<comments>/feedback</comments>", after_items=f"<item><title>x</title>{'<guid>1</guid>'}</item>")
    body = text.encode()
    lookup = etree.ElementNamespaceClassLookup()
    lookup.get_namespace(None)["guid"] = _OddGuid
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    parser.set_element_class_lookup(lookup)
    odd = check_feed(etree.fromstring(body, parser), format="rss", body=body, now=NOW)
    clean = check_feed(etree.fromstring(body), format="rss", body=body, now=NOW)
    guid_rules = {"guid-permalink-not-url", "guid-is-permalink-invalid"}
    assert "guid-permalink-not-url" in {f.rule for f in clean}  # the second item's guid "1" is no URL
    # every other rule ran and found the same as on the readable document
    assert [f for f in odd if f.rule not in guid_rules] == [f for f in clean if f.rule not in guid_rules]
    assert {f.rule for f in odd} & guid_rules == set()
    assert {(f.rule, f.count, f.error) for f in odd.failures} == {
        ("guid-permalink-not-url", 2, "ValueError: cannot read isPermaLink"),
        ("guid-is-permalink-invalid", 2, "ValueError: cannot read isPermaLink"),
    }
    assert clean.failures == ()


def test_the_feed_pipeline_counts_failed_rules_and_logs_each_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from scrapy.utils.test import get_crawler

    import pipelines.document.process
    import pipelines.feed
    from pipelines.document.checks import CheckResult, RuleFailure
    from schemas.items import FeedDocument

    def failing_check_feed(root: object, **kw: object) -> CheckResult:
        return CheckResult([], [RuleFailure("guid-permalink-not-url", 2, "ValueError: odd")])

    monkeypatch.setattr(pipelines.document.process, "check_feed", failing_check_feed)
    crawler = get_crawler(settings_dict={"FEEDCENSUS_WORKERS": 0})  # in this process, where the patch is
    pipeline = pipelines.feed.FeedPipeline.from_crawler(crawler)
    body = doc().encode()
    for n in range(3):
        url = f"http://dallas.example.com/rss{n}.xml"
        item = FeedDocument(
            url=url, final_url=url, status=200, headers={}, body=body, discovered_via="url", source=None, depth=0
        )
        asyncio.run(pipeline.process_item(item))
    assert crawler.stats is not None
    assert crawler.stats.get_value("feedcensus/checks/internal_error/guid-permalink-not-url") == 6
    warnings = [r for r in caplog.records if r.name == "pipelines.feed" and "guid-permalink-not-url" in r.message]
    assert len(warnings) == 1 and "ValueError: odd" in warnings[0].message


def test_every_rule_in_the_tables_is_a_rule_of_the_profile() -> None:
    from pipelines.document.checks.channel import CHANNEL
    from pipelines.document.checks.channel_parts import (
        CLOUD_RULES,
        IMAGE,
        SKIP_DAYS_RULES,
        SKIP_HOURS_RULES,
        TEXT_INPUT,
    )
    from pipelines.document.checks.datetimes import DATE_RULES
    from pipelines.document.checks.item import ITEM
    from pipelines.document.checks.rss import RSS
    from pipelines.document.checks.rss1 import CHANNEL as RSS1_CHANNEL
    from pipelines.document.checks.rss1 import IMAGE as RSS1_IMAGE
    from pipelines.document.checks.rss1 import ITEM as RSS1_ITEM_SECTION
    from pipelines.document.checks.rss1 import ROOT, TEXTINPUT

    ids = {rule for rule, _ in (*CLOUD_RULES, *SKIP_DAYS_RULES, *SKIP_HOURS_RULES, *DATE_RULES)}
    rss1_sections = (ROOT, RSS1_CHANNEL, RSS1_IMAGE, RSS1_ITEM_SECTION, TEXTINPUT)
    for section in (RSS, CHANNEL, ITEM, IMAGE, TEXT_INPUT, *rss1_sections):
        ids |= {rule for rule, _ in section.scope_rules}
        for rules in (*section.text_rules.values(), *section.element_rules.values()):
            ids |= {rule for rule, _ in rules}
    walks = {rule for rule in ids if rule.startswith("walk:")}
    assert ids - walks <= set(RULES)
    assert walks == {
        "walk:channel", "walk:image", "walk:item", "walk:textInput", "walk:skipDays", "walk:skipHours",
        "walk:textinput",
    }  # fmt: skip
    # not in the tables: what the walk decides for every scope, and the rules decided together with another
    walked = ATOM_RULES | {
        "undefined-element", "namespace-undefined-element", "text-element-has-children", "character-data-not-hex",
        "rss1-undefined-element",
    }  # fmt: skip
    decided_with_another = {
        "url-not-ascii", "email-missing-real-name", "email-format", "itunes-owner-email-invalid",
        "html-unsafe-attribute", "html-unsafe-style",
    }  # fmt: skip
    assert set(RULES) - ids == walked | decided_with_another | NOT_FEED_RULES
    assert {section.undefined for section in rss1_sections} == {"rss1-undefined-element"}
    assert all(RULES[rule].source == "rss1" for section in rss1_sections for rule, _ in section.scope_rules
               if not rule.startswith("walk:") and rule != "duplicate-namespace-element")  # fmt: skip


# ---------------------------------------------------------------- what the walk does to be fast changes no finding


def _sections_without_shortcuts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every section as it would be without ``about`` and ``later``: each rule on each scope, in line."""
    import dataclasses

    from pipelines.document.checks import channel, channel_parts, rss

    plain = {
        name: dataclasses.replace(getattr(module, name), about={}, later=frozenset())
        for module, name in ((rss, "RSS"), (rss, "CHANNEL"), (channel, "ITEM"), (channel_parts, "IMAGE"))
    }
    plain["TEXT_INPUT"] = dataclasses.replace(channel_parts.TEXT_INPUT, about={}, later=frozenset())
    monkeypatch.setattr(rss, "RSS", plain["RSS"])
    monkeypatch.setattr(rss, "CHANNEL", plain["CHANNEL"])
    monkeypatch.setattr(channel, "ITEM", plain["ITEM"])
    monkeypatch.setattr(channel_parts, "IMAGE", plain["IMAGE"])
    monkeypatch.setattr(channel_parts, "TEXT_INPUT", plain["TEXT_INPUT"])


def test_rules_about_absent_elements_and_later_rules_change_no_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    if not BENCHMARK_FEEDS.is_dir():
        pytest.skip(f"benchmark corpus not found at {BENCHMARK_FEEDS}")
    files = sorted(p for p in BENCHMARK_FEEDS.iterdir() if p.is_file() and not p.name.endswith((".md", ".tsv")))
    parsed = [(body, parse_feed(body, with_notes=True)) for body in (p.read_bytes() for p in files)]
    fast = [check_feed(p.root, format=p.format, body=body, now=NOW, notes=p.notes) for body, p in parsed]
    _sections_without_shortcuts(monkeypatch)
    slow = [check_feed(p.root, format=p.format, body=body, now=NOW, notes=p.notes) for body, p in parsed]
    assert sum(map(len, fast)) > 100
    assert [list(r) for r in fast] == [list(r) for r in slow]
    assert [r.failures for r in fast] == [r.failures for r in slow] == [()] * len(files)


def test_later_rules_run_in_document_order_across_batches() -> None:
    from pipelines.document.checks import walk as walk_module

    n = walk_module._LATER_AT_ONCE * 2 + 7  # three batches
    bad = {5: "junk", 300: "", n - 1: "Thu, 31 Feb 2007 10:00:00 GMT"}
    future = {40: "Sat, 20 Oct 2007 12:00:00 GMT", n - 3: "Sun, 21 Oct 2007 12:00:00 GMT"}
    pub = [bad.get(i, future.get(i, "Mon, 15 Oct 2007 14:10:00 GMT")) for i in range(n)]
    items = "".join(
        f"<item><title>{i}</title><pubDate>{d}</pubDate><guid>x:{i}</guid></item>" for i, d in enumerate(pub)
    )
    found = {(f.rule, f.scope): f for f in run(doc(after_items=items))}
    assert (found[("date-invalid", "item")].count, found[("date-invalid", "item")].example) == (3, "junk")
    in_future = found[("item-date-in-future", "item")]
    assert (in_future.count, in_future.example) == (2, future[40])


def test_a_later_rule_that_raises_is_reported_and_the_rest_run() -> None:
    from pipelines.document.checks.context import Acc
    from pipelines.document.checks.walk import Section, Walk, walk_inner

    seen: list[str] = []

    def note(acc: Acc, scope: str, text: str, el: etree._Element) -> None:
        if text == "bad":
            raise ValueError("odd")
        seen.append(text)

    section = Section(
        scope="item", defined=frozenset(["x"]), text_rules={"x": (("x-rule", note),)}, later=frozenset(["x"])
    )
    root = etree.fromstring(b"<c><item><x>1</x><x>bad</x></item><item><x>2</x></item><item><x>3</x></item></c>")
    acc = Acc(b"", NOW)
    walk_inner(acc, section, Walk("channel", root, [(el, "item") for el in root], None), "item")
    assert seen == ["1", "2", "3"]
    assert [(f.rule, f.count, f.error) for f in acc.result().failures] == [("x-rule", 1, "ValueError: odd")]


def test_scope_rules_about_elements_run_only_when_one_is_there() -> None:
    from pipelines.document.checks.item import ITEM
    from pipelines.document.checks.walk import Section

    with pytest.raises(ValueError, match="not scope rules"):
        Section(scope="item", defined=frozenset(), about={"no-such-rule": frozenset(["x"])})
    bare = [rule for rule, _ in ITEM.rules_for({"title": 1, "guid": 1})]
    assert bare == ["item-missing-title-and-description", "duplicate-item-element", "item-missing-guid"]
    rich = [rule for rule, _ in ITEM.rules_for({"title": 1, "content:encoded": 1, "dc:creator": 1})]
    assert rich == [
        "item-missing-title-and-description",
        "duplicate-item-element",
        "item-missing-guid",
        "content-before-description",
        "content-without-description",
        "author-and-dc-creator",
        "duplicate-namespace-element",
    ]
    everything = {rule for rule, _ in ITEM.scope_rules}
    assert {rule for rule, _ in ITEM.rules_for(dict.fromkeys(ITEM._about_names, 1))} == everything


@settings(max_examples=1000, deadline=None)
@given(
    st.text(alphabet=["a", "Z", "9", ":", "/", "+", ".", "-", "#", " ", "\t", "\n", "\u00a0", "\u3000", "é", "\x7f"])
)
def test_the_url_shortcut_decides_as_the_two_url_rules(text: str) -> None:
    from pipelines.document.checks.context import Acc
    from pipelines.document.checks.values import check_url

    if re.match(r"\s*[A-Za-z][A-Za-z0-9+.\-]*:", text) is None:
        expected = {"url-not-absolute"}
    elif re.search(r"[^\x21-\x7e]", text.strip()) is not None:
        expected = {"url-not-ascii"}
    else:
        expected = set()
    acc = Acc(b"", NOW)
    check_url(acc, "item", text)
    assert {rule for rule, _ in acc.hits} == expected


@settings(max_examples=500, deadline=None)
@given(
    st.sampled_from(["", "Mon, ", "Thu, ", "thu , ", "(c) Thu, "]),
    st.integers(0, 35),
    st.sampled_from(["Oct", "oct", "Feb"]),
    st.sampled_from(["07", "2007", "0000"]),
    st.sampled_from(["23:59", "23:59:45", "24:00:00"]),
    _ZONES,
    st.sampled_from([" ", "  ", "\t"]),
)
def test_the_date_verdict_is_the_date_rules_on_the_analysis(
    wd: str, day: int, mon: str, year: str, time_: str, zone: str, space: str
) -> None:
    from pipelines.document.checks.datetimes import DATE_RULES, date_verdict

    value = space.join([f"{wd}{day}", mon, year, time_, zone])
    try:
        analysis = analyse_date(value)
    except ValueError:  # year 0, as in the shortcut's test
        return
    rules, timestamp = date_verdict(value)
    if universal_date(value) is None:
        assert rules == tuple(rule for rule, breaks in DATE_RULES if breaks(analysis))
    assert timestamp == analysis.timestamp


# ---------------------------------------------------------------- RSS 1.0 (source "rss1")

#: The sections of the RSS 1.0 specification (RDF Site Summary 1.0): 5.x core syntax, 6 modules.
RSS1_SECTIONS = frozenset(
    [
        "5",
        "5.1",
        "5.2",
        "5.3",
        "5.3.1",
        "5.3.2",
        "5.3.3",
        "5.3.4",
        "5.3.5",
        "5.3.6",
        "5.4",
        "5.4.1",
        "5.4.2",
        "5.4.3",
        "5.5",
        "5.5.1",
        "5.5.2",
        "5.5.3",
        "5.6",
        "5.6.1",
        "5.6.2",
        "5.6.3",
        "5.6.4",
        "6",
    ]
)
RSS1_NAMESPACES = (
    'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" '
    'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:sy="http://purl.org/rss/1.0/modules/syndication/" '
    'xmlns:trackback="http://madskills.com/public/xml/rss/module/trackback/"'
)
RSS1_ITEM = """<item rdf:about="http://xml.com/pub/2000/08/09/xslt/xslt.html">
  <title>Processing Inclusions with XSLT</title>
  <link>http://xml.com/pub/2000/08/09/xslt/xslt.html</link>
  <description>Processing document inclusions with general XML tools can be problematic.</description>
  <dc:subject>XML</dc:subject><dc:subject>XSLT</dc:subject>
  <trackback:ping rdf:resource="http://xml.com/tb.cgi?tb_id=1"/>
  <trackback:about rdf:resource="http://example.com/foo/1.html"/>
  <trackback:about rdf:resource="http://example.com/bar/7.html"/>
</item>"""
#: The RSS 1.0 specification's example document (section 8), with Dublin Core, Syndication and Trackback.
RSS1 = f"""<?xml version="1.0"?>
<rdf:RDF {RSS1_NAMESPACES}>
  <channel rdf:about="http://www.xml.com/xml/news.rss">
    <title>XML.com</title>
    <link>http://xml.com/pub</link>
    <description>XML.com features a rich mix of information and services for the XML community.</description>
    <dc:language>en-us</dc:language>
    <dc:date>2000-08-09T12:00:00Z</dc:date>
    <sy:updatePeriod>hourly</sy:updatePeriod>
    <sy:updateFrequency>2</sy:updateFrequency>
    <image rdf:resource="http://xml.com/universal/images/xml_tiny.gif" />
    <items>
      <rdf:Seq>
        <rdf:li resource="http://xml.com/pub/2000/08/09/xslt/xslt.html" />
        <rdf:li rdf:resource="http://xml.com/pub/2000/08/09/rdfdb/index.html" />
      </rdf:Seq>
    </items>
    <textinput rdf:resource="http://search.xml.com" />
  </channel>
  <image rdf:about="http://xml.com/universal/images/xml_tiny.gif">
    <title>XML.com</title>
    <link>http://www.xml.com</link>
    <url>http://xml.com/universal/images/xml_tiny.gif</url>
  </image>
  {RSS1_ITEM}
  <item rdf:about="http://xml.com/pub/2000/08/09/rdfdb/index.html">
    <title>Putting RDF to Work</title>
    <link>http://xml.com/pub/2000/08/09/rdfdb/index.html</link>
  </item>
  <textinput rdf:about="http://search.xml.com">
    <title>Search XML.com</title>
    <description>Search XML.com's XML collection</description>
    <name>s</name>
    <link>http://search.xml.com</link>
  </textinput>
</rdf:RDF>
"""


def rss1(old: str, new: str = "") -> str:
    """:data:`RSS1` with the first ``old`` replaced by ``new`` (``old`` must be there)."""
    assert old in RSS1, old
    return RSS1.replace(old, new, 1)


_ITEM2 = '<item rdf:about="http://xml.com/pub/2000/08/09/rdfdb/index.html">'
_CHANNEL_END = '<textinput rdf:resource="http://search.xml.com" />\n  </channel>'
_IMAGE_URL = "<url>http://xml.com/universal/images/xml_tiny.gif</url>"

# (rule, failing document, passing document): every rule of source rss1 at least once.
RSS1_CASES: list[tuple[str, str, str]] = [
    ("rss1-channel-missing", re.sub(r"<channel .*?</channel>", "", RSS1, flags=re.S), RSS1),
    ("rss1-undefined-element", rss1("<dc:language>en-us</dc:language>", "<language>en-us</language>"), RSS1),
    ("rss1-undefined-element", rss1("<dc:subject>XML</dc:subject>", "<pubDate>Wed, 09 Aug 2000 12:00:00 GMT</pubDate>"), rss1("<dc:subject>XML</dc:subject>", "<dc:date>2000-08-09T12:00:00Z</dc:date>")),
    ("rss1-undefined-element", rss1(_IMAGE_URL, _IMAGE_URL + "<width>88</width>"), RSS1),
    ("rss1-undefined-element", rss1(_CHANNEL_END, _CHANNEL_END.replace("</channel>", RSS1_ITEM.replace("xslt.html\"", "x.html\"") + "</channel>")), RSS1),
    ("rss1-undefined-element", rss1("</rdf:RDF>", "<foo/></rdf:RDF>"), rss1("</rdf:RDF>", "<dc:foo/></rdf:RDF>")),
    ("rss1-duplicate-element", rss1("<items>", "<items><rdf:Seq/></items><items>"), RSS1),
    ("rss1-duplicate-element", rss1("</rdf:RDF>", '<channel rdf:about="http://x.example/"/></rdf:RDF>'), RSS1),
    ("rss1-duplicate-element", rss1("<title>Putting RDF to Work</title>", "<title>Putting RDF</title><title>to Work</title>"), RSS1),
    ("rss1-missing-required", rss1("<items>", "<rdf:Seq>").replace("</items>", "</rdf:Seq>", 1), RSS1),
    ("rss1-missing-required", rss1("<link>http://xml.com/pub/2000/08/09/rdfdb/index.html</link>"), rss1("<description>Processing document inclusions with general XML tools can be problematic.</description>")),
    ("rss1-missing-required", rss1(_IMAGE_URL), RSS1),
    ("rss1-missing-required", rss1("<name>s</name>"), RSS1),
    ("rss1-about-missing", rss1('<image rdf:about="http://xml.com/universal/images/xml_tiny.gif">', "<image>"), RSS1),
    ("rss1-about-missing", rss1('<channel rdf:about="', '<channel about="'), RSS1),
    ("rss1-about-duplicate", rss1(_ITEM2, RSS1_ITEM.split(">")[0] + ">"), RSS1),
    ("rss1-resource-missing", rss1('<image rdf:resource="http://xml.com/universal/images/xml_tiny.gif" />', "<image/>"), RSS1),
    ("rss1-resource-missing", rss1('<textinput rdf:resource="http://search.xml.com" />', "<textinput/>"), RSS1),
    ("rss1-trackback-resource-missing", rss1('<trackback:ping rdf:resource="http://xml.com/tb.cgi?tb_id=1"/>', "<trackback:ping>http://xml.com/tb.cgi?tb_id=1</trackback:ping>"), RSS1),
    ("rss1-trackback-resource-missing", rss1('<trackback:about rdf:resource="http://example.com/foo/1.html"/>', "<trackback:about>http://example.com/foo/1.html</trackback:about>"), RSS1),
]  # fmt: skip


def test_the_rss1_specification_example_has_no_findings() -> None:
    assert run(RSS1) == []


@pytest.mark.parametrize(("rule", "bad", "good"), RSS1_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(RSS1_CASES)])
def test_rss1_rule_fails_and_passes(rule: str, bad: str, good: str) -> None:
    assert rule in rules_of(bad), f"{rule} should fire"
    assert rule not in rules_of(good), f"{rule} should not fire"


def test_rss1_findings_say_where() -> None:
    found = {(f.rule, f.scope): f for f in run(RSS1_CASES[0][1])}
    assert found[("rss1-channel-missing", "rdf:RDF")].example is None
    bad = rss1("<items>", "<items><rdf:Seq/></items><items>")
    bad = bad.replace("<description>Processing document", "<pubDate>x</pubDate><description>Processing document")
    bad = bad.replace('<image rdf:about="http://xml.com/universal/images/xml_tiny.gif">', "<image>")
    found = {(f.rule, f.scope): f for f in run(bad)}
    assert set(found) == {
        ("rss1-duplicate-element", "channel"),
        ("rss1-undefined-element", "item"),
        ("rss1-about-missing", "rdf:RDF"),
    }
    assert found[("rss1-duplicate-element", "channel")].example == "items"
    assert found[("rss1-undefined-element", "item")].example == "pubDate"
    assert found[("rss1-about-missing", "rdf:RDF")].example == "image"
    missing = {(f.rule, f.scope): f for f in run(rss1(_IMAGE_URL).replace("<name>s</name>", ""))}
    assert (
        missing[("rss1-missing-required", "image")].example,
        missing[("rss1-missing-required", "textinput")].example,
    ) == ("url", "name")
    dup = run(rss1(_ITEM2, RSS1_ITEM.split(">")[0] + ">"))
    assert [(f.rule, f.scope, f.example) for f in dup] == [
        ("rss1-about-duplicate", "rdf:RDF", "http://xml.com/pub/2000/08/09/xslt/xslt.html")
    ]


def test_rss1_runs_the_namespace_rules_but_not_rss2_forms() -> None:
    rules = rules_of(rss1("<dc:language>en-us</dc:language>", "<dc:language>english</dc:language>"))
    assert rules == {"dc-language-invalid"}
    assert rules_of(
        rss1("<sy:updateFrequency>2</sy:updateFrequency>", "<sy:updateFrequency>0</sy:updateFrequency>")
    ) == {"sy-update-frequency-invalid"}
    assert rules_of(
        rss1("<dc:date>2000-08-09T12:00:00Z</dc:date>", "<dc:date>2000</dc:date><dc:date>2001</dc:date>")
    ) == {"duplicate-namespace-element"}
    # the RSS 2.0 reading of trackback (the URL as text) is not applied to RSS 1.0's rdf:resource form
    assert "trackback-url-not-absolute" not in rules_of(RSS1)
    # and the RSS 1.0 form is not asked of RSS 2.0
    rdf_ns = 'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"'
    rss2 = doc(item=f'{TB} {rdf_ns} rdf:resource="http://x.example/tb">http://x.example/tb</trackback:ping>')
    assert not {f.rule for f in run(rss2)} & {"rss1-trackback-resource-missing", "trackback-url-not-absolute"}


def test_rss1_rules_do_not_run_on_rss_090_or_an_unknown_vocabulary() -> None:
    rss090 = (
        '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://my.netscape.com/rdf/simple/0.9/">'
        "<channel><title>Mozilla Dot Org</title><link>http://www.mozilla.org</link>"
        "<description>the Mozilla Organization web site</description></channel>"
        "<item><title>New Status Updates</title><link>http://www.mozilla.org/status/</link></item></rdf:RDF>"
    )
    assert run(rss090) == []
    # elements in no namespace under rdf:RDF: neither RSS 1.0 nor 0.90 (the validator: UndeterminableVocabulary)
    assert run(rss090.replace(' xmlns="http://my.netscape.com/rdf/simple/0.9/"', "")) == []
    # the same document in RSS 1.0's namespace: its rules run (the channel has no rdf:about, no items...)
    as_rss1 = rss090.replace("http://my.netscape.com/rdf/simple/0.9/", "http://purl.org/rss/1.0/")
    assert {"rss1-about-missing", "rss1-missing-required"} <= {f.rule for f in run(as_rss1)}


@pytest.mark.parametrize(
    "date",
    [
        "Thu, 04 Oct 2007 23:59:45 GMT",  # universal
        "Fri, 04 Oct 2007 23:59:45 GMT",  # universal, wrong weekday
        "Thu, 04 Oct 2037 23:59:45 GMT",  # universal, in the future
        "Thu, 04 Oct 2007 23:59:45 EST",  # valid, another zone
        "  Thu,  04 Oct 2007 23:59:45 GMT ",  # extra space
        "2007-10-04T23:59:45Z",  # not RFC 822
    ],
)
def test_texts_and_dates_the_parser_read_are_reused_with_the_same_findings(date: str) -> None:
    items = (
        f"<item><title>T &amp; u</title><link>/rel</link><guid>g</guid><pubDate>{date}</pubDate>"
        "<category>c</category></item>\n"
    ) * 2
    body = doc(after_items=items).encode()
    noted = parse_feed(body, with_notes=True)
    assert noted.notes is not None and noted.notes.leaf_texts and noted.notes.dates  # what the checks reuse
    expected = check_feed(parse_feed(body).root, format="rss", body=body, now=NOW)
    assert check_feed(noted.root, format="rss", body=body, now=NOW, notes=noted.notes) == expected
    assert {"url-not-absolute", "guid-permalink-not-url"} <= {f.rule for f in expected}


def test_rss1_with_the_parsers_notes_finds_the_same() -> None:
    body = rss1("<dc:subject>XML</dc:subject>", "<pubDate>x</pubDate>").replace("<name>s</name>", "").encode()
    plain = parse_feed(body)
    noted = parse_feed(body, with_notes=True)
    assert (plain.format, plain.version) == ("rdf", "1.0")
    expected = check_feed(plain.root, format=plain.format, body=body)
    assert {f.rule for f in expected} == {"rss1-undefined-element", "rss1-missing-required"}
    assert check_feed(noted.root, format=noted.format, body=body, notes=noted.notes) == expected


# ---------------------------------------------------------------- documents that are no feed: lint's verdict alone

#: Documents the parser reads as no feed, and what ``feedcensus lint`` says of each (rule, scope, example).
NOT_FEEDS: list[tuple[bytes, tuple[str, str, str | None]]] = [
    (b"<unknown><channel><title>t</title><link>http://x.example/</link></channel></unknown>",
     ("root-not-feed", "document", "unknown")),
    (b"<channel><title>foo</title><link>http://example.com/</link><description>bar</description></channel>",
     ("root-not-feed", "document", "channel")),
    (b'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>dive into mark</title>'
     b'<link rel="alternate" type="application/rss+xml" href="http://example.com/rss.xml" /></head>'
     b"<body><p>x&nbsp;y</p></body></html>",
     ("root-not-feed", "document", "html")),
    (b'<rdf:rdf xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"></rdf:rdf>',
     ("root-not-feed", "document", "rdf:rdf")),
    (b'<opml version="2.0"><head/><body><outline xmlUrl="http://x.example/rss"/></body></opml>',
     ("root-not-feed", "document", "opml")),
    # rdf:RDF, RSS 1.0's root, but its channel in another namespace (the RSS 0.91 DTD's URL): the channel is missing
    (b'<rdf:RDF xmlns="http://my.netscape.com/publish/formats/rss-0.91.dtd" '
     b'xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"><channel rdf:about="http://www.example.com/">'
     b"<title>RSS 1.0 feed</title><link>http://www.example.com/</link></channel></rdf:RDF>",
     ("rss1-channel-missing", "rdf:RDF", None)),
]  # fmt: skip


@pytest.mark.parametrize(("body", "verdict"), NOT_FEEDS, ids=[v[2] or v[0] for _, v in NOT_FEEDS])
def test_a_document_that_is_no_feed_is_named_by_lint_and_not_by_the_census(
    body: bytes, verdict: tuple[str, str, str | None]
) -> None:
    from crawler.cli.documents import not_feed_findings
    from pipelines.document.process import document_rows
    from schemas.items import FeedDocument

    parsed = parse_feed(body, "http://x.example/feed")
    assert parsed.format == "unknown"
    # the census: no finding, so no conformance row and no error counted; the feeds row says it is no feed
    assert check_feed(parsed.root, format=parsed.format, body=body) == []
    url = "http://x.example/feed"
    item = FeedDocument(
        url=url, final_url=url, status=200, headers={}, body=body, discovered_via="url", source=None, depth=0
    )
    rows, failures = document_rows(item, NOW)
    assert "conformance" not in rows.rows and failures == ()
    (feed,) = rows.rows["feeds"]
    assert feed["format"] == "unknown"
    # lint: the rule, with the severity of the table
    rule, scope, example = verdict
    assert not_feed_findings(parsed.root) == [Finding(rule, RULES[rule].severity, scope, 1, example)]


def test_lint_names_no_rule_for_a_document_without_a_root_element() -> None:
    from crawler.cli.documents import not_feed_findings

    for body in (b"", b"\x00\x01garbage, not markup at all\xff", b"<!-- only a comment -->"):
        parsed = parse_feed(body)
        assert parsed.format == "unknown"
        assert not_feed_findings(parsed.root) == []


def test_check_feed_never_reports_the_rules_of_documents_that_are_no_feed() -> None:
    assert set(RULES) >= NOT_FEED_RULES
    assert all(RULES[rule].source == "rss2" for rule in NOT_FEED_RULES)
    for fmt in ("rss", "rdf", "atom", "unknown"):
        for body, _ in NOT_FEEDS:
            root = etree.fromstring(body, etree.XMLParser(recover=True))
            assert not {f.rule for f in check_feed(root, format=fmt, body=body)} & NOT_FEED_RULES
