"""`make install PREFIX=/usr DESTDIR=...` and `make uninstall`, end to end.

The staged tree must hold exactly the design's install layout; a C program
(tests/install/client.c) built with nothing but `pkg-config --cflags --libs
dvppclient` from that tree, and the Python client imported from it, must
both talk to the installed daemon; `make install` must not replace an
existing /etc/dvppd/dvppd.conf, and `make uninstall` must leave no file
behind (keeping only a config the operator changed).

The AscendCL tree (clients/acl, docs/acl.md) goes to PREFIX/lib/dvpp/acl
as it is in $(BUILD)/acl: headers, the three libraries and their stub
copies, and a set_env.sh that, sourced, points INSTALL_DIR and the loader
at that tree (test_acl_tree).

`make install` depends on `all`, so it runs with the very make variables of
this build, from $DVPP_MAKE_VARS (`make e2e` sets it: BUILD, SANITIZER, OPT,
CC, ...); without it they are read back from $(BUILD)/.flags.

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/e2e/test_install.py
"""
import filecmp
import glob
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile

import pytest

pytest.register_assert_rewrite("daemon_util")
import daemon_util  # noqa: E402
from daemon_util import (BUILD, ROOT, free_port, gradient, sock_dir,  # noqa: E402
                         start_daemon, stop_daemon, to_jpeg)

PREFIX = "/usr"
W, H = 96, 64
MEANS = {}          # client -> the channel means it got (the same job)


def make_vars():
    """NAME=VALUE words for make: $DVPP_MAKE_VARS, else this build's CC,
    OPT and SANITIZER as recorded in $(BUILD)/.flags ($(CC) $(STD) $(WARN)
    $(OPT) $(DEBUG) $(SAN_FLAGS) ...); BUILD from $DVPP_BUILD if missing."""
    env = os.environ.get("DVPP_MAKE_VARS")
    if env is not None:
        words = shlex.split(env)
    else:
        with open(os.path.join(ROOT, BUILD, ".flags")) as f:
            flags = f.read().strip()
        opt = re.search(r" -Wpointer-arith (.*?) ?-g ", flags)
        san = re.search(r" -fsanitize=([a-z,]+) -fno-sanitize-recover", flags)
        words = [f"CC={flags.split()[0]}", f"OPT={opt.group(1) if opt else '-O2'}",
                 f"SANITIZER={san.group(1) if san else ''}"]
    if not any(w.startswith("BUILD=") for w in words):
        words.append(f"BUILD={BUILD}")
    return words


def var(words, name, default=""):
    for w in words:
        if w.startswith(name + "="):
            return w.split("=", 1)[1]
    return default


