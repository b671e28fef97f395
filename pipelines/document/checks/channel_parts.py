"""The channel's compound elements: cloud (4.1.1.5), image (4.1.1.9), skipDays (4.1.1.15),
skipHours (4.1.1.16) and textInput (4.1.1.17).

Judgement calls: image formats are judged by the file extension of the URL,
when it has one; ``<hour>24</hour>`` is an error (4.1.1.16.1 permits 0-23)
under its own id so it can be told from other bad hours, and counts as 0 for
duplicates.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pipelines.document.checks.context import Acc, Element, children, is_core, text_of
from pipelines.document.checks.values import check_url, positive_int
from pipelines.document.checks.walk import (
    Section,
    Walk,
    at_most_once,
    required,
    required_attributes,
    walk_inner,
    walk_scope,
)

__all__ = ["CLOUD_RULES", "IMAGE", "SKIP_DAYS_RULES", "SKIP_HOURS_RULES", "TEXT_INPUT", "walk_images"]

_PLAIN_SUB = frozenset(["title", "description"])  # image and textInput

# ---------------------------------------------------------------- 4.1.1.5 cloud (attributes only)

_CLOUD_ATTRS = ("domain", "path", "port", "protocol", "registerProcedure")
_CLOUD_PROTOCOLS = frozenset({"xml-rpc", "soap", "http-post"})


def cloud_port_invalid(acc: Acc, scope: str, el: Element) -> None:
    """A TCP port: 1-65535 (0 is reserved, not a port a client can be told to use)."""
    port = el.get("port")
    if port is not None and ((n := positive_int(port)) is None or not 1 <= n <= 65535):
        acc.add("cloud-attribute-invalid", scope, f'port="{port}"')


def cloud_protocol_invalid(acc: Acc, scope: str, el: Element) -> None:
    protocol = el.get("protocol")
    if protocol is not None and protocol.strip().lower() not in _CLOUD_PROTOCOLS:
        acc.add("cloud-attribute-invalid", scope, f'protocol="{protocol}"')


CLOUD_RULES = (
    ("cloud-missing-attribute", required_attributes("cloud-missing-attribute", _CLOUD_ATTRS)),
    ("cloud-attribute-invalid", cloud_port_invalid),
    ("cloud-attribute-invalid", cloud_protocol_invalid),
)

# ---------------------------------------------------------------- 4.1.1.9 image

_IMAGE_CORE = frozenset(["url", "title", "link", "width", "height", "description"])
_IMAGE_EXT_RE = re.compile(r"\.([A-Za-z0-9]{1,5})\Z")
_IMAGE_EXTS = frozenset({"gif", "jpg", "jpeg", "jpe", "jfif", "pjpeg", "png"})
_MAX_WIDTH, _MAX_HEIGHT = 144, 400


def image_url_format(acc: Acc, scope: str, text: str, el: Element) -> None:
    """4.1.1.9.3: the image is a GIF, JPEG or PNG (by the URL's file extension, when it has one)."""
    path = text.strip().split("#", 1)[0].split("?", 1)[0].rsplit("/", 1)[-1]
    ext = _IMAGE_EXT_RE.search(path)
    if ext is not None and ext.group(1).lower() not in _IMAGE_EXTS and "://" in text:
        acc.add("image-url-format", scope, text)


def _size(text: str) -> int | None:
    n = positive_int(text)
    return n if n is not None and n >= 1 else None


def width_not_integer(acc: Acc, scope: str, text: str, el: Element) -> None:
    if _size(text) is None:
        acc.add("image-size-not-integer", scope, f"width={text.strip()}")


def height_not_integer(acc: Acc, scope: str, text: str, el: Element) -> None:
    if _size(text) is None:
        acc.add("image-size-not-integer", scope, f"height={text.strip()}")


def image_too_wide(acc: Acc, scope: str, text: str, el: Element) -> None:
    if (n := _size(text)) is not None and n > _MAX_WIDTH:
        acc.add("image-too-wide", scope, text)


def image_too_tall(acc: Acc, scope: str, text: str, el: Element) -> None:
    if (n := _size(text)) is not None and n > _MAX_HEIGHT:
        acc.add("image-too-tall", scope, text)


def _channel_text(walk: Walk, name: str) -> str | None:
    return None if walk.parent is None else walk.parent.texts.get(name)


def image_title_mismatch(acc: Acc, walk: Walk) -> None:
    title, channel_title = walk.texts.get("title"), _channel_text(walk, "title")
    if title is not None and channel_title is not None and " ".join(title.split()) != " ".join(channel_title.split()):
        acc.add("image-title-mismatch", walk.scope, title)


def image_link_mismatch(acc: Acc, walk: Walk) -> None:
    link, channel_link = walk.texts.get("link"), _channel_text(walk, "link")
    if link is not None and channel_link is not None and link.strip().rstrip("/") != channel_link.strip().rstrip("/"):
        acc.add("image-link-mismatch", walk.scope, link)


IMAGE = Section(
    scope="image",
    defined=_IMAGE_CORE,
    plain=_PLAIN_SUB,
    text_rules={
        "url": (("url-not-absolute", check_url), ("image-url-format", image_url_format)),
        "link": (("url-not-absolute", check_url),),
        "width": (("image-size-not-integer", width_not_integer), ("image-too-wide", image_too_wide)),
        "height": (("image-size-not-integer", height_not_integer), ("image-too-tall", image_too_tall)),
    },
    scope_rules=(
        ("image-missing-required", required("image-missing-required", ("link", "title", "url"))),
        ("duplicate-image-element", at_most_once("duplicate-image-element", _IMAGE_CORE)),
        ("image-title-mismatch", image_title_mismatch),
        ("image-link-mismatch", image_link_mismatch),
    ),
)


def walk_images(acc: Acc, channel: Walk) -> None:
    """Each of the channel's images, after the channel (its title and link are compared with the channel's)."""
    walk_inner(acc, IMAGE, channel, "image")


# ---------------------------------------------------------------- 4.1.1.17 textInput

_TEXT_INPUT_CORE = frozenset(["title", "description", "name", "link"])
_FORM_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9:\-._]*\Z")


