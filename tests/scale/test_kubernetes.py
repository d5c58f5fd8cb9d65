"""deploy/kubernetes/: every kustomization rendered by the real `kubectl
kustomize` (Debian 12's kubernetes-client, kubectl 1.20 with kustomize
v2.0.3) and its invariants checked against the code, not against numbers
copied here:

- the ConfigMap's dvppd.conf passes `dvppd --check-config`, and its
  effective values (what the daemon would run with) are the reference;
- the probe paths answer 200 on a real dvppd started with that config (the
  port and socket moved to this machine), and after SIGTERM the readiness
  path turns 503 while the liveness path stays 200;
- container port == http.listen's port == the Service's targetPort;
- socket.path lies in an emptyDir mounted in every container that uses it,
  and the sidecar's peer is admitted by the allow lists;
- terminationGracePeriodSeconds > preStop sleep + drain_delay_s +
  drain_timeout_s; the securityContext mirrors systemd/dvppd.service;
- the Containerfile builds FROM debian:bookworm-slim with the Makefile's
  DEB_BUILD packages, `make install`s, and its runtime stage installs the
  Debian packages that hold the libraries the built binaries link;
- the Job is Indexed with completions == the N of its --shard, and its very
  arguments, run here with the built dvppctl, give shards that concatenate
  to the unsharded batch.

No cluster runs here: the manifests are only rendered and checked.

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/scale/test_kubernetes.py
"""
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import time

import numpy as np
import pytest

pytest.register_assert_rewrite("daemon_util")
import daemon_util as du  # noqa: E402

yaml = pytest.importorskip("yaml", reason="python3-yaml (make deps)")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, os.environ.get("DVPP_BUILD", "build"))
DVPPD = os.path.join(BUILD, "dvppd")
DVPPCTL = os.path.join(BUILD, "dvppctl")
K8S = os.path.join(ROOT, "deploy", "kubernetes")
CONTAINERFILE = os.path.join(K8S, "base", "Containerfile")
KUBECTL = shutil.which("kubectl") or "/usr/bin/kubectl"
KUSTOMIZATIONS = sorted(os.path.relpath(os.path.dirname(p), K8S) for p in
                        glob.glob(os.path.join(K8S, "**", "kustomization.yaml"),
                                  recursive=True))
# the kustomizations that run dvppd as a Deployment
SERVICES = ["base", "overlays/sidecar"]
JOBS = ["jobs/dataset"]

pytestmark = [
    pytest.mark.skipif(not os.path.exists(KUBECTL), reason="no kubectl (kubernetes-client, "
                       "make deps)"),
    pytest.mark.skipif(not os.path.exists(DVPPD), reason="dvppd not built"),
]


# --- rendering and reading the manifests --------------------------------------

_rendered = {}