def make(target, destdir, *extra, timeout=300):
    """`make TARGET PREFIX=/usr DESTDIR=destdir VARS...` in the repository,
    free of the MAKEFLAGS of a `make e2e` around this test (its jobserver
    fds are not ours); the CompletedProcess (text), asserted to succeed."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}
    cmd = ["make", "--no-print-directory", "-C", ROOT, target, f"PREFIX={PREFIX}",
           f"DESTDIR={destdir}", *make_vars(), *extra]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    assert r.returncode == 0, f"{shlex.join(cmd)}:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r


def tree(root):
    """Every file and symlink under @root, as paths relative to it
    (byte-code caches aside)."""
    out = set()
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x != "__pycache__"]
        for name in files + [x for x in dirs if os.path.islink(os.path.join(d, x))]:
            out.add(os.path.relpath(os.path.join(d, name), root))
    return out


def expected_layout():
    """The design's install layout for PREFIX=/usr, SYSCONFDIR=/etc."""
    u = PREFIX.lstrip("/")
    files = {
        f"{u}/bin/dvppd", f"{u}/bin/dvppctl",
        f"{u}/lib/libdvpp.a", f"{u}/lib/libdvppclient.a", f"{u}/lib/libdvppclient.so.1",
        f"{u}/lib/libdvppclient.so",
        f"{u}/lib/pkgconfig/libdvpp.pc", f"{u}/lib/pkgconfig/dvppclient.pc",
        f"{u}/include/dvppclient.h", f"{u}/include/dvpp_ring.h",
        f"{u}/share/dvppd/dvpp.proto", f"{u}/share/dvppd/PROTOCOL.md",
        f"{u}/share/man/man8/dvppd.8", f"{u}/share/man/man1/dvppctl.1",
        f"{u}/share/man/man5/dvppd.conf.5",
        f"{u}/lib/systemd/system/dvppd.service", f"{u}/lib/systemd/system/dvppd.socket",
        f"{u}/lib/sysusers.d/dvppd.conf", f"{u}/lib/tmpfiles.d/dvppd.conf",
        "etc/dvppd/dvppd.conf",
    }
    headers = glob.glob(os.path.join(ROOT, "core", "dvpp_*.h")) + \
        glob.glob(os.path.join(ROOT, "codecs", "dvpp_*.h"))
    assert headers
    files |= {f"{u}/include/dvpp/{os.path.basename(h)}" for h in headers}
    py = glob.glob(os.path.join(ROOT, "clients", "python", "dvpp", "*.py"))
    assert any(p.endswith("dvpp_pb2.py") for p in py), "make generates dvpp_pb2.py"
    for mod in ("daemon.py", "dask.py"):    # shared private daemon; dvpp.dask (Dask -> Zarr)
        assert any(p.endswith(os.sep + mod) for p in py), mod
    files |= {f"{u}/lib/python3/dist-packages/dvpp/{os.path.basename(p)}" for p in py}
    pyt = glob.glob(os.path.join(ROOT, "clients", "python", "dvpp", "torch", "*.py"))
    assert any(p.endswith("transforms.py") for p in pyt)
    files |= {f"{u}/lib/python3/dist-packages/dvpp/torch/{os.path.basename(p)}" for p in pyt}
    files |= {f"{u}/lib/dvpp/acl/{p}" for p in acl_tree()}
    return files


ACL_LIBS = ("libascendcl.so", "libacl_dvpp.so", "libacl_cblas.so")


def acl_tree():
    """The AscendCL tree's files, relative to its root (build/acl or
    PREFIX/lib/dvpp/acl): every header of clients/acl/runtime/include, the
    libraries in runtime/lib64 and runtime/lib64/stub, set_env.sh, and
    acllib (the older CANN layout: a link to runtime)."""
    src = os.path.join(ROOT, "clients", "acl")
    headers = glob.glob(os.path.join(src, "runtime", "include", "acl", "**", "*.h"),
                        recursive=True)
    assert os.path.join(src, "runtime", "include", "acl", "acl.h") in headers
    files = {os.path.relpath(h, src) for h in headers}
    files |= {f"runtime/lib64/{n}" for n in ACL_LIBS}
    files |= {f"runtime/lib64/stub/{n}" for n in ACL_LIBS}
    files.add("set_env.sh")
    files.add("acllib")
    return files


@pytest.fixture(scope="module")
def staged():
    """A DESTDIR after `make install PREFIX=/usr`: its path. Removed after
    the module (by then test_uninstall emptied it)."""
    d = tempfile.mkdtemp(prefix="dvpp-install-")
    try:
        make("install", d)
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def daemon(staged):
    """The installed dvppd (DESTDIR/usr/bin/dvppd) serving a Unix socket."""
    tmp = tempfile.mkdtemp(prefix="dvpp-inst-run-")
    sd = sock_dir("dvppi")
    sock = os.path.join(sd, "d.sock")
    port = free_port()
    saved = daemon_util.DVPPD
    daemon_util.DVPPD = os.path.join(staged, PREFIX.lstrip("/"), "bin", "dvppd")
    try:
        d = start_daemon(tmp, {"http": {"listen": f"127.0.0.1:{port}"},
                               "socket": {"path": sock}, "device": {"channels": 1}},
                         "installed", port, sock=sock, sock_dir=sd)
    finally:
        daemon_util.DVPPD = saved
    yield d
    stop_daemon(d)
    shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    p = tmp_path_factory.mktemp("img") / "in.jpg"
    p.write_bytes(to_jpeg(gradient(320, 240, 7)))
    return str(p)


