"""parse_feed and sniff on literal documents: formats, names, tally, recovery, entities, encodings."""

from __future__ import annotations

import re
import time
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.document.feedparse import ParsedFeed, parse_feed
from pipelines.document.sniff import sniff


def usage_of(feed: ParsedFeed, scope: str) -> dict[str, tuple[int, int | None, bool]]:
    return {u.element: (u.count, u.items_with, u.defined) for u in feed.usage if u.scope == scope}


RSS20 = b"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom" xmlns:dc="http://purl.org/dc/elements/1.1/"
     xmlns:media="http://search.yahoo.com/mrss/" xmlns:x="http://example.org/unknown-ns">
<channel>
  <title>Dallas &amp; Co</title>
  <link>http://dallas.example.com/</link>
  <description>News</description>
  <language>en-us</language>
  <atom:link href="http://dallas.example.com/rss.xml" rel="self" type="application/rss+xml"/>
  <atom:link href="http://hub.example.com/" rel="hub"/>
  <cloud domain="rpc.sys.com" port="80" path="/RPC2" registerProcedure="ping" protocol="xml-rpc"/>
  <image><url>http://dallas.example.com/i.gif</url><title>Dallas</title><link>http://dallas.example.com/</link></image>
  <skipHours><hour>0</hour><hour>1</hour></skipHours>
  <x:thing>1</x:thing>
  <!-- a comment is not an element -->
  <item>
    <title>One</title>
    <link>/2007/one.html</link>
    <guid isPermaLink="false">one</guid>
    <pubDate>Thu, 04 Oct 2007 23:59:45 GMT</pubDate>
    <category domain="d">c1</category><category>c2</category>
    <enclosure url="one.mp3" length="12345" type="audio/mpeg"/>
    <enclosure url="second.mp3" length="1" type="audio/mpeg"/>
    <media:group><media:content url="a"/><media:content url="b"/></media:group>
    <pubdate>Thu, 04 Oct 2007 23:59:45 GMT</pubdate>
  </item>
  <item>
    <title><![CDATA[Two <b>bold</b>]]></title>
    <guid>http://dallas.example.com/two</guid>
    <dc:creator>Bob</dc:creator>
    <dc:date>2007-10-05T01:59:45+02:00</dc:date>
    <enclosure url="two.mp3" length="many" type="audio/mpeg"/>
    <source url="http://other.example.com/rss">Other</source>
  </item>
  <item><author>joe@example.com (Joe)</author><description>only a description</description></item>
</channel>
</rss>"""


def test_rss20_channel_fields() -> None:
    feed = parse_feed(RSS20, "http://dallas.example.com/rss.xml")
    assert (feed.format, feed.version, feed.well_formed, feed.error) == ("rss", "2.0", True, None)
    assert feed.encoding == "utf-8"
    assert feed.title == "Dallas & Co"
    assert feed.link == "http://dallas.example.com/"
    assert feed.language == "en-us"
    assert feed.self_url == "http://dallas.example.com/rss.xml"
    assert feed.root is not None and feed.root.tag == "rss"


def test_rss20_items() -> None:
    one, two, three = parse_feed(RSS20, "http://dallas.example.com/rss.xml").items
    assert one.position == 0 and three.position == 2
    assert (one.guid, one.guid_is_permalink) == ("one", False)
    assert (two.guid, two.guid_is_permalink) == ("http://dallas.example.com/two", True)  # default true
    assert (three.guid, three.guid_is_permalink) == (None, None)
    assert one.link == "http://dallas.example.com/2007/one.html"  # resolved against the feed URL
    assert two.title == "Two <b>bold</b>"
    assert one.categories == ["c1", "c2"]
    # the first enclosure only; a length that is not an integer is None
    assert (one.enclosure_url, one.enclosure_type, one.enclosure_length) == (
        "http://dallas.example.com/one.mp3",
        "audio/mpeg",
        12345,
    )
    assert two.enclosure_length is None
    assert one.pub_date == datetime(2007, 10, 4, 23, 59, 45, tzinfo=UTC) and one.date_form == "rfc822-universal"
    assert two.pub_date_raw == "2007-10-05T01:59:45+02:00" and two.date_form == "iso8601"
    assert two.pub_date == datetime(2007, 10, 4, 23, 59, 45, tzinfo=UTC)
    assert (three.pub_date_raw, three.pub_date, three.date_form) == (None, None, None)
    assert two.author == "Bob" and three.author == "joe@example.com (Joe)"


def test_rss20_tally() -> None:
    feed = parse_feed(RSS20)
    channel = usage_of(feed, "channel")
    assert channel["item"] == (3, None, True)
    assert channel["atom:link"] == (2, None, True)
    assert channel["atom:link@rel=self"] == (1, None, True)
    assert channel["atom:link@rel=hub"] == (1, None, True)
    assert channel["atom:link@href"] == (2, None, True)
    assert channel["cloud@registerProcedure"] == (1, None, True)
    assert channel["{http://example.org/unknown-ns}thing"] == (1, None, True)
    assert not any("xmlns" in name for name in channel)
    item = usage_of(feed, "item")
    assert item["title"] == (2, 2, True)
    assert item["category"] == (2, 1, True)
    assert item["enclosure"] == (3, 2, True)
    assert item["enclosure@length"] == (3, 2, True)
    assert item["guid@isPermaLink"] == (1, 1, True)
    assert item["source@url"] == (1, 1, True)
    assert item["pubdate"] == (1, 1, False)  # not an RSS element: the spec writes pubDate
    assert item["dc:creator"] == (1, 1, True)
    assert usage_of(feed, "image") == {"url": (1, None, True), "title": (1, None, True), "link": (1, None, True)}
    assert usage_of(feed, "skipHours") == {"hour": (2, None, True)}
    assert usage_of(feed, "item/media:group") == {
        "media:content": (2, None, True),
        "media:content@url": (2, None, True),
    }


RSS091_BODY = b"""<rss version="0.91"><channel><title>Caf&eacute;&nbsp;News</title><link>http://x.example/</link>
<description>d</description><language>fr</language>
<item><title>A&nbsp;B</title><link>http://x.example/a</link></item>
<item><title>C</title><link>http://x.example/c</link></item>
</channel></rss>"""
NETSCAPE_DOCTYPE = b"""<!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN"
 "http://my.netscape.com/publish/formats/rss-0.91.dtd">
