"""cordon_build — a PEP 517 build backend, standard library only, for the `cordon` package.

Owns building the wheel (and an sdist, and an editable wheel) of clients/python from
src/cordon/ and the [project] table of pyproject.toml. Uses only the standard library (zipfile,
tarfile, hashlib, base64). Must never: fetch anything, run code of the package, or write
outside the directory pip gives it.

It exists so that `pip install ./clients/python` works offline: a backend named in
build-system.requires (setuptools) would have to be downloaded into pip's isolated build
environment first. It reads only the simple `key = "string"` lines of [project].

The version is cordon's own, from one place: `project(cordon VERSION X)` in the engine's
CMakeLists.txt two folders up (pip builds a local folder in place), else the PKG-INFO of the
sdist being built from. The wheel carries it in cordon/_version.py for cordon.__version__.
"""
import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PKG = "cordon"


def _version():
    cmake = os.path.join(ROOT, "..", "..", "CMakeLists.txt")
    if os.path.exists(cmake):
        with open(cmake, encoding="utf-8") as f:
            m = re.search(r"project\(cordon VERSION ([0-9][0-9A-Za-z.+-]*)", f.read())
        if not m:
            raise RuntimeError("%s: no project(cordon VERSION ...)" % cmake)
        return m.group(1)
    pkg_info = os.path.join(ROOT, "PKG-INFO")  # an sdist
    if os.path.exists(pkg_info):
        with open(pkg_info, encoding="utf-8") as f:
            for line in f:
                if line.startswith("Version: "):
                    return line[len("Version: "):].strip()
    raise RuntimeError("cannot tell cordon's version: no CMakeLists.txt at %s, no PKG-INFO" % cmake)


def _project():
    meta, section = {}, None
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^\[([^\]]+)\]\s*$", line)
            if m:
                section = m.group(1).strip()
                continue
            m = re.match(r'^([A-Za-z0-9_-]+)\s*=\s*"([^"]*)"\s*$', line)
            if section == "project" and m:
                meta[m.group(1)] = m.group(2)
    meta["version"] = _version()
    for key in ("name", "version"):
        if key not in meta:
            raise RuntimeError("pyproject.toml: [project] has no %s" % key)
    return meta


def _metadata():
    p = _project()
    lines = ["Metadata-Version: 2.1", "Name: " + p["name"], "Version: " + p["version"]]
    if "description" in p:
        lines.append("Summary: " + p["description"])
    if "requires-python" in p:
        lines.append("Requires-Python: " + p["requires-python"])
    lines += ["Classifier: Programming Language :: Python :: 3", "Classifier: Typing :: Typed"]
    text = "\n".join(lines) + "\n"
    readme = os.path.join(ROOT, "README.md")
    if os.path.exists(readme):
        with open(readme, encoding="utf-8") as f:
            text += "Description-Content-Type: text/markdown\n\n" + f.read()
    return p, text


def _package_files():
    src = os.path.join(ROOT, "src", PKG)
    out = []
    for name in sorted(os.listdir(src)):
        if name.endswith(".py") or name == "py.typed":
            out.append((PKG + "/" + name, os.path.join(src, name)))
    return out


def _dist_info(p):
    return "%s-%s.dist-info" % (p["name"].replace("-", "_"), p["version"])


def _record_hash(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _write_wheel(wheel_directory, entries):
    """entries: list of (archive name, bytes). Adds WHEEL, METADATA and RECORD."""
    p, metadata = _metadata()
    di = _dist_info(p)
    wheel_meta = "Wheel-Version: 1.0\nGenerator: cordon_build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    entries = entries + [(di + "/METADATA", metadata.encode()), (di + "/WHEEL", wheel_meta.encode()),
                         (di + "/top_level.txt", (PKG + "\n").encode())]
    record = "".join("%s,%s,%d\n" % (n, _record_hash(d), len(d)) for n, d in entries) + di + "/RECORD,,\n"
    name = "%s-%s-py3-none-any.whl" % (p["name"].replace("-", "_"), p["version"])
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in entries + [(di + "/RECORD", record.encode())]:
            info = zipfile.ZipInfo(n, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, d)
    return name


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    p, metadata = _metadata()
    di = os.path.join(metadata_directory, _dist_info(p))
    os.makedirs(di, exist_ok=True)
    with open(os.path.join(di, "METADATA"), "w", encoding="utf-8") as f:
        f.write(metadata)
    return _dist_info(p)


prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    entries = []
    for arc, path in _package_files():
        with open(path, "rb") as f:
            entries.append((arc, f.read()))
    entries.append((PKG + "/_version.py", ('version = "%s"\n' % _version()).encode()))
    return _write_wheel(wheel_directory, entries)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel holding one .pth file that puts src/ on sys.path (PEP 660)."""
    pth = (os.path.join(ROOT, "src") + "\n").encode()
    return _write_wheel(wheel_directory, [("__editable___cordon.pth", pth)])


def build_sdist(sdist_directory, config_settings=None):
    p, metadata = _metadata()
    base = "%s-%s" % (p["name"].replace("-", "_"), p["version"])
    name = base + ".tar.gz"
    files = ["pyproject.toml", "README.md", "_build/cordon_build.py"] + [
        os.path.relpath(path, ROOT) for _, path in _package_files()]
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as t:
        for rel in files:
            path = os.path.join(ROOT, rel)
            if os.path.exists(path):
                t.add(path, arcname=base + "/" + rel, recursive=False)
        info = tarfile.TarInfo(base + "/PKG-INFO")
        data = metadata.encode()
        info.size = len(data)
        info.mode = 0o644
        t.addfile(info, io.BytesIO(data))
    return name
