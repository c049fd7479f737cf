"""A job that ``memoryd serve`` runs every so often in a daemon thread.

One place for the loop, the stop and the rule that a failing run is logged
and the next one still comes: the consolidation schedule and the session
worker are each only their ``run_once``.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)


class Periodic:
    """``run_once`` every ``interval_s`` (first at start when ``at_start``), until ``stop``.

    ``turn``, when given, is asked before each timed run and skips it when another
    process sharing the database ran the job this interval (``Store.take_turn``). The
    run at start is not asked: it finishes what this process left when it stopped."""

    name = "memoryd-periodic"
    at_start = False

    def __init__(self, interval_s: float, turn: Callable[[str, float], bool] | None = None) -> None:
        self.interval_s = interval_s
        self.turn = turn
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def run_once(self) -> Any:
        raise NotImplementedError

    def _loop(self) -> None:
        if self.at_start:
            self._run(ask=False)
        while not self._stop.wait(self.interval_s):
            self._run()

    def _run(self, ask: bool = True) -> None:
        try:
            if ask and self.turn is not None and not self.turn(self.name, self.interval_s):
                log.debug("%s: another process ran it this interval", self.name)
                return
            self.run_once()
        except Exception:  # the next run still comes (logged)
            log.exception("%s: a run failed", self.name)


def exit_with(parent: int, every_s: float) -> None:
    """This process exits once ``parent``, the process that started it, is gone (killed
    outright too), looked at every ``every_s`` from a daemon thread.

    ``parent`` comes from the starting process itself: a child still starting when
    it died has already been handed to another parent, which ``os.getppid()`` in
    the child would take for its own.
    """

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every_s)
        os._exit(1)

    threading.Thread(target=watch, name="memoryd-parent", daemon=True).start()
