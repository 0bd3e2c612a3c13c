"""A PEP 517 build backend of the standard library only, for this one package.

`pip install ./clients/python` builds the package in an isolated environment that holds only what
`[build-system] requires` names. Naming setuptools there makes pip download it, which fails offline;
a fresh virtual environment of Python 3.12+ has no setuptools at all, and the one 3.11's venv bundles
cannot build a wheel without the `wheel` package. This backend needs nothing: it zips `src/whetstone`
into a pure-Python wheel (PEP 427) with the metadata of `pyproject.toml` `[project]` (PEP 621).
`tomllib` is 3.11+, so the few `key = "string"` lines it needs are read by a small parser; a test
checks the parser reads what `tomllib` reads.
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = "whetstone"
# Every file of these folders goes into the sdist; the wheel takes src/whetstone only.
SDIST_DIRS = ("src", "build_backend", "tests")
SDIST_FILES = ("pyproject.toml", "README.md")


def read_project(path=None):
    """The `[project]` table's string values (name, version, description, requires-python, ...)."""
    path = path or os.path.join(ROOT, "pyproject.toml")
    project = {}
    in_project = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            stripped = line.strip()
            if stripped.startswith("["):
                in_project = stripped == "[project]"
                continue
            match = re.match(r'^([A-Za-z0-9_-]+)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(#.*)?$', stripped)
            if in_project and match:
                project[match.group(1)] = match.group(2).replace('\\"', '"').replace("\\\\", "\\")
    return project


def _dist_name(project):
    return re.sub(r"[-_.]+", "_", project["name"]).lower()


def _metadata(project):
    lines = [
        "Metadata-Version: 2.1",
        "Name: " + project["name"],
        "Version: " + project["version"],
        "Summary: " + project.get("description", ""),
        "Requires-Python: " + project.get("requires-python", ""),
        "License: " + project.get("license", ""),
    ]
    readme = os.path.join(ROOT, project.get("readme", "README.md"))
    if os.path.exists(readme):
        lines.append("Description-Content-Type: text/markdown")
        with open(readme, encoding="utf-8") as f:
            return "\n".join(lines) + "\n\n" + f.read()
    return "\n".join(lines) + "\n"


def _wheel_file():
    return "Wheel-Version: 1.0\nGenerator: whetstone_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"


def _package_files():
    """(path inside the wheel, bytes) of every file of src/whetstone but caches."""
    base = os.path.join(ROOT, "src")
    out = []
    for folder, dirs, files in os.walk(os.path.join(base, PACKAGE)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith((".pyc", ".pyo")):
                continue
            full = os.path.join(folder, name)
            with open(full, "rb") as f:
                out.append((os.path.relpath(full, base).replace(os.sep, "/"), f.read()))
    return out


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
    return "%s,sha256=%s,%d" % (path, digest, len(data))


def _write_wheel(wheel_directory, files):
    project = read_project()
    dist = _dist_name(project)
    info = "%s-%s.dist-info" % (dist, project["version"])
    entries = list(files) + [
        (info + "/METADATA", _metadata(project).encode("utf-8")),
        (info + "/WHEEL", _wheel_file().encode("utf-8")),
    ]
    record = "\n".join(_record_line(p, d) for p, d in entries) + "\n" + info + "/RECORD,,\n"
    entries.append((info + "/RECORD", record.encode("utf-8")))
    filename = "%s-%s-py3-none-any.whl" % (dist, project["version"])
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w", zipfile.ZIP_DEFLATED) as whl:
        for path, data in entries:
            whl.writestr(zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0)), data)
    return filename


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """A pure-Python wheel of src/whetstone."""
    return _write_wheel(wheel_directory, _package_files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """`pip install -e`: a wheel holding one .pth file that puts src/ on sys.path (PEP 660)."""
    pth = (os.path.join(ROOT, "src") + "\n").encode("utf-8")
    return _write_wheel(wheel_directory, [("__editable__.%s.pth" % PACKAGE, pth)])


def build_sdist(sdist_directory, config_settings=None):
    """A .tar.gz of pyproject.toml, README.md, src/, build_backend/ and tests/ with PKG-INFO."""
    project = read_project()
    stem = "%s-%s" % (_dist_name(project), project["version"])
    filename = stem + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for name in SDIST_FILES:
            tar.add(os.path.join(ROOT, name), arcname=stem + "/" + name)
        for folder in SDIST_DIRS:
            tar.add(
                os.path.join(ROOT, folder),
                arcname=stem + "/" + folder,
                filter=lambda t: None if "__pycache__" in t.name or t.name.endswith(".pyc") else t,
            )
        info = tarfile.TarInfo(stem + "/PKG-INFO")
        data = _metadata(project).encode("utf-8")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return filename