"""


def test_rss091_with_html_entity_is_recovered_not_dropped() -> None:
    feed = parse_feed(RSS091_BODY)
    assert (feed.format, feed.version, feed.well_formed) == ("rss", "0.91", False)
    assert feed.error == "Entity 'eacute' not defined, line 1, column 48"
    assert [i.link for i in feed.items] == ["http://x.example/a", "http://x.example/c"]
    assert feed.items[0].title == "A\xa0B"  # the undefined entity is read as the HTML entity
    assert feed.title == "Caf\xe9\xa0News"
    assert usage_of(feed, "item")["title"] == (2, 2, True)


def test_rss091_entities_with_the_netscape_doctype_are_well_formed() -> None:
    # With an external DTD that is not read, an undeclared entity is not a
    # well-formedness error (XML 1.0, WFC: Entity Declared); the Netscape DTD
    # declares the HTML entities, and the text reads them from the HTML table.
    feed = parse_feed(NETSCAPE_DOCTYPE + RSS091_BODY)
    assert (feed.format, feed.version, feed.well_formed, feed.error) == ("rss", "0.91", True, None)
    assert feed.items[0].title == "A\xa0B" and feed.title == "Caf\xe9\xa0News"


def test_rss092_and_versionless() -> None:
    body = b'<rss version="0.92"><channel><title>t</title><item><enclosure url="http://e/x" length="1" type="a/b"/></item></channel></rss>'
    feed = parse_feed(body)
    assert (feed.format, feed.version, feed.well_formed) == ("rss", "0.92", True)
    assert feed.items[0].enclosure_url == "http://e/x"
    bare = parse_feed(b"<rss><channel><title>t</title></channel></rss>")
    assert (bare.format, bare.version, bare.items) == ("rss", "", [])


def test_namespaced_rss_root_keeps_bare_names() -> None:
    body = b'<rss xmlns="http://backend.userland.com/rss2" version="2.0"><channel><title>t</title><item><title>i</title></item></channel></rss>'
    feed = parse_feed(body)
    assert feed.format == "rss" and feed.title == "t" and [i.title for i in feed.items] == ["i"]
    assert "title" in usage_of(feed, "item")


def test_items_outside_the_channel_are_not_dropped() -> None:
    body = (
        b"<rss version='2.0'><channel><title>t</title><item><title>in</title></item></channel>"
        b"<item><title>stray</title></item><title>again</title></rss>"
    )
    feed = parse_feed(body)
    assert [i.title for i in feed.items] == ["in", "stray"]
    assert feed.title == "t"
    # in RSS, what is written beside the channel is counted at its own scope, rss: the channel scope
    # counts only what is in the channel (and only channel is defined beside it)
    channel = usage_of(feed, "channel")
    assert channel["item"] == (1, None, True)
    assert channel["title"] == (1, None, True)
    assert usage_of(feed, "rss") == {"item": (1, None, False), "title": (1, None, False)}
    assert usage_of(feed, "item")["title"] == (2, 2, True)


def test_elements_beside_the_channel_have_the_rss_scope() -> None:
    body = (
        b"<rss version='2.0'><meta name='generator' content='x'><x>1</x></meta>"
        b"<channel><title>t</title><link>http://x/</link><description>d</description></channel></rss>"
    )
    feed = parse_feed(body)
    assert "meta" not in usage_of(feed, "channel")
    assert usage_of(feed, "rss") == {"meta": (1, None, False), "meta@name": (1, None, False),
                                     "meta@content": (1, None, False)}  # fmt: skip
    assert usage_of(feed, "rss/meta") == {"x": (1, None, False)}


RSS10 = b"""<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
         xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel rdf:about="http://x.example/rss">
    <title>XML.com</title><link>http://xml.com/pub</link><description>d</description>
    <dc:language>en</dc:language>
    <image rdf:resource="http://xml.com/logo.gif"/>
    <items><rdf:Seq><rdf:li resource="http://xml.com/1"/><rdf:li rdf:resource="http://xml.com/2"/></rdf:Seq></items>
    <textinput rdf:resource="http://search.xml.com"/>
  </channel>
  <image rdf:about="http://xml.com/logo.gif"><title>XML.com</title><link>http://xml.com</link><url>http://xml.com/logo.gif</url></image>
  <item rdf:about="http://xml.com/1"><title>One</title><link>http://xml.com/1</link><dc:date>2007-10-04T23:59:45Z</dc:date></item>
  <item rdf:about="http://xml.com/2"><title>Two</title><link>http://xml.com/2</link><dc:creator>Ann</dc:creator></item>
  <textinput rdf:about="http://search.xml.com"><title>Search</title><description>s</description><name>q</name><link>http://search.xml.com</link></textinput>
</rdf:RDF>"""


def test_rss10() -> None:
    feed = parse_feed(RSS10)
    assert (feed.format, feed.version, feed.well_formed) == ("rdf", "1.0", True)
    assert (feed.title, feed.link, feed.language) == ("XML.com", "http://xml.com/pub", "en")
    assert [(i.guid, i.guid_is_permalink, i.title) for i in feed.items] == [
        ("http://xml.com/1", None, "One"),
        ("http://xml.com/2", None, "Two"),
    ]
    assert feed.items[0].date_form == "iso8601" and feed.items[1].author == "Ann"
    channel = usage_of(feed, "channel")
    # the channel references image and textinput: the descriptions beside it are not counted again,
    # and the root-level items are the items, not channel elements
    assert channel == {
        "title": (1, None, True),
        "link": (1, None, True),
        "description": (1, None, True),
        "dc:language": (1, None, True),
        "image": (1, None, True),
        "image@rdf:resource": (1, None, True),
        "items": (1, None, True),
        "textinput": (1, None, True),
        "textinput@rdf:resource": (1, None, True),
    }
    assert usage_of(feed, "item")["title"] == (2, 2, True)
    # the children of the siblings are still tallied in their own scope
    assert usage_of(feed, "image") == {"title": (1, None, True), "link": (1, None, True), "url": (1, None, True)}
    assert usage_of(feed, "textinput")["name"] == (1, None, True)
    seq = usage_of(feed, "items/rdf:Seq")
    assert seq["rdf:li"] == (2, None, True)
    assert seq["rdf:li@rdf:resource"] == (1, None, True)
    assert seq["rdf:li@resource"] == (1, None, True)  # attributes of a namespaced element count as its own


def test_rss090() -> None:
    body = b"""<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://my.netscape.com/rdf/simple/0.9/">
<channel><title>Mozilla Dot Org</title><link>http://www.mozilla.org</link><description>d</description></channel>
<image><title>Mozilla</title><url>http://www.mozilla.org/images/moz.gif</url><link>http://www.mozilla.org</link></image>
<item><title>New Status Updates</title><link>http://www.mozilla.org/status/</link></item>
<item><title>Bugzilla</title><link>http://www.mozilla.org/bugs/</link></item>
<textinput><title>Search</title><description>d</description><name>q</name><link>http://x/</link></textinput>
</rdf:RDF>"""
    feed = parse_feed(body)
    assert (feed.format, feed.version) == ("rdf", "0.90")
    assert [i.link for i in feed.items] == ["http://www.mozilla.org/status/", "http://www.mozilla.org/bugs/"]
    assert usage_of(feed, "item") == {"title": (2, 2, True), "link": (2, 2, True)}
    # the 0.90 channel does not reference image and textinput: they are added once, the items never
    assert usage_of(feed, "channel") == {
        "title": (1, None, True),
        "link": (1, None, True),
        "description": (1, None, True),
        "image": (1, None, True),
        "textinput": (1, None, True),
    }
    assert usage_of(feed, "image")["url"] == (1, None, True)
    assert usage_of(feed, "textinput")["name"] == (1, None, True)


def test_rdf_unreferenced_siblings_keep_their_count() -> None:
    body = b"""<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">
