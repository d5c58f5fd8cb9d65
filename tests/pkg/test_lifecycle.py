"""install -> use -> remove -> purge of every package in a throw-away Debian 12
root, piuparts-style: `dpkg --root` runs the real maintainer scripts (chrooted
into the root, as dpkg does), and after the purge the root must hold exactly
what it held before.

The root is the cached minbase root of rootfs.py with the packages'
dependencies, seen through an overlay (the cache is never changed). No
systemd runs in it (no /run/systemd/system), so the scripts take their
offline branches: sysusers and tmpfiles run, the socket is enabled by
symlink, nothing is started; test_systemd.py covers the booted case.

The tests of this module are phases of one root and run in file order.
"""
import hashlib
import json
import os
import shutil
import socket
import stat
import subprocess
import time
from pathlib import Path

import pytest

from conftest import PACKAGES, REPO
from rootfs import base_root, deb_dependencies, scratch_root
from test_debs import contents

W, H = 96, 64
# What may differ after install + purge, and why:
# - dpkg's and debconf's own records and logs (piuparts ignores them too);
# - the system user dvppd and group dvpp (sysusers.d), which Debian never
#   deletes on purge (Policy 9.2.2: files owned by a removed uid would be
#   reassigned to its next owner), in passwd/group/shadow/gshadow and the
#   backups the tools write beside them;
# - /run/dvppd (tmpfiles.d): /run is a tmpfs on a booted system, gone at
#   the next boot; nothing in the package's scripts may delete it by hand
#   (debhelper's snippets only).
ALLOWED_CHANGES = ("var/lib/dpkg/", "var/log/", "var/cache/debconf/", "var/cache/ldconfig/",
                   "etc/ld.so.cache", "etc/passwd", "etc/group", "etc/shadow", "etc/gshadow",
                   "etc/subuid", "etc/subgid", "run/dvppd")
SKIP_TREES = ("proc", "sys", "dev", "tmp")


def snapshot(root):
    """{relative path: (type and mode, uid, gid, content hash or link target)}."""
    root = Path(root)
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        if rel_dir == ".":
            dirnames[:] = [d for d in dirnames if d not in SKIP_TREES]
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            rel = os.path.normpath(os.path.join(rel_dir, name))
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                what = "->" + os.readlink(p)
            elif stat.S_ISREG(st.st_mode):
                with open(p, "rb") as f:
                    what = hashlib.sha256(f.read()).hexdigest()
            else:
                what = ""
            out[rel] = (stat.filemode(st.st_mode), st.st_uid, st.st_gid, what)
    return out


def allowed(path):
    """@path is one of ALLOWED_CHANGES, inside one, or a tool's backup of one
    (passwd-, group-, ...)."""
    return any(path in (a.rstrip("/"), a + "-") or path.startswith(a.rstrip("/") + "/")
               for a in ALLOWED_CHANGES)


def dpkg(root, *args, check=True):
    r = subprocess.run(["dpkg", f"--root={root}", *args], capture_output=True, text=True,
                       timeout=300)
    if check:
        assert r.returncode == 0, f"dpkg {' '.join(args)}:\n{r.stdout}{r.stderr}"
    return r


