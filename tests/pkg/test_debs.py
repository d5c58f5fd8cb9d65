"""The built .debs as files: their names and versions, lintian's verdict, what
each one holds (and nothing else), the conffile, the maintainer scripts
debhelper wrote, and the paths baked into the installed files.

The packages are built once per session by the ``debs`` fixture (conftest.py).
"""
import re
import subprocess

import pytest

from conftest import PACKAGES, deb_version

MA = subprocess.run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"], capture_output=True,
                    text=True).stdout.strip() or "x86_64-linux-gnu"
LIB = f"usr/lib/{MA}"

# Every file (not folder) each package must hold, exactly. Docs are
# compressed by dh_compress; the copyright file is in each.
EXPECTED = {
    "dvppd": {
        "etc/dvppd/dvppd.conf",
        "lib/systemd/system/dvppd.service",
        "lib/systemd/system/dvppd.socket",
        "usr/bin/dvppctl",
        "usr/bin/dvppd",
        "usr/lib/sysusers.d/dvppd.conf",
        "usr/lib/tmpfiles.d/dvppd.conf",
        "usr/share/doc/dvppd/README.md.gz",
        "usr/share/doc/dvppd/changelog.gz",
        "usr/share/doc/dvppd/configuration.md.gz",
        "usr/share/doc/dvppd/copyright",
        "usr/share/doc/dvppd/http-api.md.gz",
        "usr/share/doc/dvppd/operations.md.gz",
        "usr/share/doc/dvppd/scale-out.md.gz",
        "usr/share/dvppd/PROTOCOL.md",
        "usr/share/dvppd/dvpp.proto",
        "usr/share/lintian/overrides/dvppd",
        "usr/share/man/man1/dvppctl.1.gz",
        "usr/share/man/man5/dvppd.conf.5.gz",
        "usr/share/man/man8/dvppd.8.gz",
    },
    "libdvppclient1": {
        f"{LIB}/libdvppclient.so.1",
        "usr/share/doc/libdvppclient1/changelog.gz",
        "usr/share/doc/libdvppclient1/copyright",
    },
    "libdvppclient-dev": {
        "usr/include/dvppclient.h",
        "usr/include/dvpp_ring.h",
        f"{LIB}/libdvppclient.a",
        f"{LIB}/libdvppclient.so",
        f"{LIB}/pkgconfig/dvppclient.pc",
        "usr/share/doc/libdvppclient-dev/changelog.gz",
        "usr/share/doc/libdvppclient-dev/copyright",
    },
    "libdvpp-dev": {
        f"{LIB}/libdvpp.a",
        f"{LIB}/pkgconfig/libdvpp.pc",
        "usr/share/doc/libdvpp-dev/changelog.gz",
        "usr/share/doc/libdvpp-dev/copyright",
    },
    "libdvpp-acl-dev": {
        "usr/lib/dvpp/acl/acllib",
        "usr/lib/dvpp/acl/set_env.sh",
        "usr/share/doc/libdvpp-acl-dev/acl.md.gz",
        "usr/share/doc/libdvpp-acl-dev/changelog.gz",
        "usr/share/doc/libdvpp-acl-dev/copyright",
        "usr/share/lintian/overrides/libdvpp-acl-dev",
    } | {f"usr/lib/dvpp/acl/runtime/lib64/{s}{n}" for s in ("", "stub/")
         for n in ("libascendcl.so", "libacl_dvpp.so", "libacl_cblas.so")},
    "python3-dvpp": {
        "usr/share/doc/python3-dvpp/README.md.gz",
        "usr/share/doc/python3-dvpp/changelog.gz",
        "usr/share/doc/python3-dvpp/copyright",
        "usr/share/doc/python3-dvpp/python.md.gz",
    },
    "dvppd-deploy": {
        "usr/share/dvppd/deploy/rolling-restart",
        "usr/share/dvppd/deploy/haproxy/haproxy.cfg",
        "usr/share/dvppd/deploy/nginx/dvppd.conf",
        "usr/share/dvppd/deploy/kubernetes/README.md",
        "usr/share/doc/dvppd-deploy/changelog.gz",
        "usr/share/doc/dvppd-deploy/copyright",
        "usr/share/lintian/overrides/dvppd-deploy",
    },
}
# Packages whose file lists also hold a whole source folder, matched by
# prefix: (package, prefix inside the package, source folder, suffix filter).
TREES = [
    ("libdvpp-dev", "usr/include/dvpp/", ["core", "codecs"], r"dvpp_[^/]*\.h$"),
    ("libdvpp-acl-dev", "usr/lib/dvpp/acl/runtime/include/acl/",
     ["clients/acl/runtime/include/acl"], r"\.h$"),
    ("python3-dvpp", "usr/lib/python3/dist-packages/dvpp/", ["clients/python/dvpp"],
     r"\.py$"),
    ("dvppd-deploy", "usr/share/dvppd/deploy/kubernetes/", ["deploy/kubernetes"], r".*"),
]


