"""Thread budgets: one BLAS thread for the memoryd command, the model's from MEMORYD_THREADS."""

from __future__ import annotations

import os
import subprocess
import sys

from memoryd.config import Settings
from memoryd.threads import MAX_DEFAULT, cores, model_threads

COUNT_THREADS = """
import os
import numpy as np
a = np.random.rand(600, 600)
a @ a
print(len(os.listdir('/proc/self/task')))
"""


def _threads_after_a_product(prelude: str, **env: str) -> int:
    clean = {k: v for k, v in os.environ.items() if not k.endswith("_NUM_THREADS")}
    ran = subprocess.run(
        [sys.executable, "-c", prelude + COUNT_THREADS],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return int(ran.stdout.split()[-1])


def test_the_command_starts_numpy_with_one_blas_thread() -> None:
    # memoryd.entry limits BLAS before anything it imports loads NumPy
    prelude = "import memoryd.entry, sys; assert 'numpy' not in sys.modules\n"
    prelude += "from memoryd.threads import limit_blas; limit_blas()\n"
    assert _threads_after_a_product(prelude) == 1


def test_a_blas_thread_count_the_user_set_is_kept() -> None:
    prelude = "from memoryd.threads import limit_blas; limit_blas()\n"
    assert _threads_after_a_product(prelude, OPENBLAS_NUM_THREADS="2", OMP_NUM_THREADS="2") == 2


def test_the_model_gets_memoryd_threads_else_the_cores_up_to_four() -> None:
    assert model_threads(Settings(threads=3).threads) == 3
    assert model_threads(Settings().threads) == min(cores(), MAX_DEFAULT)