<channel rdf:about="http://x/"><title>t</title><image rdf:resource="http://x/a.gif"/><item rdf:about="http://x/0"/></channel>
<image rdf:about="http://x/a.gif"><url>http://x/a.gif</url></image>
<textinput rdf:about="http://x/s"><name>q</name></textinput><textinput rdf:about="http://x/t"><name>r</name></textinput>
<item rdf:about="http://x/1"><title>one</title></item>
</rdf:RDF>"""
    feed = parse_feed(body)
    channel = usage_of(feed, "channel")
    assert channel["image"] == (1, None, True) and "image@rdf:about" not in channel
    assert channel["textinput"] == (2, None, True) and channel["textinput@rdf:about"] == (2, None, True)
    # an item inside the channel is a channel child (and an item); the root-level one is only an item
    assert channel["item"] == (1, None, True)
    assert [i.guid for i in feed.items] == ["http://x/0", "http://x/1"]
    assert usage_of(feed, "textinput") == {"name": (2, None, True)}


ATOM10 = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:media="http://search.yahoo.com/mrss/" xml:lang="en-GB"
      xml:base="http://example.org/blog/">
  <title type="html">Example &lt;b&gt;Feed&lt;/b&gt;</title>
  <link href="/"/>
  <link rel="self" href="feed.atom"/>
  <updated>2003-12-13T18:30:02Z</updated>
  <author><name>John Doe</name></author>
  <id>urn:uuid:60a76c80-d399-11d9-b93C-0003939e0af6</id>
  <entry xml:base="2003/">
    <title>Atom-Powered Robots Run Amok</title>
    <link href="robots"/>
    <link rel="enclosure" href="http://example.org/a.mp3" type="audio/mpeg" length="1337"/>
    <id>urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a</id>
    <updated>2003-12-13T18:30:02Z</updated>
    <published>2003-12-13T08:29:29-04:00</published>
    <author><name>Jane</name><email>jane@example.org</email></author>
    <category term="robots" label="Robots"/>
    <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Some <b>text</b>.</p></div></content>
    <media:group><media:title>x</media:title></media:group>
  </entry>
  <entry>
    <title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">X<b>HTML</b> title</div></title>
    <link rel="alternate" href="http://example.org/two"/>
    <id>tag:example.org,2003:two</id>
    <updated>2003-12-14T18:30:02Z</updated>
    <summary>s</summary>
  </entry>
</feed>"""


def test_atom10() -> None:
    feed = parse_feed(ATOM10, "http://example.org/feed")
    assert (feed.format, feed.version, feed.well_formed) == ("atom", "1.0", True)
    assert feed.title == "Example Feed"  # type="html" read as text
    assert feed.link == "http://example.org/"
    assert feed.self_url == "http://example.org/blog/feed.atom"  # xml:base applies
    assert feed.language == "en-GB"
    one, two = feed.items
    assert one.guid == "urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a" and one.guid_is_permalink is None
    assert one.link == "http://example.org/blog/2003/robots"  # nested xml:base
    assert (one.enclosure_url, one.enclosure_type, one.enclosure_length) == (
        "http://example.org/a.mp3",
        "audio/mpeg",
        1337,
    )
    assert one.author == "Jane" and one.categories == ["robots"]
    assert one.pub_date_raw == "2003-12-13T08:29:29-04:00"  # published before updated
    assert one.pub_date == datetime(2003, 12, 13, 12, 29, 29, tzinfo=UTC)
    assert two.pub_date_raw == "2003-12-14T18:30:02Z"
    assert two.title == "XHTML title" and two.link == "http://example.org/two"


def test_atom10_tally_of_the_feed_element() -> None:
    feed = parse_feed(ATOM10)
    channel = usage_of(feed, "channel")
    # the feed's own elements carry the fixed prefix, like Atom elements inside RSS
    assert channel["atom:entry"] == (2, None, True)
    assert channel["atom:link"] == (2, None, True)
    assert channel["atom:link@rel=self"] == (1, None, True)
    assert channel["atom:link@href"] == (2, None, True)
    assert "atom:link@rel=alternate" not in channel  # a link without rel records no rel at all
    assert channel["atom:title@type"] == (1, None, True)
    assert channel["atom:updated"] == channel["atom:id"] == channel["atom:author"] == (1, None, True)
    assert not any(":" not in name.partition("@")[0] for name in channel)  # nothing bare
    assert usage_of(feed, "atom:author") == {"atom:name": (1, None, True)}


def test_atom10_tally_of_the_entries() -> None:
    feed = parse_feed(ATOM10)
    item = usage_of(feed, "item")
    assert item["atom:link"] == (3, 2, True)
    assert item["atom:link@rel=enclosure"] == (1, 1, True)
    assert item["atom:link@rel=alternate"] == (1, 1, True)
    assert item["atom:content"] == (1, 1, True) and item["atom:content@type"] == (1, 1, True)
    assert item["media:group"] == (1, 1, True)
    assert item["atom:published"] == (1, 1, True)
    assert usage_of(feed, "item/atom:author") == {"atom:name": (1, None, True), "atom:email": (1, None, True)}
    assert usage_of(feed, "item/media:group") == {"media:title": (1, None, True)}


def test_atom10_tally_does_not_walk_xhtml_content() -> None:
    feed = parse_feed(ATOM10)
    assert not any(u.scope.startswith(("item/atom:content", "item/atom:title")) for u in feed.usage)
    assert not any("div" in u.element or u.element.startswith("xhtml:") for u in feed.usage)
    assert {u.scope for u in feed.usage} == {"channel", "item", "atom:author", "item/atom:author", "item/media:group"}


def test_atom10_undefined_element_in_own_namespace() -> None:
    body = b'<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><pubDate>x</pubDate><entry><modified>x</modified></entry></feed>'
    feed = parse_feed(body)
    assert usage_of(feed, "channel")["atom:pubDate"] == (1, None, False)
    assert usage_of(feed, "item")["atom:modified"] == (1, 1, False)  # Atom 0.3, not 1.0


def test_atom10_element_in_no_namespace_stays_bare() -> None:
    body = (
        b'<feed xmlns="http://www.w3.org/2005/Atom"><title>feed</title><title xmlns="">bare</title>'
        b"<item><x>1</x></item><entry><author><name>A</name></author></entry></feed>"
    )
    feed = parse_feed(body)
    assert feed.title == "feed"
    channel = usage_of(feed, "channel")
    # not an Atom element: named bare, never merged with atom:title, and not defined by Atom
    assert channel["atom:title"] == (1, None, True)
    assert channel["title"] == (1, None, False)
    assert channel["atom:item"] == (1, None, False)
    # an <item> in an Atom feed is walked in its own scope, not in the entries' scope
    assert usage_of(feed, "atom:item") == {"atom:x": (1, None, False)}
    assert usage_of(feed, "item") == {"atom:author": (1, 1, True)}
    assert feed.items[0].author == "A"


def test_atom_without_namespace_is_named_bare() -> None:
    body = b"<feed><title>t</title><link href='http://x/'/><entry><title>e</title><id>1</id></entry></feed>"
    feed = parse_feed(body)
    assert (feed.format, feed.version, feed.title, feed.link) == ("atom", None, "t", "http://x/")
    assert usage_of(feed, "channel")["entry"] == (1, None, True)
    assert usage_of(feed, "item") == {"title": (1, 1, True), "id": (1, 1, True)}
    assert feed.items[0].guid == "1"