def test_layout(staged):
    u = os.path.join(staged, PREFIX.lstrip("/"))
    assert tree(staged) == expected_layout()
    # Programs and libraries are this build's, with the right modes.
    for name in ("dvppd", "dvppctl"):
        p = os.path.join(u, "bin", name)
        assert filecmp.cmp(p, os.path.join(ROOT, BUILD, name), shallow=False)
        assert stat.S_IMODE(os.stat(p).st_mode) == 0o755
    assert os.readlink(os.path.join(u, "lib", "libdvppclient.so")) == "libdvppclient.so.1"
    assert filecmp.cmp(os.path.join(u, "lib", "libdvppclient.so.1"),
                       os.path.join(ROOT, BUILD, "libdvppclient.so.1"), shallow=False)
    # The systemd files and the config are the shipped ones; only
    # @BINDIR@ of the service is filled in.
    same = {"lib/systemd/system/dvppd.socket": "systemd/dvppd.socket",
            "lib/sysusers.d/dvppd.conf": "systemd/dvppd.sysusers",
            "lib/tmpfiles.d/dvppd.conf": "systemd/dvppd.tmpfiles",
            "include/dvppclient.h": "clients/include/dvppclient.h",
            "include/dvpp_ring.h": "proto/dvpp_ring.h"}
    for inst, src in same.items():
        assert filecmp.cmp(os.path.join(u, inst), os.path.join(ROOT, src), shallow=False), inst
    assert filecmp.cmp(os.path.join(staged, "etc/dvppd/dvppd.conf"),
                       os.path.join(ROOT, "systemd/dvppd.conf"), shallow=False)
    mansrc = var(make_vars(), "MANSRC", os.path.join(ROOT, "docs", "man"))
    for sect, page in (("man8", "dvppd.8"), ("man1", "dvppctl.1"), ("man5", "dvppd.conf.5")):
        assert filecmp.cmp(os.path.join(u, "share", "man", sect, page),
                           os.path.join(ROOT, mansrc, page), shallow=False), page
    with open(os.path.join(ROOT, "systemd", "dvppd.service.in")) as f:
        want = f.read().replace("@BINDIR@", f"{PREFIX}/bin")
    with open(os.path.join(u, "lib/systemd/system/dvppd.service")) as f:
        service = f.read()
    assert service == want
    assert f"\nExecStart={PREFIX}/bin/dvppd --config /etc/dvppd/dvppd.conf\n" in service
    for p in tree(staged):
        if not os.path.islink(os.path.join(staged, p)) and "/bin/" not in p and \
                not p.endswith(".so.1") and not p.endswith(".so"):
            assert stat.S_IMODE(os.stat(os.path.join(staged, p)).st_mode) == 0o644, p
    # pkg-config files point at PREFIX.
    for pc in ("dvppclient", "libdvpp"):
        with open(os.path.join(u, "lib", "pkgconfig", pc + ".pc")) as f:
            text = f.read()
        body = [ln for ln in text.splitlines() if not ln.startswith("#")]
        assert f"prefix={PREFIX}" in body and not any("@" in ln for ln in body), text


LOADED_PROG = r"""
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
/* Print the path of every shared object the loader mapped. */
static int show(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    if (info->dlpi_name[0] != '\0')
        printf("%s\n", info->dlpi_name);
    return 0;
}
int main(void)
{
    return dl_iterate_phdr(show, NULL);
}
"""


ACLLIB_PROG = r"""
#include <stdio.h>
#include "acl/acl.h"
#include "acl/ops/acl_dvpp.h"
int main(void)
{
    const char *soc = aclrtGetSocName();
    printf("%s\n", soc ? soc : "(null)");
    return soc ? 0 : 1;
}
"""