def text_input_name_invalid(acc: Acc, scope: str, text: str, el: Element) -> None:
    """4.1.1.17.3: an HTML form component name."""
    if _FORM_NAME_RE.match(text.strip()) is None:
        acc.add("text-input-name-invalid", scope, text or "(empty)")


TEXT_INPUT = Section(
    scope="textInput",
    defined=_TEXT_INPUT_CORE,
    plain=_PLAIN_SUB,
    text_rules={
        "link": (("url-not-absolute", check_url),),
        "name": (("text-input-name-invalid", text_input_name_invalid),),
    },
    scope_rules=(
        (
            "text-input-missing-required",
            required("text-input-missing-required", ("description", "link", "name", "title")),
        ),
        ("duplicate-text-input-element", at_most_once("duplicate-text-input-element", _TEXT_INPUT_CORE)),
    ),
)


def text_input_present(acc: Acc, scope: str, el: Element) -> None:
    acc.add("text-input-present", scope, "textInput")


def walk_text_input(acc: Acc, scope: str, el: Element) -> None:
    walk_scope(acc, TEXT_INPUT, el)


# ---------------------------------------------------------------- 4.1.1.15 skipDays, 4.1.1.16 skipHours

#: A rule on the values of one skipDays or skipHours: (acc, scope, texts of its day or hour children).
ListRule = Callable[[Acc, str, list[str]], None]
_DAYS = frozenset(["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"])


def _values(acc: Acc, scope: str, el: Element, child_name: str) -> list[str]:
    """The texts of the ``child_name`` children of ``el``; any other child in no namespace is undefined."""
    texts = []
    for child, name in children(el, acc):
        if name == child_name:
            texts.append(text_of(child, acc))
        elif is_core(name):
            acc.add("undefined-element", scope, name)
    return texts


def skip_day_invalid(acc: Acc, scope: str, days: list[str]) -> None:
    for text in days:
        if (day := text.strip()) not in _DAYS:
            acc.add("skip-day-invalid", scope, day or "(empty)")


def skip_day_duplicate(acc: Acc, scope: str, days: list[str]) -> None:
    seen: set[str] = set()
    for text in days:
        if (day := text.strip()) in _DAYS and day in seen:
            acc.add("skip-day-duplicate", scope, day)
        seen.add(day)


def skip_days_empty(acc: Acc, scope: str, days: list[str]) -> None:
    """A skipDays "contains up to seven day elements": one with none says nothing (the validator's MissingElement)."""
    if not days:
        acc.add("skip-days-empty", scope, "skipDays")


SKIP_DAYS_RULES: tuple[tuple[str, ListRule], ...] = (
    ("skip-days-empty", skip_days_empty),
    ("skip-day-invalid", skip_day_invalid),
    ("skip-day-duplicate", skip_day_duplicate),
)


def _hour(text: str) -> int | None:
    """The hour 0-23 (24 read as 0), or None when it is not one."""
    n = positive_int(text)
    if n == 24:
        return 0
    return n if n is not None and n <= 23 else None


def skip_hour_24(acc: Acc, scope: str, hours: list[str]) -> None:
    for text in hours:
        if positive_int(text) == 24:
            acc.add("skip-hour-24", scope, text)


def skip_hour_invalid(acc: Acc, scope: str, hours: list[str]) -> None:
    for text in hours:
        if _hour(text) is None:
            acc.add("skip-hour-invalid", scope, text or "(empty)")


def skip_hour_duplicate(acc: Acc, scope: str, hours: list[str]) -> None:
    seen: set[int] = set()
    for text in hours:
        if (hour := _hour(text)) is not None:
            if hour in seen:
                acc.add("skip-hour-duplicate", scope, text)
            seen.add(hour)


SKIP_HOURS_RULES: tuple[tuple[str, ListRule], ...] = (
    ("skip-hour-invalid", skip_hour_invalid),
    ("skip-hour-24", skip_hour_24),
    ("skip-hour-duplicate", skip_hour_duplicate),
)


def walk_skip_days(acc: Acc, scope: str, el: Element) -> None:
    acc.run(SKIP_DAYS_RULES, acc, "skipDays", _values(acc, "skipDays", el, "day"))


def walk_skip_hours(acc: Acc, scope: str, el: Element) -> None:
    acc.run(SKIP_HOURS_RULES, acc, "skipHours", _values(acc, "skipHours", el, "hour"))