def status(root, pkg):
    r = subprocess.run(["dpkg-query", f"--root={root}", "-W", "-f=${db:Status-Abbrev}", pkg],
                       capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else "not known"


def chroot(root, *argv, check=True, timeout=120, env=None, groups=None):
    opts = [f"--groups={groups}"] if groups else []
    r = subprocess.run(["chroot", *opts, str(root), *argv], capture_output=True, text=True,
                       timeout=timeout, env=env)
    if check:
        assert r.returncode == 0, f"{argv}:\n{r.stdout}{r.stderr}"
    return r


class State:
    """What the phases hand on to each other."""
    before = None
    installed = None


@pytest.fixture(scope="module")
def root(debs, tmp_path_factory, pkg_report):
    t0 = time.monotonic()
    base = base_root(deb_dependencies(list(debs.values())))
    took = time.monotonic() - t0
    tmp = tmp_path_factory.mktemp("lifecycle")
    with scratch_root(base, tmp) as r:
        pkg_report(f"lifecycle root: {base.name} (ready in {took:.0f} s), through an overlay")
        yield Path(r)


def test_install(root, debs, pkg_report):
    State.before = snapshot(root)
    dpkg(root, "-i", *[str(debs[p]) for p in PACKAGES])
    for p in PACKAGES:
        assert status(root, p) == "ii", (p, status(root, p))
    # dpkg's record of each package is the .deb's file list.
    for p in PACKAGES:
        listed = set(dpkg(root, "-L", p).stdout.split())
        for f in contents(debs[p]):
            assert "/" + f in listed, (p, f)
    State.installed = snapshot(root)
    new = sorted(set(State.installed) - set(State.before))
    pkg_report(f"install: {len(PACKAGES)} packages with dpkg --root, {len(new)} new paths")


def test_scripts_made_user_groups_run_dir_and_socket_link(root):
    passwd = {l.split(":")[0]: l.split(":") for l in (root / "etc/passwd").read_text().splitlines()}
    groups = {l.split(":")[0]: l.split(":") for l in (root / "etc/group").read_text().splitlines()}
    assert "dvppd" in passwd and "dvppd" in groups and "dvpp" in groups
    uid, gid = int(passwd["dvppd"][2]), int(passwd["dvppd"][3])
    assert 0 < uid < 1000 and gid == int(groups["dvppd"][2])  # a system user, own group
    assert passwd["dvppd"][6] in ("/usr/sbin/nologin", "/sbin/nologin", "/bin/false")
    # /run/dvppd: systemd-tmpfiles ignores requests in a chroot ("Running in
    # chroot, ignoring request"), so the postinst's --create makes nothing
    # here; test_systemd.py checks it on the booted system.
    assert not (root / "run/dvppd").exists()
    assert (root / "usr/lib/tmpfiles.d/dvppd.conf").read_text() == \
        (REPO / "systemd/dvppd.tmpfiles").read_text()
    want = root / "etc/systemd/system/sockets.target.wants/dvppd.socket"
    assert os.readlink(want) == "/lib/systemd/system/dvppd.socket"
    assert not list((root / "etc/systemd/system").rglob("dvppd.service")), \
        "the service must not be enabled: the socket starts it"
    conf = (root / "etc/dvppd/dvppd.conf").read_text()
    assert conf == (REPO / "systemd/dvppd.conf").read_text()


def test_python_and_acl_libraries_load(root):
    r = chroot(root, "python3", "-c",
               "import dvpp, dvpp.wire; print(dvpp.__file__, dvpp.wire.VERSION)")
    path, version = r.stdout.split()
    assert path == "/usr/lib/python3/dist-packages/dvpp/__init__.py"
    from conftest import deb_version
    assert version == deb_version()
    assert list((root / "usr/lib/python3/dist-packages/dvpp/__pycache__").glob("*.pyc")), \
        "py3compile (dh_python3's postinst) compiled nothing"
    r = chroot(root, "python3", "-c", """
import ctypes
lib = "/usr/lib/dvpp/acl/runtime/lib64/"
rt = ctypes.CDLL(lib + "libascendcl.so"); dv = ctypes.CDLL(lib + "libacl_dvpp.so")
assert rt.aclInit(None) == 0
dv.acldvppCreateChannelDesc.restype = ctypes.c_void_p
assert dv.acldvppCreateChannelDesc()
print("ok")""")
    assert r.stdout.strip() == "ok"


@pytest.fixture
def chroot_daemon(root, tmp_path):
    """The packaged dvppd, run by hand in the chroot on a Unix socket in its /tmp
    (with /proc bound in: the daemon reopens its ring memfds through it)."""
    (root / "proc").mkdir(exist_ok=True)
    subprocess.run(["mount", "--bind", "/proc", str(root / "proc")], check=True)
    sock_dir = root / "tmp" / "dvppd-test"
    sock_dir.mkdir(parents=True, exist_ok=True)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(tmp_path / "dvppd.log", "w")
    # The shipped /etc/dvppd/dvppd.conf, with the listeners moved.
    proc = subprocess.Popen(["chroot", str(root), "/usr/bin/dvppd", "--socket",
                             "/tmp/dvppd-test/d.sock", "--http", f"127.0.0.1:{port}"],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 20
        while not (sock_dir / "d.sock").exists():
            assert proc.poll() is None, (tmp_path / "dvppd.log").read_text()
            assert time.monotonic() < deadline, "dvppd made no socket in 20 s"
            time.sleep(0.05)
        yield sock_dir
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        finally:
            log.close()
            subprocess.run(["umount", "-l", str(root / "proc")])
            shutil.rmtree(sock_dir, ignore_errors=True)


def test_dev_packages_build_a_client_that_talks_to_the_packaged_daemon(root, chroot_daemon,
                                                                          tmp_path):
    """tests/install/client.c compiled with only the installed header, .so and
    dvppclient.pc (pkg-config through the root as a sysroot), run in the root
    (libdvppclient.so.1 from libdvppclient1) against the packaged daemon; the
    packaged Python client gets the same tensor."""
    from PIL import Image
    import numpy as np
    from daemon_util import gradient
    Image.fromarray(gradient(160, 120, 7)).save(chroot_daemon / "in.jpg", quality=90)
    ma = subprocess.run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"], capture_output=True,
                        text=True).stdout.strip()
    env = dict(os.environ, PKG_CONFIG_SYSROOT_DIR=str(root),
               PKG_CONFIG_LIBDIR=f"{root}/usr/lib/{ma}/pkgconfig:{root}/usr/share/pkgconfig")
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "dvppclient"],
                           capture_output=True, text=True, env=env, check=True).stdout.split()
    assert f"-I{root}/usr/include" in flags and "-ldvppclient" in flags, flags
    exe = chroot_daemon / "client"
    r = subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror",
                        str(REPO / "tests/install/client.c"), "-o", str(exe), *flags],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    # As a member of dvpp: the shipped config admits that group only.
    r = chroot(root, "/tmp/dvppd-test/client", "/tmp/dvppd-test/d.sock",
               "/tmp/dvppd-test/in.jpg", str(W), str(H), groups="dvpp")
    words = r.stdout.split()
    assert words[:5] == ["ok", "protocol=1", "dtype=float32", "layout=NCHW",
                         f"shape=1,3,{H},{W}"], r.stdout
    c_means = [float(x) for x in words[6].removeprefix("mean=").split(",")]
    ldd = chroot(root, "ldd", "/tmp/dvppd-test/client").stdout
    assert f"/usr/lib/{ma}/libdvppclient.so.1" in ldd or "/lib/" in ldd, ldd
    prog = f"""
import json, dvpp
c = dvpp.Client("/tmp/dvppd-test/d.sock", timeout=30)
ring = c.open_ring(slots=2, slot_bytes=3 * {H} * {W} * 4)
spec = {{"ops": [{{"resize": {{"w": {W}, "h": {H}}}}}],
        "normalize": {{"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}}}}
with c.submit(spec, open("/tmp/dvppd-test/in.jpg", "rb").read(), ring=ring) as r:
    x = r.array()
    print(json.dumps([float(x[0, ch].mean(dtype="float64")) for ch in range(3)]))
"""
    py_means = json.loads(chroot(root, "python3", "-c", prog, groups="dvpp").stdout)
    assert py_means == pytest.approx(c_means, abs=1e-3)
    # and the values are the image's: ImageNet-normalised means of the picture
    small = np.asarray(Image.open(chroot_daemon / "in.jpg").convert("RGB").resize(
        (W, H), Image.BILINEAR), dtype=np.float64) / 255.0
    ref = [(small[..., ch].mean() - m) / s for ch, (m, s) in
           enumerate(zip([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]))]
    assert py_means == pytest.approx(ref, abs=0.05)