def contents(deb):
    """{path: (mode string, link target or None)} of the files and links in deb."""
    out = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True,
                         check=True).stdout
    files = {}
    for line in out.splitlines():
        parts = line.split(None, 5)
        mode, name = parts[0], parts[5]
        target = None
        if mode.startswith("l"):
            name, target = name.split(" -> ", 1)
        if mode.startswith("d"):
            continue
        files[name.removeprefix("./")] = (mode, target)
    return files


def field(deb, name):
    return subprocess.run(["dpkg-deb", "-f", str(deb), name], capture_output=True,
                          text=True, check=True).stdout.strip()


def member(deb, path):
    """The text of one file inside deb."""
    return subprocess.run(f"dpkg-deb --fsys-tarfile '{deb}' | tar -xOf - './{path}'",
                          shell=True, capture_output=True, text=True, check=True).stdout


def control(deb, name):
    r = subprocess.run(["dpkg-deb", "-I", str(deb), name], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def source_files(folders, pattern):
    """Names of the files in the repo's folders that match pattern: relative to
    the folder for one folder, flat (the file names) for several merged ones."""
    from conftest import REPO
    names = set()
    for folder in folders:
        base = REPO / folder
        for p in base.rglob("*"):
            if p.is_file() and "__pycache__" not in p.parts and re.search(pattern, p.name):
                names.add(p.name if len(folders) > 1 else str(p.relative_to(base)))
    return names


def test_every_package_is_built_at_the_changelog_version(debs, pkg_report):
    version = deb_version()
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), version
    host = subprocess.run(["dpkg", "--print-architecture"], capture_output=True,
                          text=True).stdout.strip()
    for name, deb in debs.items():
        assert field(deb, "Package") == name
        assert field(deb, "Version") == version, deb
        arch = field(deb, "Architecture")
        assert arch == ("all" if name in ("python3-dvpp", "dvppd-deploy") else host), \
            (name, arch)
    pkg_report("built: " + ", ".join(f"{d.name} ({d.stat().st_size // 1024} KiB)"
                                     for d in debs.values()))


def test_lintian_finds_no_error_or_warning(deb_dir, pkg_report):
    """lintian on the .changes (all binary packages), pedantic; what it still
    says at info level or below is overridden in debian/*.lintian-overrides
    with a comment saying why."""
    changes = sorted(deb_dir.glob("*.changes"))
    assert len(changes) == 1, changes
    r = subprocess.run(["lintian", "--pedantic", "--display-info", "--fail-on", "error,warning",
                        str(changes[0])], capture_output=True, text=True, timeout=600)
    tags = [l for l in r.stdout.splitlines() if re.match(r"^[EWIPXO]: ", l)]
    bad = [t for t in tags if t[0] in "EW"]
    assert r.returncode == 0 and not bad, "lintian:\n" + r.stdout + r.stderr
    # (per .deb: on a .changes lintian 2.116 lists only some of the overrides)
    overridden = subprocess.run(["lintian", "--pedantic", "--display-info", "--show-overrides",
                                 *sorted(str(p) for p in deb_dir.glob("*.deb")
                                         if "-dbgsym_" not in p.name)],
                                capture_output=True, text=True, timeout=600).stdout
    n_over = sum(1 for l in overridden.splitlines() if l.startswith("O: "))
    pkg_report(f"lintian {subprocess.run(['lintian', '--version'], capture_output=True, text=True).stdout.split()[-1]} --pedantic: "
               f"no error, no warning; {len(tags)} other tags; {n_over} overridden "
               "(each justified in debian/*.lintian-overrides)")