def test_atom03() -> None:
    body = b"""<?xml version="1.0" encoding="utf-8"?>
<feed version="0.3" xmlns="http://purl.org/atom/ns#" xml:lang="en">
  <title>dive into mark</title>
  <link rel="alternate" type="text/html" href="http://diveintomark.org/"/>
  <link rel="start" type="application/atom+xml" href="http://diveintomark.org/atom.xml"/>
  <modified>2003-12-13T18:30:02Z</modified>
  <tagline>t</tagline>
  <entry>
    <title>Atom 0.3 snapshot</title>
    <link rel="alternate" type="text/html" href="http://diveintomark.org/2003/12/13/atom03"/>
    <id>tag:diveintomark.org,2003:3.2397</id>
    <issued>2003-12-13T08:29:29-04:00</issued>
    <modified>2003-12-13T18:30:02Z</modified>
    <author><name>Mark</name><url>http://diveintomark.org/</url></author>
  </entry>
</feed>"""
    feed = parse_feed(body)
    assert (feed.format, feed.version) == ("atom", "0.3")
    assert feed.link == "http://diveintomark.org/" and feed.self_url == "http://diveintomark.org/atom.xml"
    (item,) = feed.items
    assert item.pub_date_raw == "2003-12-13T08:29:29-04:00" and item.author == "Mark"
    channel = usage_of(feed, "channel")
    assert channel["atom03:tagline"] == (1, None, True)
    assert channel["atom03:entry"] == (1, None, True)
    assert channel["atom03:link@rel=start"] == (1, None, True)
    assert usage_of(feed, "item")["atom03:issued"] == (1, 1, True)
    assert usage_of(feed, "item/atom03:author") == {"atom03:name": (1, None, True), "atom03:url": (1, None, True)}


def test_malformed_is_recovered_with_items_and_usage() -> None:
    body = b"<rss version='2.0'><channel><title>t</title><item><title>a & b</title></item><item><title>c</title></item>"
    feed = parse_feed(body)
    assert feed.format == "rss" and feed.well_formed is False
    assert feed.error and "\n" not in feed.error and "<string>" not in feed.error
    assert len(feed.items) == 2 and feed.items[1].title == "c"
    assert usage_of(feed, "item")["title"] == (2, 2, True)


@pytest.mark.parametrize(
    ("body", "error_part"),
    [
        (b"", "empty"),
        (b"   ", None),
        (b"not xml at all", None),
        (b"<html><head><title>x</title></head><body></body></html>", "<html>"),
        (b"<opml version='2.0'><body/></opml>", "<opml>"),
        (b'{"version": "https://jsonfeed.org/version/1"}', None),
    ],
)
def test_not_a_feed(body: bytes, error_part: str | None) -> None:
    feed = parse_feed(body)
    assert feed.format == "unknown" and feed.version is None and feed.items == [] and feed.usage == []
    assert feed.error
    if error_part:
        assert error_part in feed.error.lower()


def test_billion_laughs_does_not_expand() -> None:
    lol = b'<!ENTITY lol0 "lollollollollollollollollollol">' + b"".join(
        b'<!ENTITY lol%d "%s">' % (i, b"".join(b"&lol%d;" % (i - 1) for _ in range(10))) for i in range(1, 10)
    )
    body = (
        b"<?xml version='1.0'?><!DOCTYPE rss ["
        + lol
        + b"]><rss version='2.0'><channel><title>&lol9;</title><item><title>i</title></item></channel></rss>"
    )
    start = time.perf_counter()
    feed = parse_feed(body)
    assert time.perf_counter() - start < 2
    # libxml2 refuses the amplification even though nothing is substituted:
    # the document is flagged, never expanded
    assert feed.format == "rss" and feed.well_formed is False
    assert feed.error is not None and "amplification" in feed.error
    assert feed.title is None or len(feed.title) < 1000


def test_internal_entities_are_not_expanded() -> None:
    body = b"<!DOCTYPE rss [<!ENTITY e 'expanded'>]><rss version='2.0'><channel><title>a&e;b</title><item/></channel></rss>"
    feed = parse_feed(body)
    assert (feed.well_formed, len(feed.items)) == (True, 1)
    assert feed.root is not None and "expanded" not in (feed.root[0][0].text or "")


def test_external_entity_is_not_read(tmp_path) -> None:  # type: ignore[no-untyped-def]
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET-VALUE")
    body = (
        b'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY xxe SYSTEM "'
        + secret.as_uri().encode()
        + b'">]><rss version="2.0"><channel><title>&xxe;</title><item><title>&xxe;</title></item></channel></rss>'
    )
    feed = parse_feed(body)
    assert feed.format == "rss"
    assert "TOP-SECRET" not in (feed.title or "")
    assert all("TOP-SECRET" not in (i.title or "") for i in feed.items)


CAFE_RSS = "<rss version='2.0'><channel><title>café ☕</title><item><title>é</title></item></channel></rss>"


@pytest.mark.parametrize(
    ("body", "encoding"),
    [
        ("<?xml version='1.0' encoding='utf-16'?>" + CAFE_RSS, None),
        (CAFE_RSS, None),
    ],
)
def test_utf16_with_bom(body: str, encoding: str | None) -> None:
    for codec, name in (("utf-16", "utf-16le"), ("utf-16-be", None)):
        data = body.encode(codec)
        if name is None:
            data = b"\xfe\xff" + data  # big-endian with an explicit BOM
            name = "utf-16be"
        feed = parse_feed(data)
        assert (feed.format, feed.well_formed, feed.encoding) == ("rss", True, name)
        assert feed.title == "café ☕" and feed.items[0].title == "é"


def test_utf32_and_utf8_bom() -> None:
    feed = parse_feed(CAFE_RSS.encode("utf-32"))
    assert (feed.well_formed, feed.encoding, feed.title) == (True, "utf-32le", "café ☕")
    feed = parse_feed(
        b"\xef\xbb\xbf" + CAFE_RSS.encode("utf-8"), headers={"Content-Type": "text/xml; charset=iso-8859-1"}
    )
    assert (feed.well_formed, feed.encoding, feed.title) == (True, "utf-8", "café ☕")  # the BOM wins


@pytest.mark.parametrize("marks", [2, 3])
@pytest.mark.parametrize("encoding", ["utf-8", "utf-16-le", "utf-16-be"])
def test_a_repeated_byte_order_mark_is_read_as_one(marks: int, encoding: str) -> None:
    """An editor's BOM on a file that had one: the feed it is, not well-formed, and the error says why."""
    mark = "\ufeff".encode(encoding)
    feed = parse_feed(mark * marks + CAFE_RSS.encode(encoding))
    assert (feed.format, feed.version, feed.title, feed.items[0].title) == ("rss", "2.0", "café ☕", "é")
    assert feed.well_formed is False
    assert feed.error is not None and f"{marks - 1} extra byte order mark" in feed.error
    one = parse_feed(mark + CAFE_RSS.encode(encoding))
    assert one.well_formed is True and one.error is None


def test_a_million_byte_order_marks_are_read_in_one_pass() -> None:
    """The marks are skipped by index: dropping them one copy at a time was quadratic (hours for 32 MiB)."""
    feed = parse_feed(b"\xef\xbb\xbf" * 1_000_000 + CAFE_RSS.encode("utf-8"))
    assert feed.title == "café ☕" and feed.error is not None and "999999 extra byte order marks" in feed.error


