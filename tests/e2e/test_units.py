"""The systemd integration files in systemd/, checked without a running
systemd: the units pass `systemd-analyze verify` and reach an exposure of at
most 2.0 in `systemd-analyze security --offline=yes`, carry the settings the
service relies on, the sysusers.d and tmpfiles.d entries create what the
socket unit expects, and the shipped /etc/dvppd/dvppd.conf loads and equals
the built-in defaults except for its two intended differences.

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/e2e/test_units.py
"""
import grp
import json
import os
import re
import shutil
import subprocess

import pytest

pytest.register_assert_rewrite("daemon_util")
from daemon_util import DVPPD, ROOT  # noqa: E402

SYSTEMD = os.path.join(ROOT, "systemd")
SYSTEMD_ANALYZE = shutil.which("systemd-analyze")
MAX_EXPOSURE = 2.0
# The shipped config's differences from the built-in defaults (design 8/9).
INTENDED = {("socket", "path"): "/run/dvppd/dvppd.sock",
            ("socket", "allow_groups"): ["dvpp"]}

needs_analyze = pytest.mark.skipif(SYSTEMD_ANALYZE is None,
                                   reason="systemd-analyze not installed (Debian: systemd)")


def parse_unit(path):
    """{section: [(key, value), ...]} of a unit file: every assignment in
    order (keys repeat), comments and blank lines dropped, no continuation
    lines (the units use none)."""
    out, section = {}, None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line[0] in "#;":
                continue
            assert not line.endswith("\\"), f"{path}: continuation line: {line}"
            if line.startswith("["):
                section = line.strip("[]")
                out.setdefault(section, [])
                continue
            key, eq, value = line.partition("=")
            assert eq and section, f"{path}: not an assignment: {line}"
            out[section].append((key.strip(), value.strip()))
    return out


def values(unit, section, key):
    return [v for k, v in unit.get(section, []) if k == key]


def one(unit, section, key):
    v = values(unit, section, key)
    assert len(v) == 1, f"[{section}] {key}= set {len(v)} times: {v}"
    return v[0]


def seconds(v):
    """A systemd time span made of s/min/ms parts ("30s", "1min 30s", "90") in seconds."""
    total = 0.0
    for num, unit in re.findall(r"(\d+(?:\.\d+)?)\s*(ms|min|s|)", v):
        total += float(num) * {"ms": 0.001, "min": 60, "s": 1, "": 1}[unit]
    return total


@pytest.fixture(scope="module")
def units(tmp_path_factory):
    """dvppd.service generated from dvppd.service.in with @BINDIR@ = this
    build's folder (as `make install` does with $(BINDIR)), next to a copy
    of dvppd.socket: (service path, socket path, bindir)."""
    d = tmp_path_factory.mktemp("units")
    bindir = os.path.dirname(os.path.abspath(DVPPD))
    with open(os.path.join(SYSTEMD, "dvppd.service.in")) as f:
        text = f.read()
    assert "@BINDIR@" in text
    service = d / "dvppd.service"
    service.write_text(text.replace("@BINDIR@", bindir))
    socket_unit = d / "dvppd.socket"
    shutil.copy(os.path.join(SYSTEMD, "dvppd.socket"), socket_unit)
    return str(service), str(socket_unit), bindir


def strip_comments(text):
    """The shipped config as dvppd reads it: lines whose first non-blank
    character is '#' blanked."""
    return "\n".join("" if ln.lstrip().startswith("#") else ln for ln in text.split("\n"))


def shipped_conf():
    with open(os.path.join(SYSTEMD, "dvppd.conf")) as f:
        return f.read()