@pytest.mark.parametrize("name", PACKAGES)
def test_package_holds_exactly_its_files(debs, name):
    have = contents(debs[name])
    want = set(EXPECTED[name])
    for pkg, prefix, folders, pattern in TREES:
        if pkg == name:
            want |= {prefix + f for f in source_files(folders, pattern)}
    if name == "python3-dvpp":
        want.add("usr/lib/python3/dist-packages/dvpp/dvpp_pb2.py")  # generated by the build
    assert set(have) == want, (f"unexpected: {sorted(set(have) - want)}; "
                               f"missing: {sorted(want - set(have))}")
    for path, (mode, target) in have.items():
        assert not path.startswith("usr/local"), path
        if path.startswith(("usr/bin/", )) or path.endswith("rolling-restart"):
            assert mode == "-rwxr-xr-x", (path, mode)
        elif target is None and not path.endswith(".so") and ".so." not in path:
            assert mode == "-rw-r--r--", (path, mode)


def test_links_point_inside_the_packages(debs):
    links = {p: t for d in debs.values() for p, (m, t) in contents(d).items() if t}
    assert links == {f"{LIB}/libdvppclient.so": "libdvppclient.so.1",
                     "usr/lib/dvpp/acl/acllib": "runtime"}, links


def test_conffile_and_maintainer_scripts(debs):
    """The config is a conffile (dpkg keeps an edited one on upgrade, removes it on
    purge); the scripts are debhelper's only: sysusers before tmpfiles, the socket
    enabled and started, the service neither, the socket stopped on remove."""
    deb = debs["dvppd"]
    assert control(deb, "conffiles").split() == ["/etc/dvppd/dvppd.conf"]
    postinst = control(deb, "postinst")
    prerm = control(deb, "prerm")
    postrm = control(deb, "postrm")
    for script in (postinst, prerm, postrm):
        body = [l for l in script.splitlines()[2:] if l.strip()]
        inside = False
        for line in body:  # every line is inside a debhelper-marked section
            if line.startswith("# Automatically added by dh_"):
                inside = True
            elif line.startswith("# End automatically added section"):
                inside = False
            else:
                assert inside, f"a hand-written line: {line!r}"
    users = postinst.index("systemd-sysusers")
    assert users < postinst.index("systemd-tmpfiles")
    assert "deb-systemd-helper enable 'dvppd.socket'" in postinst
    assert "deb-systemd-invoke start 'dvppd.socket'" in postinst
    assert "deb-systemd-helper enable 'dvppd.service'" in postinst  # only if was enabled
    assert "deb-systemd-invoke start 'dvppd.service'" not in postinst
    assert "try-restart 'dvppd.service'" in postinst  # upgrades only ($2 set)
    assert "deb-systemd-invoke stop 'dvppd.socket'" in prerm
    assert "deb-systemd-helper purge 'dvppd.service'" in postrm
    assert "deb-systemd-helper purge 'dvppd.socket'" in postrm
    assert "systemd | systemd-standalone-sysusers | systemd-sysusers" in field(deb, "Depends")