def test_declared_encoding() -> None:
    body = "<?xml version='1.0' encoding='iso-8859-1'?><rss><channel><title>café</title></channel></rss>".encode(
        "latin-1"
    )
    feed = parse_feed(body)
    assert (feed.well_formed, feed.encoding, feed.title) == (True, "iso-8859-1", "café")


def test_header_charset_used_when_document_declares_none() -> None:
    body = "<rss><channel><title>café</title></channel></rss>".encode("latin-1")
    feed = parse_feed(body, headers={"content-type": 'application/rss+xml; charset="ISO-8859-1"'})
    assert (feed.well_formed, feed.encoding, feed.title) == (True, "iso-8859-1", "café")
    # without the header the bytes are not UTF-8: recovered, not dropped
    feed = parse_feed(body)
    assert feed.well_formed is False and feed.format == "rss" and feed.encoding == "utf-8"


def test_declaration_wins_over_header_unless_it_fails() -> None:
    latin = "<?xml version='1.0' encoding='iso-8859-1'?><rss><channel><title>café</title></channel></rss>".encode(
        "latin-1"
    )
    feed = parse_feed(latin, headers={"Content-Type": "text/xml; charset=utf-8"})
    assert (feed.well_formed, feed.encoding, feed.title) == (True, "iso-8859-1", "café")
    # declared UTF-8 but written in windows-1252: the header's charset is tried next and works
    lying = "<?xml version='1.0' encoding='utf-8'?><rss><channel><title>café</title></channel></rss>".encode("cp1252")
    feed = parse_feed(lying, headers={"Content-Type": "text/xml; charset=windows-1252"})
    assert (feed.well_formed, feed.encoding, feed.title) == (True, "windows-1252", "café")


def test_utf16_declared_on_8bit_bytes() -> None:
    body = b"<?xml version='1.0' encoding='utf-16'?><rss version='2.0'><channel><title>t</title><item/></channel></rss>"
    feed = parse_feed(body)
    assert (feed.format, feed.well_formed, feed.encoding, feed.title) == ("rss", False, "utf-8", "t")
    assert feed.error and "utf-16" in feed.error and len(feed.items) == 1


def test_a_wide_header_charset_that_cannot_read_the_body_falls_back_to_utf8() -> None:
    """A well-formed UTF-8 feed served as utf-32: libxml2 makes no document at all of it with that
    charset, and the next candidate (UTF-8) reads it whole. (A recover-mode first parse raised here and
    lost the feed: the review of 0b0c281.)"""
    body = "<rss><channel><title>café</title></channel></rss>".encode()
    feed = parse_feed(body, headers={"Content-Type": "application/rss+xml; charset=utf-32"})
    assert (feed.format, feed.well_formed, feed.error, feed.encoding, feed.title) == (
        "rss",
        True,
        None,
        "utf-8",
        "café",
    )


def test_the_error_is_one_line_even_when_libxml2_quotes_the_document() -> None:
    """libxml2's message for an unterminated comment quotes the document, newlines and all: the
    error column gets its first line only."""
    feed = parse_feed("<rss><channel><title>t</title><!-- café\n more\n text".encode())
    assert feed.well_formed is False and feed.title == "t"
    assert feed.error is not None and "\n" not in feed.error and feed.error.startswith("Comment not terminated")


def test_unknown_header_charset_is_ignored() -> None:
    feed = parse_feed(
        b"<rss><channel><title>t</title></channel></rss>", headers={"Content-Type": "text/xml; charset=x-no-such"}
    )
    assert (feed.format, feed.well_formed, feed.title) == ("rss", True, "t")


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_parse_feed_never_raises(body: bytes) -> None:
    feed = parse_feed(body, "http://example.com/", {"Content-Type": "text/xml; charset=utf-8"})
    assert feed.format in ("rss", "rdf", "atom", "unknown")
    assert not (feed.error or "").startswith("internal error")


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([RSS20, RSS10, ATOM10]), st.integers(min_value=0, max_value=2000))
def test_truncated_feeds_never_raise(body: bytes, cut: int) -> None:
    feed = parse_feed(body[:cut])
    assert not (feed.error or "").startswith("internal error")
    assert feed.well_formed is False or cut >= len(body.rstrip())


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (RSS20, "feed"),
        (RSS10, "feed"),
        (ATOM10, "feed"),
        (b'\xef\xbb\xbf<?xml version="1.0"?>\n<!-- hi --><?xml-stylesheet href="x"?>\n<rss version="2.0">', "feed"),
        (b'<!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" "x.dtd"><rss version="0.91">', "feed"),
        (b"<!DOCTYPE rss [<!ENTITY a 'b'><!ENTITY c '>'>]><rss>", "feed"),
        (b"<RDF:RDF xmlns:RDF='http://www.w3.org/1999/02/22-rdf-syntax-ns#' xmlns='http://purl.org/rss/1.0/'>", "feed"),
        # what parse_feed recognises, and nothing else: the root decides, as XML names it (case and namespace)
        (b'<?xml version="1.0"?>\n<!DOCTYPE html><feed xmlns="http://www.w3.org/2005/Atom">', "feed"),
        (b'<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "x">\n<!-- c --><rss version="2.0">', "feed"),
        ("<!DOCTYPE html><rss version='2.0'>".encode("utf-16"), "feed"),
        (b"<a:feed xmlns:a='http://www.w3.org/2005/Atom'><a:title>", "feed"),
        (b"<x:rss xmlns:x='urn:x' version='2.0'>", "feed"),
        (b"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'><channel>", "feed"),
        (b"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'><foaf:Person/></rdf:RDF>", "other"),
        (
            b"<rdf:rdf xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#' xmlns='http://purl.org/rss/1.0/'>",
            "other",
        ),
        (b"<rdf:RDF xmlns:rdf='urn:not-rdf' xmlns='http://purl.org/rss/1.0/'>", "other"),
        (b"<CHANNEL HREF='http://example.org/'><TITLE>CDF</TITLE></CHANNEL>", "other"),
        (b"<channel><title>x</title></channel>", "other"),
        (b"<RSS version='2.0'>", "other"),
        (b"<!DOCTYPE html><head><title>no html tag</title>", "html"),
        (b"<!DOCTYPE html>\n<svg/>", "html"),
        ("<?xml version='1.0' encoding='utf-16'?><feed xmlns='http://www.w3.org/2005/Atom'>".encode("utf-16"), "feed"),
        (b"<?xml version='1.0'?><opml version='2.0'><head/>", "opml"),
        (b"<!DOCTYPE html><html><head>", "html"),
        (b"  \n<html lang='en'>", "html"),
        (b'<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "x"><html>', "html"),
        (b"<svg xmlns='http://www.w3.org/2000/svg'/>", "other"),
        (b'{"version": "https://jsonfeed.org/version/1"}', "other"),
        (b"", "other"),
        (b"\x00\xff\xfe garbage", "other"),
    ],
)
def test_sniff(body: bytes, expected: str) -> None:
    assert sniff(body) == expected


def test_sniff_falls_back_on_content_type_only_when_bytes_are_inconclusive() -> None:
    long_comment = b"<?xml version='1.0'?><!--" + b"x" * 10_000 + b"--><rss>"
    assert sniff(long_comment) == "other"
    assert sniff(long_comment, "application/rss+xml; charset=utf-8") == "feed"
    assert sniff(long_comment, "text/x-opml") == "opml"
    assert sniff(b"<html>", "application/rss+xml") == "html"  # the bytes decide when they can