def test_remove_keeps_only_the_configuration(root, debs, pkg_report):
    """What remove keeps is configuration, as dpkg and deb-systemd-helper do:
    the conffile, and the socket's enablement (the sockets.target.wants link
    and deb-systemd-helper's record of it), so a reinstall comes back as it
    was; purge takes both."""
    dpkg(root, "-r", *PACKAGES)
    for p in PACKAGES:
        want = "rc" if p == "dvppd" else "un"
        got = status(root, p)
        assert got in (want, "not known") if want == "un" else got == want, (p, got)
    now = snapshot(root)
    left = sorted(p for p in set(now) - set(State.before) if not allowed(p))
    enablement = ["etc/systemd/system/sockets.target.wants",
                  "etc/systemd/system/sockets.target.wants/dvppd.socket"]
    assert [p for p in left if not p.startswith("var/lib/systemd/deb-systemd-helper-")] == \
        sorted(["etc/dvppd", "etc/dvppd/dvppd.conf"] + enablement), left
    assert not (root / "usr/lib/python3/dist-packages/dvpp").exists(), "py3clean left .pyc"
    pkg_report("remove: the conffile and the socket's enablement stay, nothing else")


def test_purge_leaves_nothing_behind(root, pkg_report):
    dpkg(root, "-P", *PACKAGES)
    for p in PACKAGES:
        assert status(root, p) in ("un", "not known"), (p, status(root, p))
    now = snapshot(root)
    added = sorted(p for p in set(now) - set(State.before) if not allowed(p))
    gone = sorted(p for p in set(State.before) - set(now) if not allowed(p))
    changed = sorted(p for p in set(now) & set(State.before)
                     if now[p] != State.before[p] and not allowed(p))
    assert (added, gone, changed) == ([], [], []), \
        f"left behind: {added}; removed: {gone}; changed: {changed}"
    kept = sorted(p for p in set(now) - set(State.before) if allowed(p)
                  and not p.startswith(("var/lib/dpkg", "var/log", "var/cache")))
    pkg_report("purge: the root is as before but for dpkg's records and "
               + (", ".join(kept) or "nothing else")
               + " (the system user dvppd and group dvpp stay, as Debian does)")
