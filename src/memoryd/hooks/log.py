"""The hook log: where a hook's records go, since its stdout is the host's to read."""

from __future__ import annotations

import logging
import logging.handlers
import sys
from collections.abc import Callable

from memoryd.hooks.config import HookConfig

log = logging.getLogger(__name__)

LOG_MAX_BYTES = 1024 * 1024
LOG_BACKUPS = 1
LOG_FORMAT = "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"


def start_log(config: HookConfig) -> Callable[[], None]:
    """Log memoryd's records to the hook log (stderr if it cannot be opened); returns the undo.

    Never to stdout: Claude Code parses stdout as the hook's answer. The undo
    puts the logger back as it was, for callers that run a hook in process.
    """
    logger = logging.getLogger("memoryd")
    level = logger.level
    handler: logging.Handler
    problem: OSError | None = None
    try:
        config.log_path.parent.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(
            config.log_path, maxBytes=LOG_MAX_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8"
        )
    except OSError as exc:
        handler, problem = logging.StreamHandler(sys.stderr), exc
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    if problem is not None:
        log.warning("cannot open the hook log %s: %s", config.log_path, problem)

    def undo() -> None:
        logger.removeHandler(handler)
        logger.setLevel(level)
        handler.close()

    return undo