def test_sniff_decides_a_root_start_tag_cut_by_the_head_by_its_name() -> None:
    """A root start tag longer than the bytes looked at: its name decides, its prefix assumed declared."""
    attrs = b" ".join(b"xmlns:n%d='urn:n%d'" % (i, i) for i in range(400))
    assert sniff(b"<rss version='2.0' " + attrs + b"><channel>") == "feed"
    assert sniff(b"<atom:feed " + attrs + b" xmlns:atom='http://www.w3.org/2005/Atom'>") == "feed"
    rdf = b"<rdf:RDF xmlns='http://purl.org/rss/1.0/' "
    assert sniff(rdf + attrs + b" xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'>") == "feed"
    assert sniff(b"<html " + attrs + b">") == "html"


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200), st.one_of(st.none(), st.text(max_size=30)))
def test_sniff_never_raises(body: bytes, content_type: str | None) -> None:
    assert sniff(body, content_type) in ("feed", "opml", "html", "other")


# --------------------------------------------------------------------------- with_notes: large CDATA lifted out

BIG = "<p>Long & winding <a href='/rel'>road</a></p>\r\nline two\rline three\n" * 40  # ~2.6 kB, CR, LF, CRLF
BIG_B = BIG.encode()


def _rss(items: str, head: bytes = b'<?xml version="1.0" encoding="utf-8"?>\n') -> bytes:
    return (
        head
        + (
            '<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel>\n'
            "<title>T</title><link>http://example.com/</link><description>D</description>\n"
            f"{items}\n</channel></rss>"
        ).encode()
    )


def _cdata(text: str) -> str:
    return f"<![CDATA[{text}]]>"


ITEM = (
    f"<item><title>{_cdata('Title ' + BIG)}</title><link>http://example.com/1</link>\n"
    f"<description>before{_cdata(BIG)}after<b>x</b>tail{_cdata(BIG)}</description>\n"
    f"<content:encoded>{_cdata(BIG)}</content:encoded><pubDate>Thu, 04 Oct 2007 23:59:45 GMT</pubDate></item>"
)

NOTES_CASES: dict[str, bytes] = {
    "plain": _rss(ITEM * 3),
    "no declaration": _rss(ITEM, head=b""),
    "bom": _rss(ITEM, head=b"\xef\xbb\xbf"),
    "cdata in a comment": _rss(f"<!-- {_cdata(BIG)} -->" + ITEM),
    "comment ends inside cdata text": _rss(f"<!-- {_cdata(BIG + ' --> x ')} -->" + ITEM),
    "cdata in a processing instruction": _rss(f"<?pi {_cdata(BIG + ' ?> x ')} ?>" + ITEM),
    "bracket before the end": _rss(f"<item><description>{_cdata(BIG + ']')}]</description></item>"),
    "form feed in cdata": _rss(f"<item><description>{_cdata(BIG + chr(12))}</description></item>"),
    "U+FFFE in cdata": _rss(f"<item><description>{_cdata(BIG + chr(0xFFFE))}</description></item>"),
    "internal subset": _rss(ITEM, head=b'<?xml version="1.0"?>\n<!DOCTYPE rss [<!ENTITY e "x">]>\n'),
    "netscape doctype": _rss(
        ITEM, head=b'<!DOCTYPE rss PUBLIC "-//Netscape Communications//DTD RSS 0.91//EN" "rss-0.91.dtd">\n'
    ),
    "forged placeholder": _rss("<item><title>&#xE000;0&#xE001;\ue000</title></item>" + ITEM),
    "unclosed cdata": _rss(f"<item><description><![CDATA[{BIG}</description></item>"),
    "cdata outside the root": _rss(ITEM) + f"\n{_cdata(BIG)}".encode(),
}


def _everything(feed: ParsedFeed) -> tuple[object, ...]:
    return (
        feed.format,
        feed.version,
        feed.well_formed,
        feed.error,
        feed.encoding,
        feed.title,
        feed.link,
        feed.language,
        feed.self_url,
        feed.items,
        feed.usage,
    )


def _tree(feed: ParsedFeed) -> list[tuple[object, ...]]:
    """Every element's tag, line, attributes, text and tail, placeholders restored."""
    if feed.root is None:
        return []
    restore = feed.notes.restore if feed.notes is not None else str
    return [
        (
            el.tag,
            el.sourceline,
            dict(el.attrib) if isinstance(el.tag, str) else None,
            None if el.text is None else restore(el.text),
            None if el.tail is None else restore(el.tail),
        )
        for el in feed.root.iter()
    ]


@pytest.mark.parametrize("name", list(NOTES_CASES))
@pytest.mark.parametrize("headers", [None, {"content-type": "text/xml; charset=iso-8859-1"}])
def test_with_notes_changes_nothing(name: str, headers: dict[str, str] | None) -> None:
    body = NOTES_CASES[name]
    plain = parse_feed(body, "http://example.com/feed", headers)
    noted = parse_feed(body, "http://example.com/feed", headers, with_notes=True)
    assert plain.notes is None and noted.notes is not None
    assert _everything(noted) == _everything(plain)
    assert _tree(noted) == _tree(plain)


def test_with_notes_lifts_large_cdata_and_restores_it() -> None:
    body = NOTES_CASES["plain"]
    feed = parse_feed(body, with_notes=True)
    assert feed.notes is not None and feed.root is not None
    description = feed.root.find("channel/item/description")
    assert description is not None and description.text is not None
    assert feed.notes.MARK in description.text  # lifted: the tree holds a placeholder
    assert len(description.text) < len(BIG) // 2
    expected = "before" + BIG.replace("\r\n", "\n").replace("\r", "\n") + "after"
    assert feed.notes.restore(description.text) == expected
    assert feed.items[0].title == ("Title " + BIG.replace("\r\n", "\n").replace("\r", "\n")).strip()
    assert parse_feed(body).items == feed.items


@pytest.mark.parametrize(
    ("name", "well_formed"),
    [
        ("form feed in cdata", False),
        ("U+FFFE in cdata", False),
        ("comment ends inside cdata text", False),
        ("cdata in a processing instruction", False),
        ("cdata in a comment", True),
        ("bracket before the end", True),
    ],
)
def test_with_notes_keeps_errors_inside_cdata(name: str, well_formed: bool) -> None:
    feed = parse_feed(NOTES_CASES[name], with_notes=True)
    assert feed.well_formed is well_formed
    assert feed.error == parse_feed(NOTES_CASES[name]).error


def test_with_notes_invalid_utf8_in_cdata_falls_back_to_the_header_charset() -> None:
    body = _rss(f"<item><title>{_cdata(BIG)}</title></item>").replace(b"winding", b"w\xe9nding", 1)
    headers = {"content-type": "text/xml; charset=iso-8859-1"}
    noted = parse_feed(body, headers=headers, with_notes=True)
    assert noted.encoding == "iso-8859-1" and noted.well_formed
    assert _everything(noted) == _everything(parse_feed(body, headers=headers))


# --------------------------------------------------------------------------- XML error messages