def test_acl_tree_offers_the_acllib_layout(staged, tmp_path):
    """The installed tree also offers CANN's older acllib/include,
    acllib/lib64 and acllib/lib64/stub (a relative link to runtime, so the
    DESTDIR copy resolves inside itself): a program compiled and linked
    through them builds and runs against the installed libraries."""
    acl = os.path.join(staged, PREFIX.lstrip("/"), "lib", "dvpp", "acl")
    assert os.readlink(os.path.join(acl, "acllib")) == "runtime"
    for sub in ["include/acl/acl.h", "include/acl/ops/acl_dvpp.h"] + \
            [f"lib64/{n}" for n in ACL_LIBS] + [f"lib64/stub/{n}" for n in ACL_LIBS]:
        got = os.path.join(acl, "acllib", sub)
        assert os.path.isfile(got), f"{got} does not resolve"
        assert os.path.realpath(got) == os.path.realpath(os.path.join(acl, "runtime", sub))
    words = make_vars()
    cc = var(words, "CC", "cc") or "cc"
    san = var(words, "SANITIZER")
    san_flags = [f"-fsanitize={san}", "-fno-omit-frame-pointer"] if san else []
    (tmp_path / "soc.c").write_text(ACLLIB_PROG)
    exe = str(tmp_path / "soc")
    cmd = [cc, "-std=c11", "-Wall", "-Wextra", "-Werror", *san_flags, "-DENABLE_DVPP_INTERFACE",
           f"-I{acl}/acllib/include", "-o", exe, str(tmp_path / "soc.c"),
           f"-L{acl}/acllib/lib64/stub", "-lascendcl", "-lacl_dvpp"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"{shlex.join(cmd)}:\n{r.stderr}"
    env = {k: v for k, v in os.environ.items()
           if k not in ("INSTALL_DIR", "LD_LIBRARY_PATH", "DVPP_ACL_PROFILE")}
    r = subprocess.run(["bash", "-c", f". '{acl}/set_env.sh' && exec '{exe}'"],
                       capture_output=True, text=True, timeout=30,
                       env=dict(env, LSAN_OPTIONS=f"suppressions={ROOT}/tests/tools/lsan.supp"))
    assert r.returncode == 0 and r.stdout == "Ascend310\n", r.stdout + r.stderr


def test_acl_tree(staged, tmp_path):
    """The installed AscendCL tree is the build's: headers as in the source,
    libraries as built (755), stubs identical to them; set_env.sh (644,
    sourced by bash) sets INSTALL_DIR to the folder it sits in and puts its
    runtime/lib64 first on LD_LIBRARY_PATH, where a program linked from
    runtime/lib64/stub without an rpath (as CANN programs are) finds the
    real libraries; a plain sh, which cannot tell a sourced file its path,
    gets the installed location PREFIX/lib/dvpp/acl."""
    acl = os.path.join(staged, PREFIX.lstrip("/"), "lib", "dvpp", "acl")
    built = os.path.join(ROOT, BUILD, "acl")
    for p in acl_tree():
        if p.startswith("runtime/include/"):
            assert filecmp.cmp(os.path.join(acl, p), os.path.join(ROOT, "clients", "acl", p),
                               shallow=False), p
    for n in ACL_LIBS:
        real = os.path.join(acl, "runtime", "lib64", n)
        assert filecmp.cmp(real, os.path.join(built, "runtime", "lib64", n), shallow=False)
        assert filecmp.cmp(real, os.path.join(acl, "runtime", "lib64", "stub", n),
                           shallow=False)
        assert stat.S_IMODE(os.stat(real).st_mode) == 0o755, n
    env_sh = os.path.join(acl, "set_env.sh")
    assert stat.S_IMODE(os.stat(env_sh).st_mode) == 0o644
    show = 'printf "%s\n%s\n" "$INSTALL_DIR" "$LD_LIBRARY_PATH"'
    env = {k: v for k, v in os.environ.items() if k not in ("INSTALL_DIR", "LD_LIBRARY_PATH")}
    for shell, want in (("bash", acl), ("sh", f"{PREFIX}/lib/dvpp/acl")):
        r = subprocess.run([shell, "-c", f". '{env_sh}' && {show}"], capture_output=True,
                           text=True, timeout=30, env=dict(env, LD_LIBRARY_PATH="/opt/x"))
        assert r.returncode == 0, r.stderr
        assert r.stdout.splitlines() == [want, f"{want}/runtime/lib64:/opt/x"], (shell, r.stdout)

    words = make_vars()
    cc = var(words, "CC", "cc") or "cc"
    san = var(words, "SANITIZER")
    san_flags = [f"-fsanitize={san}", "-fno-omit-frame-pointer"] if san else []
    (tmp_path / "loaded.c").write_text(LOADED_PROG)
    exe = str(tmp_path / "loaded")
    cmd = [cc, "-std=c11", "-Wall", "-Wextra", "-Werror", *san_flags, "-o", exe,
           str(tmp_path / "loaded.c"), "-Wl,--no-as-needed",
           f"-L{acl}/runtime/lib64/stub", "-lascendcl", "-lacl_dvpp", "-lacl_cblas"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"{shlex.join(cmd)}:\n{r.stderr}"
    r = subprocess.run(["bash", "-c", f". '{env_sh}' && exec '{exe}'"], capture_output=True,
                       text=True, timeout=30, env=env)
    assert r.returncode == 0, r.stderr
    loaded = {os.path.basename(p): p for p in r.stdout.splitlines()}
    for n in ACL_LIBS:
        assert loaded.get(n) == os.path.join(acl, "runtime", "lib64", n), r.stdout


def pkg_config(staged, *args):
    env = dict(os.environ, PKG_CONFIG_SYSROOT_DIR=staged,
               PKG_CONFIG_LIBDIR=os.path.join(staged, PREFIX.lstrip("/"), "lib", "pkgconfig"))
    env.pop("PKG_CONFIG_PATH", None)
    r = subprocess.run(["pkg-config", *args], capture_output=True, text=True, env=env,
                       timeout=30)
    assert r.returncode == 0, r.stderr
    return shlex.split(r.stdout)


def test_pkg_config(staged):
    u = os.path.join(staged, PREFIX.lstrip("/"))
    assert pkg_config(staged, "--cflags", "--libs", "dvppclient") == \
        [f"-I{u}/include", f"-L{u}/lib", "-ldvppclient"]
    assert pkg_config(staged, "--modversion", "libdvpp") == \
        pkg_config(staged, "--modversion", "dvppclient")


def client_means(out):
    m = re.fullmatch(r"ok protocol=1 dtype=float32 layout=NCHW shape=1,3,(\d+),(\d+) "
                     r"bytes=(\d+) mean=(\S+),(\S+),(\S+)\n", out)
    assert m, out
    assert (int(m.group(1)), int(m.group(2)), int(m.group(3))) == (H, W, 3 * H * W * 4)
    return [float(x) for x in m.group(4, 5, 6)]


def test_c_client(staged, daemon, image, tmp_path):
    """tests/install/client.c with only the installed header, library and
    pkg-config file (and the build's sanitizer, which its library needs)."""
    words = make_vars()
    cc = var(words, "CC", "cc") or "cc"
    san = var(words, "SANITIZER")
    san_flags = [f"-fsanitize={san}", "-fno-omit-frame-pointer"] if san else []
    exe = str(tmp_path / "client")
    cmd = [cc, "-std=c11", "-Wall", "-Wextra", "-Werror", *san_flags,
           os.path.join(ROOT, "tests", "install", "client.c"), "-o", exe,
           *pkg_config(staged, "--cflags", "--libs", "dvppclient")]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=str(tmp_path))
    assert r.returncode == 0, f"{shlex.join(cmd)}:\n{r.stderr}"
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(staged, PREFIX.lstrip("/"), "lib"))
    r = subprocess.run([exe, daemon.sock, image, str(W), str(H)], capture_output=True,
                       text=True, timeout=60, env=env)
    assert r.returncode == 0, f"client: {r.stdout}{r.stderr}\n{daemon.log()}"
    means = client_means(r.stdout)
    # Nothing of the build tree: the library the loader took is the staged one.
    r = subprocess.run(["ldd", exe], capture_output=True, text=True, env=env)
    assert os.path.join(staged, PREFIX.lstrip("/"), "lib", "libdvppclient.so.1") in r.stdout
    MEANS["c"] = means


