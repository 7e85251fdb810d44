"""A bwrap sandbox outlives trio's idle worker threads.

Apart from ``test_sandbox.py``: that module's tests share one xdist worker with
every container test, and this one only waits (12 s) and starts no container.
"""

from __future__ import annotations

import pytest
import trio
from tests.sandbox_runtimes import require

from profiler_core.sandbox import Job, SandboxSettings, confine

pytestmark = pytest.mark.slow

PATH = "/usr/local/bin:/usr/bin:/bin"


def test_a_bwrap_job_outlives_trios_idle_worker_threads(tmp_path):
    """trio starts processes from worker threads that exit after 10 idle seconds; the
    sandbox must not die with them."""
    require("bwrap")
    job = Job(
        argv=("sh", "-c", "sleep 12; echo still here"),
        env={"PATH": PATH},
        workspace=tmp_path,
        name="long",
    )

    async def session() -> tuple[int | None, bytes]:
        async with confine(SandboxSettings(sandbox="bwrap"), job) as box:
            done = await trio.run_process(
                box.argv,
                env=box.env,
                cwd=box.cwd,
                capture_stdout=True,
                check=False,
                start_new_session=True,
            )
        return done.returncode, done.stdout

    returncode, stdout = trio.run(session)
    assert (returncode, stdout) == (0, b"still here\n")