@pytest.mark.parametrize(
    ("body", "error"),
    [
        # libxml2 says where the open tag started, lxml then where the error is: said once when the same line
        (
            b'<?xml version="1.0"?>\n<rss version="2.0"><channel>',
            "Premature end of data in tag channel, line 2, column 29",
        ),
        (
            b"\n<rss>\n<channel>\n<title>x</title>",
            "Premature end of data in tag channel (started on line 3), line 4, column 17",
        ),
        (
            b"<rss>\n<channel>\n</rss>",
            "Opening and ending tag mismatch: channel (started on line 2) and rss, line 3, column 7",
        ),
        (b"<rss><channel></rss>", "Opening and ending tag mismatch: channel and rss, line 1, column 21"),
        (b"<rss\n  version='2.0'\n", "Couldn't find end of Start Tag rss (started on line 1), line 3, column 1"),
        # messages without a line of their own are as lxml writes them
        (b"<rss><channel>&bogus;</channel></rss>", "Entity 'bogus' not defined, line 1, column 22"),
    ],
)
def test_xml_errors_give_the_position_once(body: bytes, error: str) -> None:
    feed = parse_feed(body)
    assert not feed.well_formed
    assert feed.error == error
    assert not re.search(r"line \d+, line \d+", feed.error)


# --------------------------------------------------------------------------- scheduling hints: ttl, skipHours, skipDays, sy

SY_NS = "http://purl.org/rss/1.0/modules/syndication/"


def _channel(inner: str) -> ParsedFeed:
    return parse_feed(
        (
            f'<?xml version="1.0"?>\n<rss version="2.0" xmlns:sy="{SY_NS}"><channel>'
            f"<title>T</title><link>http://example.com/</link><description>D</description>{inner}"
            "<item><title>i</title></item></channel></rss>"
        ).encode()
    )


@pytest.mark.parametrize(
    ("inner", "ttl"),
    [
        ("<ttl>60</ttl>", 60),
        ("<ttl>\n 15 \n</ttl>", 15),
        ("<ttl>0</ttl>", 0),
        ("<ttl>060</ttl>", 60),
        ("", None),
        ("<ttl></ttl>", None),
        ("<ttl>   </ttl>", None),
        ("<ttl>sixty</ttl>", None),
        ("<ttl>1.5</ttl>", None),
        ("<ttl>-1</ttl>", None),
        ("<ttl>+5</ttl>", None),
        ("<ttl>６０</ttl>", None),  # not ASCII digits
        ("<ttl>2147483648</ttl>", None),  # does not fit the int32 column
        ("<ttl>2147483647</ttl>", 2147483647),
        ("<ttl>soon</ttl><ttl>30</ttl>", 30),  # the first valid one
        ("<ttl>30</ttl><ttl>90</ttl>", 30),
        ("<image><ttl>5</ttl></image>", None),  # not at channel level
    ],
)
def test_ttl(inner: str, ttl: int | None) -> None:
    feed = _channel(inner)
    assert feed.well_formed
    assert feed.ttl == ttl


def test_skip_hours_24_is_midnight_and_junk_is_dropped() -> None:
    feed = _channel(
        "<skipHours><hour>24</hour><hour>25</hour><hour>x</hour><hour> 7 </hour><hour>23</hour>"
        "<hour>0</hour><hour>-1</hour><hour>2.5</hour><hour></hour><hour>07</hour></skipHours>"
    )
    assert feed.skip_hours == (0, 7, 23)
    assert usage_of(feed, "skipHours")["hour"][0] == 10  # still tallied, every one
    assert _channel("").skip_hours == ()
    assert _channel("<skipHours><hour>25</hour></skipHours>").skip_hours == ()


def test_skip_hours_of_two_elements_are_merged() -> None:
    feed = _channel("<skipHours><hour>5</hour></skipHours><skipHours><hour>1</hour><hour>5</hour></skipHours>")
    assert feed.skip_hours == (1, 5)


def test_skip_days_case_whitespace_and_junk() -> None:
    feed = _channel(
        "<skipDays><day>sunday</day><day> MONDAY </day><day>Funday</day><day>Mon</day>"
        "<day>Monday</day><day>saturday</day><day></day><day>Wednesday</day></skipDays>"
    )
    assert feed.skip_days == ("Monday", "Wednesday", "Saturday", "Sunday")  # week order, each once
    assert _channel("<skipDays><day>Fantabuday</day></skipDays>").skip_days == ()
    assert _channel("").skip_days == ()


@pytest.mark.parametrize(
    ("inner", "period", "frequency"),
    [
        ("<sy:updatePeriod>hourly</sy:updatePeriod><sy:updateFrequency>2</sy:updateFrequency>", "hourly", 2),
        ("<sy:updatePeriod> Daily </sy:updatePeriod>", "daily", 1),  # lower-cased; no frequency: 1
        ("<sy:updatePeriod>WEEKLY</sy:updatePeriod><sy:updateFrequency>0</sy:updateFrequency>", "weekly", 1),
        ("<sy:updatePeriod>monthly</sy:updatePeriod><sy:updateFrequency>1.5</sy:updateFrequency>", "monthly", 1),
        ("<sy:updatePeriod>yearly</sy:updatePeriod><sy:updateFrequency>-3</sy:updateFrequency>", "yearly", 1),
        ("<sy:updateFrequency> 4 </sy:updateFrequency><sy:updatePeriod>daily</sy:updatePeriod>", "daily", 4),
        ("<sy:updatePeriod>fortnightly</sy:updatePeriod><sy:updateFrequency>2</sy:updateFrequency>", None, None),
        ("<sy:updatePeriod></sy:updatePeriod>", None, None),
        ("<sy:updateFrequency>2</sy:updateFrequency>", None, None),  # no period: no frequency either
        ("<sy:updatePeriod>nope</sy:updatePeriod><sy:updatePeriod>daily</sy:updatePeriod>", "daily", 1),
        ("<updatePeriod>daily</updatePeriod>", None, None),  # not in the syndication namespace
        ("", None, None),
    ],
)
def test_sy_in_rss20(inner: str, period: str | None, frequency: int | None) -> None:
    feed = _channel(inner)
    assert (feed.update_period, feed.update_frequency) == (period, frequency)


def test_sy_and_skip_in_rss10() -> None:
    body = f"""<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
         xmlns:syn="{SY_NS}">
<channel rdf:about="http://example.com/"><title>T</title><link>http://example.com/</link><description>D</description>
  <syn:updatePeriod>hourly</syn:updatePeriod><syn:updateFrequency>3</syn:updateFrequency>
  <syn:updateBase>2000-01-01T12:00+00:00</syn:updateBase><ttl>45</ttl>
  <skipHours><hour>24</hour></skipHours><skipDays><day>friday</day></skipDays>
</channel>
<item rdf:about="http://example.com/a"><title>A</title><link>http://example.com/a</link></item>
</rdf:RDF>""".encode()
    feed = parse_feed(body)
    assert (feed.format, feed.version) == ("rdf", "1.0")
    assert (feed.update_period, feed.update_frequency) == ("hourly", 3)  # any prefix: the namespace counts
    assert (feed.ttl, feed.skip_hours, feed.skip_days) == (45, (0,), ("Friday",))