PY_PROG = r"""
import json, sys
import dvpp
assert dvpp.__file__.startswith(sys.argv[1]), dvpp.__file__
c = dvpp.Client(sys.argv[2], timeout=30)
ring = c.open_ring(slots=2, slot_bytes=3 * %(h)d * %(w)d * 4)
spec = {"ops": [{"resize": {"w": %(w)d, "h": %(h)d}}],
        "normalize": {"mean": [0.485, 0.456, 0.406], "std": [0.229, 0.224, 0.225]}}
with c.submit(spec, open(sys.argv[3], "rb").read(), ring=ring) as r:
    x = r.array()
    out = {"shape": list(x.shape), "dtype": str(x.dtype),
           "means": [float(x[0, ch].mean(dtype="float64")) for ch in range(3)]}
import dvpp.torch                      # the installed dvpp/torch, same job as a tensor
assert dvpp.torch.__file__.startswith(sys.argv[1]), dvpp.torch.__file__
with c.submit(spec, open(sys.argv[3], "rb").read(), ring=ring) as r:
    t = dvpp.torch.as_tensor(r)
    out["torch_means"] = [float(t[0, ch].double().mean()) for ch in range(3)]
    del t
c.close()
import os
import dvpp.dask                       # the installed dvpp/dask.py: the job through Dask into Zarr
assert dvpp.dask.__file__.startswith(sys.argv[1]), dvpp.dask.__file__
os.environ["DVPPD_SOCKET"] = sys.argv[2]
run = dvpp.dask.preprocess([sys.argv[3]], spec, "x.zarr", chunk=1)   # dask's local scheduler
assert run.computed == 1 and run.failed == [], run
out["dask_means"] = [float(run.images[0, ch].mean(dtype="float64")) for ch in range(3)]
dvpp.dask.shutdown()
print(json.dumps(out))
""" % {"w": W, "h": H}


