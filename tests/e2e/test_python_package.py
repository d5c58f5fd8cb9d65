"""The Python client as a package (issue 20): `pip wheel` of clients/python
on a copy of the tree where `make` never ran (no dvpp_pb2.py: the build
generates it with protoc), offline (--no-index, --no-build-isolation: the
venv's and Debian's setuptools and wheel), installed into a fresh
`python3 -m venv --system-site-packages`; there, outside the source tree,
`import dvpp` and `import dvpp.torch` come from the venv and a job runs
against a real dvppd, its tensor a view of the ring.

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/e2e/test_python_package.py
"""
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

pytest.register_assert_rewrite("daemon_util")
import daemon_util  # noqa: E402
from daemon_util import PYCLIENT, ROOT, free_port, sock_dir, stop_daemon  # noqa: E402

pytest.importorskip("torch")
PHOTO = os.path.join(ROOT, "tests", "data", "corpus", "libjpeg-turbo", "testorig.jpg")


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    port = free_port()
    sdir = sock_dir("dvpppkg-", 0o755)
    sock = os.path.join(sdir, "pkg.sock")
    cfg = {"http": {"listen": f"127.0.0.1:{port}"},
           "socket": {"path": sock, "mode": "0600"}, "device": {"channels": 2}}
    d = daemon_util.start_daemon(str(tmp_path_factory.mktemp("pkg")), cfg, "pkg", port,
                                 sock=sock, sock_dir=sdir)
    yield d
    stop_daemon(d)


def run(cmd, **kw):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_INDEX_URL")}
    env["PIP_NO_INDEX"] = "1"
    env.update(kw.pop("env", {}))
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env, **kw)
    assert out.returncode == 0, f"{cmd}:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    tree = tmp_path_factory.mktemp("tree")
    shutil.copytree(PYCLIENT, tree / "clients" / "python",
                    ignore=shutil.ignore_patterns("dvpp_pb2.py", "__pycache__", "build",
                                                  "*.egg-info"))
    shutil.copytree(os.path.join(ROOT, "proto"), tree / "proto")
    assert not (tree / "clients" / "python" / "dvpp" / "dvpp_pb2.py").exists()
    dist = tmp_path_factory.mktemp("dist")
    run([sys.executable, "-m", "pip", "wheel", "--no-index", "--no-build-isolation",
         "--no-deps", "-w", str(dist), str(tree / "clients" / "python")])
    wheels = list(dist.glob("dvpp-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_wheel_carries_the_generated_messages(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    for want in ("dvpp/__init__.py", "dvpp/dvpp_pb2.py", "dvpp/ring.py",
                 "dvpp/torch/__init__.py", "dvpp/torch/transforms.py", "dvpp/torch/data.py"):
        assert want in names, names
    meta = next(n for n in names if n.endswith("METADATA"))
    text = zipfile.ZipFile(wheel).read(meta).decode()
    assert "Requires-Dist: numpy" in text and "Requires-Dist: protobuf" in text
    assert "Provides-Extra: torch" in text


def test_installed_in_a_venv_runs_a_job(wheel, tmp_path, srv):
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)])
    py = str(venv / "bin" / "python")
    run([py, "-m", "pip", "install", "--no-index", "--no-build-isolation", str(wheel)])
    code = f"""
import dvpp, dvpp.torch, sys
assert dvpp.__file__.startswith({str(venv)!r}), dvpp.__file__
from dvpp.torch import transforms as T
tf = T.Compose([T.Resize((32, 48)), T.ToTensor()])
c = dvpp.Client({srv.sock!r}, timeout=60)
t = tf({PHOTO!r}, client=c)
ring = next(iter(c._rings.values()))
print(tuple(t.shape), t.dtype, round(float(t.mean()), 4),
      ring.private_address(0) <= t.data_ptr() < ring.private_address(0) + ring.slots * ring.slot_bytes)
c.close()
"""
    out = run([py, "-c", code], cwd=str(tmp_path))
    assert "(3, 32, 48)" in out and "torch.float32" in out, out
    assert out.split()[-1] == "True", out
    assert 0.05 < float(out.split()[-2]) < 0.95, out
