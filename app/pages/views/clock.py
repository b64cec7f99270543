"""Times on the pages: in the course's time zone (FLASHJUDGE_COURSE_TIMEZONE) with its offset,
"2026-12-01 23:59 UTC+08:00". Each is a <time> carrying the UTC instant, so app/static/app.js
can add the viewer's own clock where it differs from the course's (a student abroad)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from jinja2 import pass_context
from markupsafe import Markup

from flashjudge.timefmt import moment_text, offset_text


def course_zone(context: Any) -> Any:
    return context["request"].app.state.settings.course_zone


def as_moment(value: datetime | str) -> datetime:
    """A datetime, or one read back from ISO 8601 ("...Z" included, as the API writes them)."""
    return value if isinstance(value, datetime) else datetime.fromisoformat(
        value.replace("Z", "+00:00"))


def utc_iso(moment: datetime) -> str:
    """The instant as ISO 8601 UTC ("...Z"); a naive moment is UTC, as the database keeps it."""
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@pass_context
def when(context: Any, moment: datetime | str | None, fmt: str = "%Y-%m-%d %H:%M"
         ) -> Markup | str:
    """A moment for the page: `<time datetime=UTC data-local>` in the course's zone."""
    if not moment:
        return ""
    moment = as_moment(moment)
    zone = course_zone(context)
    return Markup('<time datetime="{}" data-local title="{}">{}</time>').format(
        utc_iso(moment), zone.key, moment_text(moment, zone, fmt))


@pass_context
def when_text(context: Any, moment: datetime | str | None, fmt: str = "%Y-%m-%d %H:%M") -> str:
    """The same as plain text, where no markup may go (an <option>, an attribute)."""
    return moment_text(as_moment(moment), course_zone(context), fmt) if moment else ""


@pass_context
def picker_value(context: Any, moment: datetime | str | None) -> str:
    """A moment as a datetime-local input's value: the course's wall clock, no offset."""
    if not moment:
        return ""
    local = as_moment(moment)
    local = (local if local.tzinfo else local.replace(tzinfo=UTC)).astimezone(
        course_zone(context))
    return local.strftime("%Y-%m-%dT%H:%M")


@pass_context
def zone_note(context: Any) -> str:
    """What a picker's times are in: "Asia/Taipei, UTC+08:00" (today's offset)."""
    zone = course_zone(context)
    return f"{zone.key}, {offset_text(datetime.now(zone))}"