def test_installed_files_name_debian_paths(debs):
    """Paths baked in at install time are Debian's, not /usr/local's."""
    unit = member(debs["dvppd"], "lib/systemd/system/dvppd.service")
    assert "ExecStart=/usr/bin/dvppd --config /etc/dvppd/dvppd.conf" in unit
    assert "@BINDIR@" not in unit
    pc = member(debs["libdvppclient-dev"], f"{LIB}/pkgconfig/dvppclient.pc")
    assert "prefix=/usr\n" in pc and "libdvppclient" in pc
    assert f"libdir=/usr/lib/{MA}\n" in pc and "includedir=/usr/include\n" in pc, pc
    pc = member(debs["libdvpp-dev"], f"{LIB}/pkgconfig/libdvpp.pc")
    assert f"libdir=/usr/lib/{MA}\n" in pc and "Version: " + deb_version() in pc, pc
    env = member(debs["libdvpp-acl-dev"], "usr/lib/dvpp/acl/set_env.sh")
    from conftest import REPO
    assert "/usr/lib/dvpp/acl" in env and "@ACL_DIR@" not in env and str(REPO) not in env
    symbols = control(debs["libdvppclient1"], "symbols")
    assert symbols.startswith("libdvppclient.so.1 libdvppclient1 #MINVER#"), symbols
    assert " dvppc_connect@Base" in symbols or " dvppc_open@Base" in symbols, symbols
    shlibs = control(debs["libdvppclient1"], "shlibs")
    assert shlibs.split()[:3] == ["libdvppclient", "1", "libdvppclient1"], shlibs


def test_binaries_are_hardened(debs, tmp_path):
    """dpkg-buildflags' hardening reached every ELF file: full RELRO, bind now,
    PIE executables, stack protector and fortified calls in the daemon."""
    subprocess.run(["dpkg-deb", "-x", str(debs["dvppd"]), str(tmp_path)], check=True)
    for exe in ("usr/bin/dvppd", "usr/bin/dvppctl"):
        dyn = subprocess.run(["readelf", "-d", "-h", "-l", "-s", "--wide",
                              str(tmp_path / exe)], capture_output=True, text=True,
                             check=True).stdout
        assert "GNU_RELRO" in dyn and "BIND_NOW" in dyn, exe
        assert re.search(r"Type:\s+DYN", dyn), exe  # PIE
        assert "__stack_chk_fail" in dyn, exe
    syms = subprocess.run(["readelf", "-s", "--wide", str(tmp_path / "usr/bin/dvppd")],
                          capture_output=True, text=True, check=True).stdout
    assert "_chk@" in syms, "no fortified libc call in dvppd (_FORTIFY_SOURCE lost?)"


def test_source_package_lints_clean(tmp_path, pkg_report):
    """The source package too (dpkg-source -b of the tree as git sees it):
    lintian finds nothing, at any level, in debian/ (copyright, control,
    rules, changelog); overrides would go in debian/source/lintian-overrides."""
    from conftest import REPO
    src = tmp_path / f"dvppd-{deb_version()}"
    src.mkdir()
    subprocess.run(f"git ls-files -z -co --exclude-standard | tar --null -T - "
                   f"--ignore-failed-read -cf - | tar -xf - -C '{src}'", shell=True,
                   cwd=REPO, check=True)
    r = subprocess.run(["dpkg-source", "-b", src.name], cwd=tmp_path, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    dsc = tmp_path / f"dvppd_{deb_version()}.dsc"
    r = subprocess.run(["lintian", "--pedantic", "--display-info", "--fail-on", "error,warning",
                        str(dsc)], capture_output=True, text=True, timeout=600)
    tags = [l for l in r.stdout.splitlines() if re.match(r"^[EWIPX]: ", l)]
    assert r.returncode == 0 and not tags, "lintian:\n" + r.stdout + r.stderr
    pkg_report(f"lintian --pedantic on the source package {dsc.name}: no tag at all")


def test_rules_clean_keeps_the_developers_build_and_cache(tmp_path):
    """dpkg-buildpackage in a checkout runs `debian/rules clean` first: it may
    remove only what the package build makes (debian/build, dh's folders),
    never the developer's build/ or fetched .cache/."""
    from conftest import REPO
    src = tmp_path / "src"
    src.mkdir()
    subprocess.run(f"git ls-files -z | tar --null -T - -cf - | tar -xf - -C '{src}'",
                   shell=True, cwd=REPO, check=True)
    for d in ("build/obj", ".cache/testdata", "debian/build/obj", "debian/dvppd/usr"):
        (src / d).mkdir(parents=True)
    r = subprocess.run(["debian/rules", "clean"], cwd=src, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (src / "build/obj").is_dir() and (src / ".cache/testdata").is_dir()
    assert not (src / "debian/build").exists() and not (src / "debian/dvppd").exists()