def render(kdir):
    """The documents `kubectl kustomize` makes of deploy/kubernetes/@kdir;
    it must succeed without a word on stderr (errors or warnings)."""
    if kdir not in _rendered:
        r = subprocess.run([KUBECTL, "kustomize", os.path.join(K8S, kdir)],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and r.stderr == "", (kdir, r.stderr)
        _rendered[kdir] = [d for d in yaml.safe_load_all(r.stdout) if d]
    return _rendered[kdir]


def of_kind(docs, kind):
    return [d for d in docs if d.get("kind") == kind]


def one(docs, kind):
    found = of_kind(docs, kind)
    assert len(found) == 1, (kind, [d["metadata"]["name"] for d in found])
    return found[0]


def pod_spec(docs):
    w = of_kind(docs, "Deployment") + of_kind(docs, "Job")
    assert len(w) == 1, [d["kind"] for d in docs]
    return w[0]["spec"]["template"]["spec"]


def container(spec, name):
    found = [c for c in spec["containers"] if c["name"] == name]
    assert len(found) == 1, (name, [c["name"] for c in spec["containers"]])
    return found[0]


def dvppd_container(spec):
    """The container that runs the daemon: the image's entrypoint (no
    command of its own) with --config."""
    found = [c for c in spec["containers"]
             if "command" not in c and "--config" in c.get("args", [])]
    assert len(found) == 1, [c["name"] for c in spec["containers"]]
    return found[0]


def strip_comments(text):
    """dvppd's rule: a line whose first non-blank character is '#' is blank."""
    return "\n".join("" if ln.lstrip().startswith("#") else ln for ln in text.split("\n"))


def config_text(docs):
    """The dvppd.conf the daemon container reads: --config FILE, FILE's
    folder a mounted ConfigMap volume, FILE's name a key of that map."""
    spec = pod_spec(docs)
    c = dvppd_container(spec)
    path = c["args"][c["args"].index("--config") + 1]
    mount = [m for m in c["volumeMounts"] if m["mountPath"] == os.path.dirname(path)]
    assert len(mount) == 1, (path, c["volumeMounts"])
    vol = [v for v in spec["volumes"] if v["name"] == mount[0]["name"]][0]
    cms = [d for d in of_kind(docs, "ConfigMap")
           if d["metadata"]["name"] == vol["configMap"]["name"]]
    assert len(cms) == 1, (vol, [d["metadata"]["name"] for d in of_kind(docs, "ConfigMap")])
    return cms[0]["data"][os.path.basename(path)]


_effective = {}


def effective(kdir, tmp_path_factory):
    """`dvppd --check-config --config` of @kdir's ConfigMap file: it must
    pass; its JSON (every key, defaults filled in) is what a pod would run."""
    if kdir not in _effective:
        d = tmp_path_factory.mktemp("conf")
        f = d / "dvppd.conf"
        f.write_text(config_text(render(kdir)))
        r = subprocess.run([DVPPD, "--check-config", "--config", str(f)],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, (kdir, r.stdout, r.stderr)
        _effective[kdir] = json.loads(r.stdout)
    return _effective[kdir]


def listen_port(cfg):
    host, _, port = cfg["http"]["listen"].rpartition(":")
    return host, int(port)


def named_port(c, port):
    """A probe's or Service's port: a number, or the name of one of @c's."""
    if isinstance(port, int):
        return port
    found = [p["containerPort"] for p in c.get("ports", []) if p.get("name") == port]
    assert len(found) == 1, (port, c.get("ports"))
    return found[0]


def memory_bytes(q):
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40,
             "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
    m = re.fullmatch(r"(\d+)([A-Za-z]*)", str(q))
    assert m and (m.group(2) == "" or m.group(2) in units), q
    return int(m.group(1)) * units.get(m.group(2), 1)


def cpus(q):
    q = str(q)
    return int(q[:-1]) / 1000 if q.endswith("m") else float(q)


def prestop_sleep(c):
    cmd = c["lifecycle"]["preStop"]["exec"]["command"]
    assert cmd[0] in ("sleep", "/bin/sleep", "/usr/bin/sleep") and len(cmd) == 2, cmd
    return float(cmd[1])


# --- every kustomization -------------------------------------------------------

def test_the_tree_has_each_form():
    assert set(SERVICES + JOBS) <= set(KUSTOMIZATIONS), KUSTOMIZATIONS


@pytest.mark.parametrize("kdir", KUSTOMIZATIONS)
def test_renders_with_the_old_kustomize(kdir):
    docs = render(kdir)
    assert docs and all(d.get("apiVersion") and d.get("kind") for d in docs)
    names = [(d["kind"], d["metadata"]["name"]) for d in docs]
    assert len(names) == len(set(names)), names


@pytest.mark.parametrize("kdir", SERVICES)
def test_service_form_has_every_object(kdir):
    docs = render(kdir)
    for kind in ("Deployment", "ConfigMap", "Service", "HorizontalPodAutoscaler",
                 "PodDisruptionBudget"):
        one(docs, kind)
    assert one(docs, "PodDisruptionBudget")["apiVersion"] == "policy/v1"


# --- the config and the daemon --------------------------------------------------

@pytest.mark.parametrize("kdir", SERVICES)
def test_config_passes_check_config(kdir, tmp_path_factory):
    cfg = effective(kdir, tmp_path_factory)
    host, port = listen_port(cfg)
    # in a pod the kubelet's probes and the Service come from outside lo
    assert host == "0.0.0.0" and port > 0, cfg["http"]["listen"]
    assert cfg["service"]["drain_delay_s"] > 0


@pytest.mark.parametrize("kdir", SERVICES)
def test_probes_answer_on_the_real_daemon(kdir, tmp_path, tmp_path_factory):
    """dvppd with the ConfigMap's file, only the listener and the socket
    moved here: each probe's path answers 200; after SIGTERM the readiness
    path answers 503 while the liveness path still answers 200 (the kubelet
    must not restart a draining pod), and the daemon is gone within the
    grace period less the preStop sleep."""
    docs = render(kdir)
    spec = pod_spec(docs)
    c = dvppd_container(spec)
    cfg = json.loads(strip_comments(config_text(docs)))
    _, port = listen_port(effective(kdir, tmp_path_factory))
    probes = {k: c[k]["httpGet"] for k in ("startupProbe", "readinessProbe", "livenessProbe")}
    for p in probes.values():
        assert named_port(c, p["port"]) == port, p
    assert probes["readinessProbe"]["path"] != probes["livenessProbe"]["path"]
    local = du.free_port()
    sdir = du.sock_dir("dvpp-k8s-")
    cfg["http"]["listen"] = f"127.0.0.1:{local}"
    cfg["socket"]["path"] = os.path.join(sdir, "d.sock")
    cfg["socket"]["allow_uids"], cfg["socket"]["allow_gids"] = [], []
    d = du.start_daemon(str(tmp_path), cfg, "pod", local, sock=cfg["socket"]["path"],
                        sock_dir=sdir)
    try:
        for kind, p in probes.items():
            r = d.get(p["path"])
            assert r.status == 200, (kind, p["path"], r.status)
        t0 = time.monotonic()
        d.proc.send_signal(signal.SIGTERM)
        time.sleep(0.3)
        assert d.get(probes["readinessProbe"]["path"]).status == 503
        assert d.get(probes["livenessProbe"]["path"]).status == 200
        budget = spec["terminationGracePeriodSeconds"] - prestop_sleep(c)
        rc = d.proc.wait(timeout=budget)
        assert rc == 0 and time.monotonic() - t0 >= cfg["service"]["drain_delay_s"], d.log()
    finally:
        du.stop_daemon(d, check=False)


@pytest.mark.parametrize("kdir", SERVICES)
def test_ports_match_the_config(kdir, tmp_path_factory):
    docs = render(kdir)
    c = dvppd_container(pod_spec(docs))
    _, port = listen_port(effective(kdir, tmp_path_factory))
    assert named_port(c, "http") == port
    svc = one(docs, "Service")
    http = [p for p in svc["spec"]["ports"] if p.get("name") == "http"]
    assert len(http) == 1 and named_port(c, http[0]["targetPort"]) == port, svc["spec"]
    # the Service and the PDB select the Deployment's pods
    labels = one(docs, "Deployment")["spec"]["template"]["metadata"]["labels"]
    for sel in (svc["spec"]["selector"],
                one(docs, "PodDisruptionBudget")["spec"]["selector"]["matchLabels"]):
        assert sel and sel.items() <= labels.items(), (sel, labels)


@pytest.mark.parametrize("kdir", SERVICES)
def test_socket_lies_in_the_emptydir(kdir, tmp_path_factory):
    """socket.path's folder is an emptyDir mounted in dvppd's container and
    in every container that names the socket (DVPPD_SOCKET); no /dev/shm is
    shared (the ring memfds travel over the socket)."""
    spec = pod_spec(render(kdir))
    sock = effective(kdir, tmp_path_factory)["socket"]["path"]
    vols = {v["name"]: v for v in spec["volumes"]}
    users = [dvppd_container(spec)] + [
        c for c in spec["containers"]
        if any(e["name"] == "DVPPD_SOCKET" and e.get("value") == sock for e in c.get("env", []))]
    for c in users:
        m = [m for m in c["volumeMounts"] if m["mountPath"] == os.path.dirname(sock)]
        assert len(m) == 1 and "emptyDir" in vols[m[0]["name"]], (c["name"], sock)
        assert not m[0].get("readOnly"), c["name"]
    assert len({id(c) for c in users}) == len(users)
    for c in spec["containers"]:
        assert all(m["mountPath"] != "/dev/shm" for m in c.get("volumeMounts", [])), c["name"]
    if kdir == "overlays/sidecar":
        assert len(users) == 2, [c["name"] for c in spec["containers"]]


def test_sidecar_peer_is_admitted(tmp_path_factory):
    """The inference container may open the socket file (the pod's fsGroup
    owns the emptyDir, socket.mode gives the group rw) and dvppd admits it:
    its uid in allow_uids, or its primary or a supplementary gid in
    allow_gids (dvppd/sock/sock_conn.c, sock_peer_allowed)."""
    spec = pod_spec(render("overlays/sidecar"))
    cfg = effective("overlays/sidecar", tmp_path_factory)["socket"]
    d = dvppd_container(spec)
    others = [c for c in spec["containers"] if c is not d]
    assert others
    pod = spec.get("securityContext", {})
    for c in others:
        sc = {**pod, **c.get("securityContext", {})}
        uid, gid = sc["runAsUser"], sc.get("runAsGroup")
        gids = {gid, pod.get("fsGroup"), *pod.get("supplementalGroups", [])} - {None}
        allowed = uid in cfg["allow_uids"] or bool(gids & set(cfg["allow_gids"]))
        assert allowed, (c["name"], uid, gids, cfg)
        dvppd_uid = {**pod, **d.get("securityContext", {})}["runAsUser"]
        if uid != dvppd_uid:
            # not the socket's owner: it needs the group bits, via fsGroup
            assert int(str(cfg["mode"]), 8) & 0o060 == 0o060 and pod.get("fsGroup"), cfg


@pytest.mark.parametrize("kdir", SERVICES)
def test_grace_period_outlasts_the_drain(kdir, tmp_path_factory):
    spec = pod_spec(render(kdir))
    svc = effective(kdir, tmp_path_factory)["service"]
    c = dvppd_container(spec)
    need = prestop_sleep(c) + svc["drain_delay_s"] + svc["drain_timeout_s"]
    assert spec["terminationGracePeriodSeconds"] > need, (spec["terminationGracePeriodSeconds"],
                                                         need)


@pytest.mark.parametrize("kdir", SERVICES)
def test_resources_fit_the_config(kdir, tmp_path_factory):
    """Requests and limits set; device.channels is the CPU limit (dvppd would
    count the node's CPUs); the memory limit is above the daemon's memory
    budgets (device.max_bytes_in_flight + http.max_body_memory)."""
    c = dvppd_container(pod_spec(render(kdir)))
    cfg = effective(kdir, tmp_path_factory)
    res = c["resources"]
    for k in ("requests", "limits"):
        assert {"cpu", "memory"} <= set(res[k]), res
    assert cfg["device"]["channels"] == cpus(res["limits"]["cpu"]), (cfg["device"], res)
    budget = cfg["device"]["max_bytes_in_flight"] + cfg["http"]["max_body_memory"]
    assert memory_bytes(res["limits"]["memory"]) > budget, (res, budget)


def test_hpa_scales_the_deployment():
    for kdir in SERVICES:
        docs = render(kdir)
        hpa = one(docs, "HorizontalPodAutoscaler")["spec"]
        dep = one(docs, "Deployment")
        ref = hpa["scaleTargetRef"]
        assert (ref["kind"], ref["name"]) == ("Deployment", dep["metadata"]["name"]), kdir
        pdb = one(docs, "PodDisruptionBudget")["spec"]
        # evictions always leave a pod serving
        assert pdb.get("maxUnavailable", hpa["minReplicas"]) < hpa["minReplicas"], kdir
        assert dep["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0


# --- the sandbox --------------------------------------------------------------------

def unit_lines():
    with open(os.path.join(ROOT, "systemd", "dvppd.service.in")) as f:
        return {ln.strip() for ln in f if ln.strip() and not ln.startswith("#")}


@pytest.mark.parametrize("kdir", SERVICES + JOBS)
def test_sandbox_mirrors_the_systemd_unit(kdir):
    """Each systemd/dvppd.service setting that has a Kubernetes twin is set
    in the daemon's (or the Job's dvppctl's) container."""
    unit = unit_lines()
    spec = pod_spec(render(kdir))
    c = dvppd_container(spec) if kdir in SERVICES else spec["containers"][0]
    pod = spec.get("securityContext", {})
    sc = {**pod, **c["securityContext"]}
    assert "User=dvppd" in unit and sc["runAsNonRoot"] is True and sc["runAsUser"] != 0
    assert "NoNewPrivileges=yes" in unit and sc["allowPrivilegeEscalation"] is False
    assert not sc.get("privileged")
    assert "CapabilityBoundingSet=" in unit and sc["capabilities"]["drop"] == ["ALL"]
    assert not sc["capabilities"].get("add")
    assert "ProtectSystem=strict" in unit and sc["readOnlyRootFilesystem"] is True
    assert any(ln.startswith("SystemCallFilter=") for ln in unit)
    assert sc["seccompProfile"]["type"] == "RuntimeDefault"
    assert spec.get("hostNetwork") is not True and spec.get("hostIPC") is not True
    assert spec.get("automountServiceAccountToken") is False
    # writable only where it writes: the socket folder (an emptyDir), and
    # for the Job its output volume
    vols = {v["name"]: v for v in spec["volumes"]}
    writable = [m for m in c["volumeMounts"] if not m.get("readOnly")]
    if kdir in SERVICES:
        assert [m["name"] for m in writable] and all("emptyDir" in vols[m["name"]]
                                                   for m in writable), writable
    else:
        out = c["args"][c["args"].index("-o") + 1]
        assert [m["mountPath"] for m in writable] == [os.path.dirname(out)], writable


def test_containerfile_user_is_the_pods():
    user = containerfile_instructions("USER")[-1]
    uid, _, gid = user.partition(":")
    for kdir in SERVICES + JOBS:
        spec = pod_spec(render(kdir))
        c = dvppd_container(spec) if kdir in SERVICES else spec["containers"][0]
        sc = {**spec.get("securityContext", {}), **c.get("securityContext", {})}
        assert (str(sc["runAsUser"]), str(sc.get("runAsGroup"))) == (uid, gid), kdir


# --- the Containerfile -------------------------------------------------------------

def containerfile_lines():
    """Instructions with continuation lines joined, comments dropped:
    [(INSTRUCTION, rest, stage index)]."""
    with open(CONTAINERFILE) as f:
        text = f.read()
    text = "\n".join(ln for ln in text.split("\n") if not ln.lstrip().startswith("#"))
    text = text.replace("\\\n", " ")
    out, stage = [], -1
    for ln in text.split("\n"):
        if not ln.strip():
            continue
        ins, _, rest = ln.strip().partition(" ")
        if ins.upper() == "FROM":
            stage += 1
        out.append((ins.upper(), rest.strip(), stage))
    return out


def containerfile_instructions(name):
    return [rest for ins, rest, _ in containerfile_lines() if ins == name]


def makefile_list(var):
    with open(os.path.join(ROOT, "Makefile")) as f:
        text = f.read().replace("\\\n", " ")
    m = re.search(rf"^{var}\s*:?=(.*)$", text, re.M)
    assert m, var
    return m.group(1).split()


def apt_installs(stage):
    """The packages of every `apt-get install` in @stage's RUNs; every
    command of those RUNs must be one of the few an image build needs."""
    pkgs = []
    for ins, rest, st in containerfile_lines():
        if ins != "RUN" or st != stage:
            continue
        for cmd in re.split(r"&&|;", rest):
            words = [w for w in cmd.split() if not re.fullmatch(r"[A-Z_]+=\S*", w)]
            assert words and words[0] in ("apt-get", "rm", "make", "ldconfig", "groupadd",
                                          "useradd"), cmd
            if words[:2] == ["apt-get", "install"]:
                pkgs += [w for w in words[2:] if not w.startswith("-")]
    return pkgs


def test_containerfile_is_debian_only():
    lines = containerfile_lines()
    froms = [rest for ins, rest, _ in lines if ins == "FROM"]
    assert len(froms) == 2, froms
    assert all(f.split()[0] == "debian:bookworm-slim" for f in froms), froms
    assert not [r for ins, r, _ in lines if ins == "ADD"]
    text = " ".join(r for _, r, _ in lines)
    for banned in ("pip", "curl", "wget", "sources.list", "dpkg -i", ".deb", "http://",
                   "https://", "add-apt-repository"):
        assert banned not in text, banned
    build, runtime = apt_installs(0), apt_installs(1)
    assert build and runtime
    # the build stage installs exactly the Makefile's build packages
    assert sorted(build) == sorted(makefile_list("DEB_BUILD"))
    # every package is a Debian 12 one: known to this Debian 12 machine
    # (make deps installed them from its archive)
    for p in build + runtime:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", p], capture_output=True,
                           text=True)
        assert "ok installed" in r.stdout, p


def base_packages():
    """What every Debian image holds: the Essential packages and what they
    depend on directly (libc6 comes that way), as this Debian 12 machine's
    dpkg records them."""
    r = subprocess.run(["dpkg-query", "-W", "-f=${Package}|${Essential}|${Pre-Depends}, "
                        "${Depends}\n"], capture_output=True, text=True, check=True)
    base = set()
    for ln in r.stdout.splitlines():
        name, essential, deps = ln.split("|", 2)
        if essential == "yes":
            base.add(name)
            base |= {d.split()[0].split(":")[0] for d in re.split(r"[,|]", deps) if d.strip()}
    return base


def linked_packages(binary):
    """The Debian packages that hold the libraries @binary links (its
    DT_NEEDED entries, resolved by ldd, owners by dpkg -S)."""
    needed = subprocess.run(["objdump", "-p", binary], capture_output=True, text=True,
                            check=True).stdout
    sonames = re.findall(r"NEEDED\s+(\S+)", needed)
    paths = dict(re.findall(r"^\s*(\S+) => (\S+)", subprocess.run(
        ["ldd", binary], capture_output=True, text=True, check=True).stdout, re.M))
    pkgs = set()
    for so in sonames:
        path = paths[so]
        cands = [path, os.path.realpath(path)]
        cands += [p[4:] if p.startswith("/usr/") else "/usr" + p for p in list(cands)]
        owner = None
        for p in cands:
            r = subprocess.run(["dpkg", "-S", p], capture_output=True, text=True)
            if r.returncode == 0:
                owner = r.stdout.split(":")[0]
                break
        assert owner, (so, cands)
        pkgs.add(owner)
    return pkgs


# FFmpeg's libraries, which dvppd loads with dlopen on the first video
# request (codecs/dvpp_avlib.c): no DT_NEEDED names them, the runtime needs
# them all the same (debian/control names them in dvppd's Depends too).
DLOPENED = {"libavcodec59", "libavformat59", "libavutil57", "libswscale6"}


def test_runtime_stage_has_the_linked_libraries():
    """The runtime stage installs every package a library of dvppd or
    dvppctl comes from (linked, or loaded with dlopen), except those the
    base image has, and nothing else."""
    runtime, base = set(apt_installs(1)), base_packages()
    linked = linked_packages(DVPPD) | linked_packages(DVPPCTL)
    assert not linked & DLOPENED, sorted(linked & DLOPENED)  # loaded lazily, not linked
    linked |= DLOPENED
    assert "libc6" in base and "libc6" in linked
    need = linked - base
    assert need and need <= runtime, sorted(need - runtime)
    assert runtime <= linked, sorted(runtime - linked)


def test_containerfile_installs_with_make_install():
    """The build stage runs the Makefile's install with a PREFIX and a
    DESTDIR; `make -n` of that very command says where dvppd, dvppctl and
    the config land, and the runtime stage copies those folders and starts
    the installed dvppd (dvppctl for the Job)."""
    runs = " && ".join(r for ins, r, st in containerfile_lines() if ins == "RUN" and st == 0)
    inst = [c.split() for c in runs.split("&&") if c.split()[:1] == ["make"] and
            "install" in c.split()]
    assert len(inst) == 1, runs
    vars_ = dict(w.split("=", 1) for w in inst[0] if "=" in w)
    prefix, destdir = vars_["PREFIX"], vars_["DESTDIR"]
    r = subprocess.run(["make", "-n", f"BUILD={os.path.relpath(BUILD, ROOT)}",
                        f"PREFIX={prefix}", f"DESTDIR={destdir}", "install"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    m = re.search(r"^install -m 0755 \S*/dvppd \S*/dvppctl (\S+)/$", r.stdout, re.M)
    assert m, r.stdout[:2000]
    bindir = m.group(1)
    conf = re.search(r"install -m 0644 systemd/dvppd.conf (\S+)", r.stdout).group(1)
    copies = [r_.split() for ins, r_, st in containerfile_lines()
              if ins == "COPY" and st == 1]
    copied = {src: dst for flag, src, dst in copies if flag == "--from=build"}
    assert any(bindir.startswith(src) and bindir.replace(src, dst, 1) ==
               bindir[len(destdir):] for src, dst in copied.items()), (bindir, copied)
    assert any(conf.startswith(src) for src in copied), (conf, copied)
    entry = json.loads(containerfile_instructions("ENTRYPOINT")[-1])
    assert entry == [os.path.join(bindir[len(destdir):], "dvppd")], entry
    job = pod_spec(render(JOBS[0]))["containers"][0]
    assert job["command"] == [os.path.join(bindir[len(destdir):], "dvppctl")]
    # the ConfigMap is mounted where the daemon is told to read it
    cmd = json.loads(containerfile_instructions("CMD")[-1])
    assert cmd == dvppd_container(pod_spec(render("base")))["args"]


# --- the dataset Job ------------------------------------------------------------------

def job_shard(args):
    s = args[args.index("--shard") + 1]
    m = re.fullmatch(r"\$\(JOB_COMPLETION_INDEX\)/(\d+)", s)
    assert m, s
    return int(m.group(1))


def test_job_is_indexed_over_its_shards():
    docs = render(JOBS[0])
    job = one(docs, "Job")["spec"]
    c = job["template"]["spec"]["containers"][0]
    n = job_shard(c["args"])
    assert job["completionMode"] == "Indexed" and job["completions"] == n
    assert 1 <= job["parallelism"] <= n
    assert c["args"][0] == "batch"
    out = c["args"][c["args"].index("-o") + 1]
    assert "$(JOB_COMPLETION_INDEX)" in out     # each index its own file
    # $(VAR) expands only from the container's env
    env = {e["name"]: e for e in c["env"]}
    assert env["JOB_COMPLETION_INDEX"]["valueFrom"]["fieldRef"]["fieldPath"] == \
        "metadata.annotations['batch.kubernetes.io/job-completion-index']"
    ch = c["args"][c["args"].index("--channels") + 1]
    assert float(ch) == cpus(c["resources"]["limits"]["cpu"])
    # the dataset folder is the read-only volume
    data = c["args"][1]
    mounts = [m for m in c["volumeMounts"] if data.startswith(m["mountPath"] + "/")]
    assert len(mounts) == 1 and mounts[0]["readOnly"] is True
    assert one(docs, "Job")["spec"]["template"]["spec"]["restartPolicy"] in ("Never",
                                                                            "OnFailure")


def test_job_arguments_run_here(tmp_path):
    """The Job's arguments, with the volumes' paths moved here and
    $(JOB_COMPLETION_INDEX) expanded as the kubelet would for each index,
    run by the built dvppctl over a generated dataset: the N shard files
    concatenate to the unsharded batch of the same arguments."""
    from PIL import Image
    c = pod_spec(render(JOBS[0]))["containers"][0]
    n = job_shard(c["args"])
    data_mount = [m for m in c["volumeMounts"] if m.get("readOnly")][0]["mountPath"]
    out_mount = [m for m in c["volumeMounts"] if not m.get("readOnly")][0]["mountPath"]
    data, out = tmp_path / "data", tmp_path / "out"
    images = tmp_path / "data" / os.path.relpath(c["args"][1], data_mount)
    images.mkdir(parents=True)
    out.mkdir()
    rng = np.random.default_rng(4)
    for i in range(2 * n + 1):
        px = rng.integers(0, 256, (40 + i, 50, 3), dtype=np.uint8)
        Image.fromarray(px).save(images / f"im{i:03d}.{'png' if i % 2 else 'jpg'}")

    def run(args):
        args = [a.replace(data_mount, str(data), 1).replace(out_mount, str(out), 1)
                for a in args]
        env = {k: v for k, v in os.environ.items() if k != "DVPPD_SOCKET"}
        r = subprocess.run([DVPPCTL, *args], capture_output=True, text=True, env=env,
                           timeout=300)
        assert r.returncode == 0, (args, r.stderr)

    files = []
    for i in range(n):
        run([a.replace("$(JOB_COMPLETION_INDEX)", str(i)) for a in c["args"]])
        files.append(out / f"{os.path.basename(c['args'][c['args'].index('-o') + 1])}"
                     .replace("$(JOB_COMPLETION_INDEX)", str(i)))
    whole = list(c["args"])
    k = whole.index("--shard")
    del whole[k:k + 2]
    whole[whole.index("-o") + 1] = str(tmp_path / "whole.npy")
    run(whole)
    ref = np.load(tmp_path / "whole.npy")
    parts = [np.load(f) for f in files]
    assert ref.shape[0] == 2 * n + 1 and [p.shape[0] for p in parts] == \
        [len(b) for b in np.array_split(np.arange(2 * n + 1), n)]
    assert np.concatenate(parts).tobytes() == ref.tobytes()
