"""Periodic jobs on several servers sharing one database: each interval's run happens once."""

from __future__ import annotations

import time
from pathlib import Path

from memoryd.embed.local import LocalEmbedder
from memoryd.periodic import Periodic
from memoryd.service import MemoryService

EVERY_S = 0.4


class Counted(Periodic):
    name = "memoryd-test-job"

    def __init__(self, svc: MemoryService) -> None:
        self.runs = 0
        super().__init__(EVERY_S, svc.store.take_turn)

    def run_once(self) -> None:
        self.runs += 1


def test_one_process_a_turn(home: Path, embedder: LocalEmbedder) -> None:
    with (
        MemoryService(home, embedder=embedder) as one,
        MemoryService(home, embedder=embedder) as two,
    ):
        first, second = Counted(one), Counted(two)
        first._run()
        second._run()  # the other server's timer, a moment later: the interval's run is done
        assert (first.runs, second.runs) == (1, 0)
        time.sleep(EVERY_S)
        second._run()  # the next interval: whichever timer comes first runs it
        first._run()
        assert (first.runs, second.runs) == (1, 1)
        # another job's turns are its own
        assert one.store.take_turn("memoryd-other-job", EVERY_S)
        assert not two.store.take_turn("memoryd-other-job", EVERY_S)