def test_python_client(staged, daemon, image, tmp_path):
    """The installed package, imported from DESTDIR's dist-packages (not the
    source tree: a fresh interpreter in an empty folder), talks to the
    installed daemon and gets what the C client got."""
    site = os.path.join(staged, PREFIX.lstrip("/"), "lib", "python3", "dist-packages")
    env = dict(os.environ, PYTHONPATH=site, PYTHONDONTWRITEBYTECODE="1")
    r = subprocess.run([sys.executable, "-c", PY_PROG, site, daemon.sock, image],
                       capture_output=True, text=True, timeout=60, env=env,
                       cwd=str(tmp_path))
    assert r.returncode == 0, f"{r.stdout}{r.stderr}\n{daemon.log()}"
    out = json.loads(r.stdout)
    assert out["shape"] == [1, 3, H, W] and out["dtype"] == "float32"
    assert out["torch_means"] == pytest.approx(out["means"], abs=1e-9)
    assert out["dask_means"] == pytest.approx(out["means"], abs=1e-9)
    if "c" in MEANS:
        assert out["means"] == pytest.approx(MEANS["c"], abs=1e-3)


def test_reinstall_keeps_config_then_uninstall(staged):
    """A second install keeps an edited config; uninstall removes all the
    rest and keeps that config; with the shipped config back, uninstall
    leaves no file at all."""
    conf = os.path.join(staged, "etc", "dvppd", "dvppd.conf")
    with open(conf, "a") as f:
        f.write("# edited by the operator\n")
    with open(conf) as f:
        edited = f.read()
    make("install", staged, "-o", "all")
    with open(conf) as f:
        assert f.read() == edited, "make install replaced an existing config"
    make("uninstall", staged)
    assert tree(staged) == {"etc/dvppd/dvppd.conf"}
    shutil.copy(os.path.join(ROOT, "systemd", "dvppd.conf"), conf)
    make("uninstall", staged)
    assert tree(staged) == set()
