"""A cached minimal Debian 12 root for the package tests, and throw-away views of it.

Why: installing the built .debs into a real Debian system (a chroot, or a container
booted with systemd as PID 1) is the only honest check of the packages, and building
that system from Debian's archive takes half a minute and ~200 MB; the tests share one
cached root and never change it.

Public API
----------
``deb_dependencies(debs) -> list[str]``
    The run-time dependencies of the given .deb files (Depends and Pre-Depends, read
    with ``dpkg-deb -f``): the first package of each alternative, versions and
    architecture qualifiers stripped, the packages' own names dropped. Installed into
    the root, they let ``dpkg -i`` of the .debs succeed offline.

``base_root(extra_packages=()) -> Path``
    The cached root: ``mmdebstrap --variant=minbase
    --include=systemd,dbus,systemd-sysv,<extra_packages> bookworm`` from Debian's
    archive (bookworm, bookworm-updates and bookworm-security: the suites the host
    builds against). Kept in ``<repo>/.cache/pkg/roots/<key>/`` where ``<key>`` hashes
    the package list, the suites and the mmdebstrap version, with ``<key>.json``
    beside it (what it holds, how long it took). It is built under a temporary name
    and renamed only when complete, under a lock, so a killed build never leaves a
    half root that looks cached and two test runs never build the same root at once.
    After a build the cache keeps the ``KEEP_ROOTS`` (3) most recently used roots and
    deletes the rest (the manifest's mtime records a root's last use).
    Treat it as read-only: write only through ``scratch_root``.

``scratch_root(base, tmp_path)`` (context manager) ``-> Path``
    A writable view of ``base`` for one test: an overlayfs mount with ``base`` as the
    lower layer and upper/work directories under ``tmp_path``; unmounted on exit
    (lazily if something still holds it), so the cache is never modified.

Skips: every reason this machine cannot provide a root (not root, no mmdebstrap, no
network to the Debian archive while the root is not cached, no overlayfs) calls
``pytest.skip`` with that reason. A build that fails for any other reason (for example a
dependency that bookworm does not have: a defect of the packages) fails with the tail of
mmdebstrap's log.
"""
import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "pkg" / "roots"

SUITE = "bookworm"
VARIANT = "minbase"
BASE_PACKAGES = ("systemd", "dbus", "systemd-sysv")
# The suites the host's build-dependencies come from (so the .debs' versioned
# dependencies are satisfiable); written as sources.list lines for mmdebstrap.
ARCHIVE_HOST = "deb.debian.org"
SOURCES = (
    f"deb http://{ARCHIVE_HOST}/debian {SUITE} main",
    f"deb http://{ARCHIVE_HOST}/debian {SUITE}-updates main",
    f"deb http://{ARCHIVE_HOST}/debian-security {SUITE}-security main",
)
BUILD_TIMEOUT_S = 900
# mmdebstrap/apt messages that mean the archive could not be reached.
NETWORK_ERRORS = ("Could not resolve", "Temporary failure resolving", "Failed to fetch",
                  "Could not connect", "Unable to connect", "Connection timed out",
                  "Network is unreachable", "No route to host")


# --------------------------------------------------------------------------
# Package lists


def _deb_field(deb, field):
    """One control field of a .deb (empty when absent)."""
    out = subprocess.run(["dpkg-deb", "-f", str(deb), field], capture_output=True,
                         text=True, timeout=60, check=True)
    return out.stdout.strip()


def _first_alternatives(relation):
    """Package names of a Depends-style field: the first of each alternative,
    without version constraint or architecture qualifier ("python3:any")."""
    names = []
    for clause in relation.split(","):
        first = clause.split("|")[0].strip()
        first = re.sub(r"\(.*?\)|\[.*?\]|<.*?>", "", first).strip()
        if first:
            names.append(first.split(":")[0])
    return names


def deb_dependencies(debs):
    """The packages a root needs so that @debs install offline with dpkg -i:
    sorted, unique, the .debs' own package names removed."""
    debs = list(debs)
    own = {_deb_field(d, "Package") for d in debs}
    need = set()
    for d in debs:
        for field in ("Pre-Depends", "Depends"):
            need.update(_first_alternatives(_deb_field(d, field)))
    return sorted(need - own)


# --------------------------------------------------------------------------
# Requirements of this machine


def _require_root_builder():
    """Skip unless this machine can run mmdebstrap as root."""
    if os.geteuid() != 0:
        pytest.skip("the package roots need root (mmdebstrap, overlayfs mounts)")
    if shutil.which("mmdebstrap") is None:
        pytest.skip("mmdebstrap is not installed (Debian package mmdebstrap)")


def mmdebstrap_version():
    """mmdebstrap's version line, part of the cache key (another version may
    build a different root from the same list)."""
    out = subprocess.run(["mmdebstrap", "--version"], capture_output=True, text=True,
                         timeout=60, check=True)
    return out.stdout.strip()


def _archive_reachable(timeout=10):
    """True when a TCP connection to the Debian archive succeeds."""
    try:
        socket.create_connection((ARCHIVE_HOST, 80), timeout=timeout).close()
        return True
    except OSError:
        return False


# --------------------------------------------------------------------------
# The cached root


def root_key(packages, version):
    """Cache key of a root: the package list, suites, variant and builder."""
    ident = {"format": 1, "suite": SUITE, "variant": VARIANT, "sources": list(SOURCES),
             "packages": sorted(set(packages)), "mmdebstrap": version}
    return hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:20]


