"""The server's log lines: plain for a person at a terminal, or one JSON object a line.

``memoryd serve --log-format json`` writes each line as an object with its
time, level, logger, message and the id of the request it was written for
(``request_id``, the ``X-Request-Id`` its answer carried; ``-`` outside a
request), and the traceback when there is one: what a log shipper indexes
without parsing. The plain format carries the request id too.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from memoryd.server.metrics import request_id


class RequestIdFilter(logging.Filter):
    """Puts the current request's id on each record (``-`` outside a request)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = request_id.get()
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", "-"),
        }
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, ensure_ascii=False)


def log_config(fmt: str, level: str) -> dict[str, Any]:
    """uvicorn's ``log_config`` for memoryd's and uvicorn's loggers alike."""
    formatter: dict[str, Any] = (
        {"()": JsonFormatter}
        if fmt == "json"
        else {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"}
    )
    handler = {
        "class": "logging.StreamHandler",
        "formatter": "main",
        "filters": ["request_id"],
        "stream": "ext://sys.stderr",
    }
    loggers = {
        name: {"handlers": ["main"], "level": level.upper(), "propagate": False}
        for name in ("memoryd", "uvicorn", "uvicorn.error", "uvicorn.access")
    }
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"request_id": {"()": RequestIdFilter}},
        "formatters": {"main": formatter},
        "handlers": {"main": handler},
        "loggers": loggers,
    }
