"""bwrap shows the host read-only, but never the container runtimes' storage: mounts
there come and go with other programs' containers, and one that went away while a
sandbox started failed it ("Can't bind mount /oldroot/var ... Invalid argument")."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import pytest
from tests.sandbox_runtimes import require, run_confined

import profiler_core.sandbox.bwrap as bwrap
from profiler_core.sandbox import Job, SandboxSettings, confine

PATH = "/usr/local/bin:/usr/bin:/bin"


@pytest.fixture
def beside_var(monkeypatch):
    """A folder under /var with an entry that is ``UNSHOWN`` and one that is not."""
    root = Path("/var/tmp") / f"profiler-unshown-{uuid.uuid4().hex[:8]}"
    (root / "churning").mkdir(parents=True)
    (root / "churning" / "secret").write_text("not for agents")
    (root / "kept").write_text("shown\n")
    monkeypatch.setattr(bwrap, "UNSHOWN", (*bwrap.UNSHOWN, str(root / "churning")))
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_what_is_unshown_is_absent_and_the_rest_of_its_folder_is_shown(
    tmp_path, beside_var
):
    require("bwrap")
    script = (
        f"ls {beside_var}; cat {beside_var}/kept; "
        "ls -d /var/lib/dpkg /var/lib/docker /var/lib/containers 2>/dev/null; "
        "touch /var/made 2>/dev/null || echo read-only"
    )
    job = Job(argv=("sh", "-c", script), env={"PATH": PATH}, workspace=tmp_path)
    with confine(SandboxSettings(sandbox="bwrap"), job) as box:
        done = run_confined(box, 60)
    assert done.returncode == 0, done.stderr
    seen = done.stdout.split()
    # beside the unshown folder, its folder's other entries; the runtimes' storage absent
    assert "kept" in seen and "shown" in seen and "churning" not in seen, seen
    assert "/var/lib/docker" not in seen and "/var/lib/containers" not in seen, seen
    if Path("/var/lib/dpkg").is_dir():
        assert "/var/lib/dpkg" in seen, seen
    assert (
        seen[-1] == "read-only"
    )  # /var, made entry by entry, is as read-only as before
