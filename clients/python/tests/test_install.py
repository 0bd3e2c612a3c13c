"""`pip install ./clients/python` into a fresh virtual environment with no index (offline), then the
README's Python quick start, run as written by the installed package against the Worker."""

import os
import re
import subprocess
import sys
import tempfile
import unittest

from support import ROOT, live, live_client

sys.path.insert(0, os.path.join(ROOT, "build_backend"))
import whetstone_build  # noqa: E402

REPO = os.path.dirname(os.path.dirname(ROOT))


def quick_start() -> str:
    """The README's Python block under "From Python"."""
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    section = readme[readme.index("### From Python"):]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "README.md has no python block under From Python"
    return match.group(1)


class InstallTest(unittest.TestCase):
    def test_the_backend_reads_pyproject_as_tomllib_does(self) -> None:
        import tomllib  # 3.11+; the backend itself cannot rely on it

        with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
            project = tomllib.load(f)["project"]
        read = whetstone_build.read_project()
        for key in ("name", "version", "description", "requires-python", "license", "readme"):
            self.assertEqual(read[key], project[key], key)

    def test_the_quick_start_is_under_ten_lines_to_a_reported_call(self) -> None:
        lines = [line for line in quick_start().splitlines() if line.strip()]
        self.assertLess(len(lines), 10)

    def test_pip_installs_offline_into_a_fresh_venv_and_the_quick_start_runs(self) -> None:
        url, token = live()
        with tempfile.TemporaryDirectory() as tmp:
            venv = os.path.join(tmp, "venv")
            subprocess.run([sys.executable, "-m", "venv", venv], check=True, capture_output=True)
            python = os.path.join(venv, "bin", "python")
            # No index and no pip configuration: nothing may be downloaded.
            env = dict(os.environ, PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
            pip = subprocess.run(
                [python, "-m", "pip", "install", "--no-index", os.path.join(REPO, "clients", "python")],
                env=env, capture_output=True, text=True, timeout=300,
            )
            self.assertEqual(pip.returncode, 0, pip.stdout + pip.stderr)
            self.assertIn("Successfully installed whetstone-0.1.0", pip.stdout)

            # Run from an empty folder: the installed package, not src/, answers the import.
            env = {"PATH": os.environ.get("PATH", ""), "WHETSTONE_URL": url, "WHETSTONE_TOKEN": token}
            run = subprocess.run(
                [python, "-c", "import whetstone, sys; print(whetstone.__file__)\n" + quick_start()],
                cwd=tmp, env=env, capture_output=True, text=True, timeout=120,
            )
            self.assertEqual(run.returncode, 0, run.stderr)
            where, answer = run.stdout.strip().splitlines()
            self.assertTrue(where.startswith(os.path.join(venv, "lib")), where)
            self.assertEqual(answer, "{'accepted': 1, 'duplicates': 0}")
            typed = subprocess.run(
                [python, "-c", "import importlib.resources as r; print(r.files('whetstone').joinpath('py.typed').is_file())"],
                cwd=tmp, env=env, capture_output=True, text=True,
            )
            self.assertEqual(typed.stdout.strip(), "True")

        activity = live_client("demo").tool_activity("get_weather", bucket="hour", span=1)
        self.assertEqual([b["calls"] for b in activity["buckets"]], [1])


if __name__ == "__main__":
    unittest.main()