def test_sy_in_atom_and_rss_elements_ignored_there() -> None:
    body = f"""<?xml version="1.0"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:sy="{SY_NS}"><title>F</title><id>urn:f</id>
<updated>2024-01-01T00:00:00Z</updated><sy:updatePeriod>weekly</sy:updatePeriod>
<sy:updateFrequency>7</sy:updateFrequency><ttl xmlns="">5</ttl>
<entry><title>E</title><id>urn:e</id><updated>2024-01-01T00:00:00Z</updated>
<sy:updatePeriod>hourly</sy:updatePeriod></entry></feed>""".encode()
    feed = parse_feed(body)
    assert feed.format == "atom"
    assert (feed.update_period, feed.update_frequency) == ("weekly", 7)
    assert feed.ttl is None  # RSS only
    # an entry's sy elements are not the feed's
    only_in_entry = parse_feed(body.replace(b"<sy:updatePeriod>weekly</sy:updatePeriod>", b""))
    assert (only_in_entry.update_period, only_in_entry.update_frequency) == (None, None)


def test_scheduling_hints_of_a_recovered_document() -> None:
    feed = parse_feed(
        b"<rss version='2.0'><channel><ttl>30</ttl><skipHours><hour>3</hour><hour>&bogus;</hour></skipHours>"
        b"<skipDays><day>Tuesday<day></skipDays>"
    )
    assert not feed.well_formed
    assert feed.ttl == 30 and 3 in feed.skip_hours
    assert all(0 <= h <= 23 for h in feed.skip_hours)
    assert set(feed.skip_days) <= {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}


# the W3C Feed Validator's own cases: file -> (ttl, skip_hours, skip_days, update_period, update_frequency)
VALIDATOR = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "validator_cases" / "testcases"
VALIDATOR_CASES: dict[str, tuple[int | None, tuple[int, ...], tuple[str, ...], str | None, int | None]] = {
    "rss20/element-channel-ttl/ttl.xml": (60, (), (), None, None),
    "rss20/element-channel-ttl/invalid_ttl_zero.xml": (0, (), (), None, None),  # the profile wants > 0; kept
    "rss20/element-channel-ttl/invalid_ttl_blank.xml": (None, (), (), None, None),
    "rss20/element-channel-ttl/invalid_ttl_fractional.xml": (None, (), (), None, None),
    "rss20/element-channel-ttl/invalid_ttl_negative.xml": (None, (), (), None, None),
    "rss20/element-channel-ttl/invalid_ttl_nonnumeric.xml": (None, (), (), None, None),
    "rss20/element-channel-skiphours-hour/duplicate_skipHours_midnight.xml": (None, (0,), (), None, None),
    "rss20/element-channel-skiphours-hour/duplicate_skipHours_noon.xml": (None, (12,), (), None, None),
    "rss20/element-channel-skiphours-hour/skipHours_24_hours.xml": (None, tuple(range(24)), (), None, None),
    "rss20/element-channel-skiphours-hour/skipHours_invalid_hour_fractional.xml": (None, (), (), None, None),
    "rss20/element-channel-skiphours-hour/skipHours_invalid_hour_high.xml": (None, (), (), None, None),
    "rss20/element-channel-skiphours-hour/skipHours_invalid_hour_low.xml": (None, (), (), None, None),
    "rss20/element-channel-skiphours-hour/skipHours_obsolete_midnight.xml": (None, (0,), (), None, None),
    "rss20/element-channel-skiphours-hour/skipHours_valid_hour_high.xml": (None, (23,), (), None, None),
    "rss20/element-channel-skiphours-hour/skipHours_valid_hour_low.xml": (None, (0,), (), None, None),
    "rss20/element-channel-skipdays-day/duplicate_skipDays.xml": (None, (), ("Sunday",), None, None),
    "rss20/element-channel-skipdays-day/invalid_skipDays_bad_day.xml": (None, (), (), None, None),
    "rss20/element-channel-skipdays-day/invalid_skipDays_no_days.xml": (None, (), (), None, None),
    "rss20/element-channel-skipdays-day/skipDays_wednesday.xml": (None, (), ("Wednesday",), None, None),
    "rss/must/sy_updatePeriod_hourly.xml": (None, (), (), "hourly", 1),
    "rss/must/sy_updatePeriod_yearly.xml": (None, (), (), "yearly", 1),
    "rss/must/multiple_sy_updatePeriod.xml": (None, (), (), "yearly", 1),
    "rss/must/invalid_sy_updatePeriod.xml": (None, (), (), None, None),
    "rss/must/invalid_sy_updatePeriod_blank.xml": (None, (), (), None, None),
    "rss/must/sy_updateFrequency.xml": (None, (), (), None, None),  # a frequency without a period
}


@pytest.mark.skipif(not VALIDATOR.is_dir(), reason=f"validator cases not found at {VALIDATOR}")
@pytest.mark.parametrize("case", list(VALIDATOR_CASES))
def test_scheduling_hints_of_the_validator_cases(case: str) -> None:
    feed = parse_feed((VALIDATOR / case).read_bytes())
    assert feed.well_formed and feed.format == "rss"
    got = (feed.ttl, feed.skip_hours, feed.skip_days, feed.update_period, feed.update_frequency)
    assert got == VALIDATOR_CASES[case]


BENCHMARK_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "benchmark_feeds"


def _independent_hints(body: bytes) -> tuple[int | None, str | None, int | None] | None:
    """(ttl, update_period, update_frequency) read with the standard library; None when it cannot read it."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError:
        return None
    channel = root.find("channel") if root.tag == "rss" else root
    if channel is None:
        return None
    ttls = (
        [el.text.strip() for el in channel.findall("ttl") if el.text and el.text.strip()] if root.tag == "rss" else []
    )
    ttl = next((int(t) for t in ttls if re.fullmatch(r"[0-9]+", t)), None)
    periods = [(el.text or "").strip().lower() for el in channel.findall(f"{{{SY_NS}}}updatePeriod")]
    period = next((p for p in periods if p in ("hourly", "daily", "weekly", "monthly", "yearly")), None)
    frequencies = [(el.text or "").strip() for el in channel.findall(f"{{{SY_NS}}}updateFrequency")]
    frequency = next((int(f) for f in frequencies if re.fullmatch(r"[0-9]+", f) and int(f) > 0), None)
    return ttl, period, None if period is None else frequency or 1


@pytest.mark.skipif(not BENCHMARK_DIR.is_dir(), reason=f"benchmark feeds not found at {BENCHMARK_DIR}")
def test_scheduling_hints_of_real_feeds() -> None:
    seen = {"ttl": 0, "sy": 0}
    for path in sorted(p for p in BENCHMARK_DIR.iterdir() if p.name != "manifest.tsv"):
        body = path.read_bytes()
        expected = _independent_hints(body)
        if expected is None:
            continue
        feed = parse_feed(body, f"https://bench.example/{path.name}")
        assert (feed.ttl, feed.update_period, feed.update_frequency) == expected, path.name
        noted = parse_feed(body, f"https://bench.example/{path.name}", with_notes=True)
        hints = (feed.ttl, feed.skip_hours, feed.skip_days, feed.update_period, feed.update_frequency)
        assert (noted.ttl, noted.skip_hours, noted.skip_days, noted.update_period, noted.update_frequency) == hints
        seen["ttl"] += feed.ttl is not None
        seen["sy"] += feed.update_period is not None
    assert seen["ttl"] >= 10 and seen["sy"] >= 25  # the corpus has 15 feeds with <ttl>, 30+ with sy
