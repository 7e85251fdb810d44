"""numpy's import through ``profiler_core.util.arrays``: OpenBLAS's idle threads told to sleep at
once, the setting seen by numpy's import only, and every numpy import in the package going there.

numpy here is a stand-in package put first on the path of a real subprocess: it
records the environment it was imported with, which is what OpenBLAS reads.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
KEY = "OPENBLAS_THREAD_TIMEOUT"

_CHILD = r"""
import json, os, sys
from profiler_core.util.arrays import np
print(json.dumps({"at_import": np.SEEN, "after": os.environ.get(sys.argv[1])}))
"""


def _import_with_stand_in(tmp_path: Path, env_value: str | None) -> dict:
    fake = tmp_path / "fake" / "numpy"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        f"import os\nSEEN = os.environ.get({KEY!r})\n", encoding="utf-8"
    )
    env = {k: v for k, v in os.environ.items() if k != KEY}
    if env_value is not None:
        env[KEY] = env_value
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "fake"), str(SRC)])
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, KEY],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_numpy_is_imported_with_the_short_timeout_and_children_do_not_inherit_it(
    tmp_path,
):
    assert _import_with_stand_in(tmp_path, None) == {"at_import": "4", "after": None}


def test_a_value_the_user_set_is_kept(tmp_path):
    assert _import_with_stand_in(tmp_path, "20") == {"at_import": "20", "after": "20"}


def _numpy_imports(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        else:
            continue
        if any(name.split(".")[0] == "numpy" for name in names):
            lines.append(node.lineno)
    return lines


@pytest.mark.parametrize(
    "package", ["profiler_core", "profiler_builtin_analyzers", "profiler_eval_ghx"]
)
def test_the_package_imports_numpy_only_through_util_arrays(package):
    helper = SRC / "profiler_core" / "util" / "arrays.py"
    found = [
        f"{path.relative_to(SRC)}:{line}"
        for path in sorted((SRC / package).rglob("*.py"))
        if path != helper
        for line in _numpy_imports(path)
    ]
    assert found == [], "import numpy through profiler_core.util.arrays: " + ", ".join(
        found
    )


def test_the_report_helper_imports_numpy_before_matplotlib_does(tmp_path):
    """``report.worker`` (report.html's helper process): matplotlib imports numpy too,
    so numpy must already be there, imported the quiet way."""
    fake = tmp_path / "fake"
    (fake / "numpy").mkdir(parents=True)
    (fake / "numpy" / "__init__.py").write_text(
        "import os\n"
        f"with open(os.environ['RECORD'], 'a') as f: f.write(str(os.environ.get({KEY!r})))\n"
        "def __getattr__(name): return object\n",
        encoding="utf-8",
    )
    (fake / "matplotlib" / "backends").mkdir(parents=True)
    (fake / "matplotlib" / "__init__.py").write_text("import numpy\n", encoding="utf-8")
    (fake / "matplotlib" / "backends" / "__init__.py").write_text("", encoding="utf-8")
    (fake / "matplotlib" / "backends" / "backend_svg.py").write_text(
        "", encoding="utf-8"
    )
    (fake / "matplotlib" / "figure.py").write_text("", encoding="utf-8")
    record = tmp_path / "record"
    env = {k: v for k, v in os.environ.items() if k != KEY}
    env |= {"RECORD": str(record), "PYTHONPATH": os.pathsep.join([str(fake), str(SRC)])}
    subprocess.run(
        [sys.executable, "-m", "profiler_core.report.worker"],
        env=env,
        input=b"",
        capture_output=True,
        timeout=60,
    )
    assert record.read_text() == "4"  # imported once, with the short timeout