def check_config(path):
    r = subprocess.run([DVPPD, "--check-config", "--config", str(path)],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, f"dvppd --check-config --config {path}: {r.stderr}"
    return json.loads(r.stdout)


# --------------------------------------------------------------------------
# The units


@needs_analyze
def test_units_verify(units):
    service, socket_unit, _ = units
    assert not re.search(r"@[A-Z_]+@", open(service).read()), "unsubstituted @VAR@"
    # --man=no: the Documentation= pages come with `make install`, not here.
    r = subprocess.run([SYSTEMD_ANALYZE, "verify", "--man=no", service, socket_unit],
                       capture_output=True, text=True, timeout=60)
    ours = [ln for ln in (r.stdout + r.stderr).splitlines() if "dvppd" in ln]
    assert r.returncode == 0 and not ours, f"systemd-analyze verify:\n{r.stdout}{r.stderr}"


@needs_analyze
def test_service_exposure(units):
    service = units[0]
    r = subprocess.run([SYSTEMD_ANALYZE, "security", "--offline=yes", "--threshold=20",
                        "--no-pager", service], capture_output=True, text=True, timeout=60)
    out = r.stdout + r.stderr
    assert r.returncode == 0, f"systemd-analyze security failed the threshold:\n{out}"
    m = re.search(r"Overall exposure level for dvppd\.service:\s*([0-9.]+)", out)
    assert m, f"no exposure level in:\n{out}"
    exposure = float(m.group(1))
    assert exposure <= MAX_EXPOSURE, f"exposure {exposure} > {MAX_EXPOSURE}:\n{out}"


def test_service_settings(units):
    service, _, bindir = units
    u = parse_unit(service)
    s = "Service"
    exact = {
        "Type": "notify", "NotifyAccess": "main", "Restart": "on-failure",
        "ProtectSystem": "strict", "PrivateTmp": "yes", "PrivateDevices": "yes",
        "NoNewPrivileges": "yes", "CapabilityBoundingSet": "",
        "SystemCallArchitectures": "native", "MemoryDenyWriteExecute": "yes",
        "RestrictNamespaces": "yes", "LockPersonality": "yes",
        "ExecReload": "/bin/kill -HUP $MAINPID",
    }
    for key, want in exact.items():
        assert one(u, s, key) == want, f"{key}="
    assert one(u, s, "ExecStart") == f"{bindir}/dvppd --config /etc/dvppd/dvppd.conf"
    assert os.access(one(u, s, "ExecStart").split()[0], os.X_OK)
    assert set(one(u, s, "RestrictAddressFamilies").split()) == {"AF_UNIX", "AF_INET", "AF_INET6"}
    filters = values(u, s, "SystemCallFilter")
    assert filters and filters[0].split() == ["@system-service"], filters
    # A user: the static one from sysusers.d (not root), not DynamicUser=
    # (dvppd.socket hands the socket file to dvppd:dvpp: stable names).
    assert one(u, s, "User") == "dvppd" and not values(u, s, "DynamicUser")
    assert re.fullmatch(r"0[0-7]{3}", one(u, s, "UMask"))
    assert int(one(u, s, "LimitNOFILE")) >= 4096
    assert re.fullmatch(r"\d+[KMGT]?", one(u, s, "MemoryMax"))
    watchdog = seconds(one(u, s, "WatchdogSec"))
    assert 0 < watchdog <= 300
    # The stop timeout must outlast the daemon's drain.
    service = json.loads(strip_comments(shipped_conf()))["service"]
    drain = service["drain_timeout_s"] + service["drain_delay_s"]
    assert seconds(one(u, s, "TimeoutStopSec")) > drain
    # The socket unit owns /run/dvppd/dvppd.sock: a RuntimeDirectory= would
    # delete it whenever the service stops.
    assert not values(u, s, "RuntimeDirectory")
    assert one(u, "Unit", "Requires") == "dvppd.socket"
    assert one(u, "Unit", "After") == "dvppd.socket"
    assert one(u, "Install", "WantedBy") == "multi-user.target"
    assert one(u, "Install", "Also") == "dvppd.socket"


def test_socket_settings(units):
    u = parse_unit(units[1])
    s = "Socket"
    cfg = json.loads(strip_comments(shipped_conf()))
    # The listeners are the shipped config's, so both agree.
    assert values(u, s, "ListenStream") == [cfg["http"]["listen"]] == ["127.0.0.1:8080"]
    assert values(u, s, "ListenSequentialPacket") == [cfg["socket"]["path"]]
    assert one(u, s, "SocketUser") == "dvppd"
    assert one(u, s, "SocketGroup") == "dvpp"
    assert one(u, s, "SocketMode") == "0660" == cfg["socket"]["mode"]
    assert not values(u, s, "Accept") or one(u, s, "Accept") == "no"
    assert one(u, "Install", "WantedBy") == "sockets.target"


@pytest.mark.skipif(not (shutil.which("systemd-sysusers") and shutil.which("systemd-tmpfiles")),
                    reason="systemd-sysusers/systemd-tmpfiles not installed")
def test_sysusers_and_tmpfiles(tmp_path):
    """Applied to an empty root: user+group dvppd, group dvpp, and
    /run/dvppd 0750 dvppd:dvpp (dvpp members reach the socket, others not)."""
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    r = subprocess.run(["systemd-sysusers", f"--root={root}",
                        os.path.join(SYSTEMD, "dvppd.sysusers")],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    passwd = {ln.split(":")[0]: ln.split(":") for ln in (root / "etc/passwd").read_text().splitlines()}
    groups = {ln.split(":")[0]: ln.split(":") for ln in (root / "etc/group").read_text().splitlines()}
    assert set(groups) >= {"dvppd", "dvpp"} and "dvppd" in passwd
    uid, gid = int(passwd["dvppd"][2]), int(passwd["dvppd"][3])
    assert 0 < uid < 1000 and gid == int(groups["dvppd"][2])
    assert passwd["dvppd"][6].endswith("nologin")
    r = subprocess.run(["systemd-tmpfiles", f"--root={root}", "--create",
                        os.path.join(SYSTEMD, "dvppd.tmpfiles")],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    st = os.stat(root / "run/dvppd")
    assert (oct(st.st_mode & 0o7777), st.st_uid, st.st_gid) == \
        (oct(0o750), uid, int(groups["dvpp"][2]))


# --------------------------------------------------------------------------
# The shipped /etc/dvppd/dvppd.conf


def leaves(d, prefix=()):
    """{(section, key): value} of a two-level config; a top-level object of
    free names ("presets", empty by default) is a leaf of its own, (key,)."""
    out = {}
    for k, v in d.items():
        if isinstance(v, dict) and not prefix and v:
            out.update(leaves(v, (k,)))
        else:
            out[prefix + (k,)] = v
    return out


@pytest.fixture(scope="module")
def shipped_loaded(tmp_path_factory):
    """The effective configuration of the shipped file, and of no file
    (an empty {}: without --config dvppd would read /etc/dvppd/dvppd.conf),
    with "dvpp" replaced by "root" when this host has no group dvpp:
    (shipped, defaults, group name used)."""
    d = tmp_path_factory.mktemp("conf")
    text, group = shipped_conf(), "dvpp"
    try:
        grp.getgrnam("dvpp")
    except KeyError:
        group = "root"
        text, n = re.subn(r'("allow_groups"\s*:\s*)\["dvpp"\]', r'\1["root"]', text)
        assert n == 1
    path = d / "dvppd.conf"
    path.write_text(text)
    empty = d / "empty.json"
    empty.write_text("{}\n")
    return check_config(path), check_config(empty), group


def test_shipped_config_is_the_defaults(shipped_loaded):
    shipped, defaults, group = shipped_loaded
    want = dict(INTENDED)
    want[("socket", "allow_groups")] = [group]
    got, base = leaves(shipped), leaves(defaults)
    assert set(got) == set(base)
    diff = {k: got[k] for k in got if got[k] != base[k]}
    assert diff == want, f"differences from the built-in defaults: {diff}"


def test_shipped_config_has_every_key_explained(shipped_loaded):
    """Every key of the built-in dump is written in the file itself (not
    only present in the effective result), the file is plain JSON once its
    '#' lines are gone, and every key has a comment right above it."""
    defaults = leaves(shipped_loaded[1])
    text = shipped_conf()
    written = leaves(json.loads(strip_comments(text)))
    assert set(written) == set(defaults), \
        f"missing: {set(defaults) - set(written)}, unknown: {set(written) - set(defaults)}"
    sections = {k[0] for k in defaults}
    lines, section, seen = text.split("\n"), None, set()
    for i, ln in enumerate(lines):
        m = re.match(r'^\s*"([a-z_]+)"\s*:\s*(.*?),?\s*$', ln)
        if not m or ln.lstrip().startswith("#"):
            continue
        if (m.group(1),) in defaults and ln.startswith('  "'):
            key = (m.group(1),)  # a top-level leaf ("presets": {})
        elif m.group(1) in sections and m.group(2) == "{":
            section = m.group(1)
            continue
        else:
            key = (section, m.group(1))
        assert key in defaults, f"line {i + 1}: {ln.strip()}"
        above = lines[i - 1].strip()
        assert above.startswith("#") and len(above) > 2, \
            f"line {i + 1}: {section}.{m.group(1)} has no comment right above it"
        seen.add(key)
    assert seen == set(defaults)
