"""Job ids: the default one (the UTC start time) and what makes one unusable (it names a folder)."""

from __future__ import annotations

import re
from datetime import UTC, datetime


def default_job_id(now: datetime | None = None) -> str:
    """The UTC start time, sortable and safe in a path: 20261122T001500Z."""
    return (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")


#: The longest job id, in UTF-8 bytes: ``job_id=<id>`` is a folder name, which most file systems cap at 255.
JOB_ID_MAX_BYTES = 200
#: What a job id must not hold: a path separator (it would write outside the table), ``%`` (pyarrow's
#: hive partitioning decodes it: the id would not read back as written), control characters.
_JOB_ID_FORBIDDEN = re.compile(r"[/\\%\x00-\x1f\x7f]")


def job_id_problem(job_id: str) -> str | None:
    """Why ``job_id`` cannot name a job (None when it can): it names the job's folder in every table
    (``job_id=<id>``). Ids older versions wrote stay usable unless they were unsafe this way."""
    if not job_id:
        return "a job id cannot be empty"
    if (size := len(job_id.encode("utf-8", "surrogatepass"))) > JOB_ID_MAX_BYTES:
        return f"a job id has at most {JOB_ID_MAX_BYTES} bytes, not {size}"
    if job_id.startswith(".") or _JOB_ID_FORBIDDEN.search(job_id):
        return "a job id names a folder: no '/', '\\', '%' or control characters, and no '.' first"
    return None