@contextlib.contextmanager
def _cache_lock():
    """Serialise builds of the cache (another pytest run may build the same root)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _remove_partial_builds():
    """Leftovers of killed builds (only ever under a temporary name)."""
    for p in CACHE.glob(".tmp-*"):
        shutil.rmtree(p, ignore_errors=True)


def _mmdebstrap(packages, target, log_path):
    """Run mmdebstrap into @target (which must not exist yet); its output goes
    to @log_path. Returns the exit status."""
    cmd = ["mmdebstrap", f"--variant={VARIANT}", "--mode=root",
           "--include=" + ",".join(packages), SUITE, str(target), *SOURCES]
    with open(log_path, "w") as log:
        try:
            # stdin is not a terminal under pytest: give it nothing, so mmdebstrap
            # never takes it for a sources.list.
            return subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                  stderr=subprocess.STDOUT, timeout=BUILD_TIMEOUT_S).returncode
        except subprocess.TimeoutExpired:
            return "timeout"


def base_root(extra_packages=()):
    """The cached root with systemd, dbus, systemd-sysv and @extra_packages
    (built once; see the module docstring). Skips when it cannot be built here."""
    _require_root_builder()
    packages = sorted(set(BASE_PACKAGES) | set(extra_packages))
    version = mmdebstrap_version()
    key = root_key(packages, version)
    root = CACHE / key
    if root.is_dir():
        _mark_used(root)
        return root
    with _cache_lock():
        if root.is_dir():          # built by another run while we waited
            _mark_used(root)
            return root
        _remove_partial_builds()
        if not _archive_reachable():
            pytest.skip(f"the root {key} is not cached and the Debian archive "
                        f"({ARCHIVE_HOST}:80) cannot be reached")
        tmp = CACHE / f".tmp-{key}-{os.getpid()}"
        log_path = CACHE / f".tmp-{key}-{os.getpid()}.log"
        t0 = time.monotonic()
        rc = _mmdebstrap(packages, tmp, log_path)
        took = time.monotonic() - t0
        log = log_path.read_text(errors="replace")
        if rc != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            log_path.unlink(missing_ok=True)
            tail = "\n".join(log.splitlines()[-40:])
            if any(e in log for e in NETWORK_ERRORS):
                pytest.skip(f"mmdebstrap could not reach the Debian archive: "
                            f"{tail.splitlines()[-1] if tail else rc}")
            pytest.fail(f"mmdebstrap of {packages} failed ({rc}) after {took:.0f} s:\n{tail}")
        manifest = {"key": key, "suite": SUITE, "variant": VARIANT, "sources": list(SOURCES),
                    "packages": packages, "mmdebstrap": version,
                    "build_seconds": round(took, 1), "built": time.strftime("%F %T %z")}
        (CACHE / f"{key}.json").write_text(json.dumps(manifest, indent=1) + "\n")
        log_path.rename(CACHE / f"{key}.log")
        tmp.rename(root)           # complete: only now does it look cached
        _prune(keep=root)
    return root


# How many roots the cache keeps (about 570 MB each): a changed dependency
# list makes a new key, and the old roots would otherwise pile up.
KEEP_ROOTS = 3


def _mark_used(root):
    """The manifest's mtime is the root's last use (what _prune goes by)."""
    manifest = CACHE / f"{root.name}.json"
    if manifest.exists():
        os.utime(manifest)


def _prune(keep):
    """Delete the least recently used roots beyond KEEP_ROOTS (never @keep);
    called under the cache lock, right after a build."""
    roots = [p for p in CACHE.iterdir() if p.is_dir() and not p.name.startswith(".")]
    def last_use(p):
        m = CACHE / f"{p.name}.json"
        return m.stat().st_mtime if m.exists() else 0.0
    for old in sorted(roots, key=last_use, reverse=True)[KEEP_ROOTS:]:
        if old == keep:
            continue
        shutil.rmtree(old, ignore_errors=True)
        for suffix in (".json", ".log"):
            (CACHE / f"{old.name}{suffix}").unlink(missing_ok=True)


def root_manifest(root):
    """What base_root recorded about @root (packages, build time), or {}."""
    p = Path(root).parent / f"{Path(root).name}.json"
    return json.loads(p.read_text()) if p.exists() else {}


# --------------------------------------------------------------------------
# Throw-away views


def _umount(path, timeout=30):
    """Unmount @path; lazily when still busy after @timeout seconds, so a
    test's teardown never hangs and never leaves the mount behind."""
    deadline = time.monotonic() + timeout
    while True:
        r = subprocess.run(["umount", str(path)], capture_output=True, text=True, timeout=60)
        if r.returncode == 0 or not os.path.ismount(path):
            return
        if time.monotonic() > deadline:
            subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=60)
            return
        time.sleep(0.5)


@contextlib.contextmanager
def scratch_root(base, tmp_path):
    """A writable overlayfs view of @base under @tmp_path (see the module
    docstring); @base itself is never written."""
    _require_root_builder()
    tmp_path = Path(tmp_path)
    upper, work, merged = (tmp_path / n for n in ("upper", "work", "root"))
    for p in (upper, work, merged):
        p.mkdir(parents=True, exist_ok=True)
    for p in (Path(base), upper, work):
        if any(c in str(p) for c in ",:"):
            pytest.fail(f"overlayfs cannot take the path {p} (',' or ':' in it)")
    opts = f"lowerdir={base},upperdir={upper},workdir={work}"
    r = subprocess.run(["mount", "-t", "overlay", "overlay", "-o", opts, str(merged)],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        pytest.skip(f"no overlayfs mount here: {r.stderr.strip() or r.returncode}")
    try:
        yield merged
    finally:
        _umount(merged)
