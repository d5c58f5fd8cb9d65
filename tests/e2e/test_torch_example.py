"""clients/examples/torch_classify.py (issue 20) against a real dvppd:

  The example, run as a program (/usr/bin/python3, a subprocess) on a small
  generated folder of real-photo JPEGs and PNGs of several sizes, with
  --socket at a daemon of this test and batches that do not divide the
  folder, prints for every file, in the folder's order, the same top-1 class
  index as the same ResNet-18 (torch.manual_seed(0) weights) run here on
  torchvision's DataLoader output (torchvision.datasets.ImageFolder with
  torchvision's eval chain on PIL images), and scores within 1e-4; the class
  labels are ImageFolder's. A flat folder (no class subfolders) goes through
  a FileDataset, and a corrupt file there is reported by path and left out
  (exit status 1), the other files still classified.

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider \\
        tests/e2e/test_torch_example.py
"""
import os
import subprocess

import pytest
from PIL import Image

pytest.register_assert_rewrite("daemon_util")
import daemon_util  # noqa: E402
from daemon_util import PYCLIENT, ROOT, free_port, sock_dir, stop_daemon  # noqa: E402

torch = pytest.importorskip("torch")
torchvision = pytest.importorskip("torchvision")
T = pytest.importorskip("torchvision.transforms")

EXAMPLE = os.path.join(ROOT, "clients", "examples", "torch_classify.py")
PHOTO = os.path.join(ROOT, "tests", "data", "corpus", "libjpeg-turbo", "testorig.ppm")
MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
BATCH = 3
SCORE_TOL = 1e-4


def start(tmp, name):
    """dvppd with 2 channels and its socket (as test_torch.py's start)."""
    port = free_port()
    sdir = sock_dir("dvpptorchex-", 0o755)
    sock = os.path.join(sdir, f"{name}.sock")
    cfg = {"http": {"listen": f"127.0.0.1:{port}"},
           "socket": {"path": sock, "mode": "0600", "lease_timeout_ms": 600000},
           "device": {"channels": 2}}
    return daemon_util.start_daemon(tmp, cfg, name, port, sock=sock, sock_dir=sdir)


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    d = start(str(tmp_path_factory.mktemp("torch_example")), "ex")
    yield d
    stop_daemon(d)


def photo_variants():
    """(name, PIL image, format, save kwargs): the real photo at several sizes
    and crops, JPEG 4:2:0 / 4:4:4 and PNG (RGB, grey)."""
    base = Image.open(PHOTO).convert("RGB")          # 227 x 149
    big = base.resize((640, 420), Image.BICUBIC)
    return [
        ("a_orig.jpg", base, "JPEG", {"quality": 90, "subsampling": 2}),
        ("b_big.jpg", big, "JPEG", {"quality": 90, "subsampling": 2}),
        ("c_tall.jpg", big.crop((100, 0, 400, 420)), "JPEG", {"quality": 85, "subsampling": 0}),
        ("d_crop.png", big.crop((50, 40, 350, 300)), "PNG", {}),
        ("e_grey.png", base.convert("L").resize((300, 260)), "PNG", {}),
        ("f_flip.jpg", big.transpose(Image.FLIP_LEFT_RIGHT), "JPEG", {"quality": 95}),
        ("g_small.jpg", base.resize((160, 120)), "JPEG", {"quality": 90, "subsampling": 2}),
    ]


def make_images(folder, classes):
    """The variants spread over @classes subfolders (None: flat); the paths."""
    paths = []
    for i, (name, im, fmt, kw) in enumerate(photo_variants()):
        d = folder if classes is None else os.path.join(folder, classes[i % len(classes)])
        os.makedirs(d, exist_ok=True)
        p = os.path.join(d, name)
        im.save(p, fmt, **kw)
        paths.append(p)
    return paths


def run_example(folder, sock, batch=BATCH):
    env = dict(os.environ, PYTHONPATH=PYCLIENT)
    env.pop("DVPPD_SOCKET", None)
    return subprocess.run(["/usr/bin/python3", EXAMPLE, folder, "--socket", sock,
                           "--batch", str(batch), "--threads", "1"],
                          capture_output=True, text=True, timeout=300, env=env)


def parse(stdout):
    """[(path, top1, score, label or None)] of the example's per-file lines."""
    rows = []
    for line in stdout.splitlines():
        if not line or line.startswith("#"):
            continue
        path, *fields = line.split("\t")
        kv = dict(f.split("=", 1) for f in fields)
        rows.append((path, int(kv["top1"]), float(kv["score"]),
                     int(kv["label"]) if "label" in kv else None))
    return rows


def reference(dataset):
    """The same ResNet-18 (seed 0) on torchvision's loader output:
    [(top1, score)] in the dataset's order."""
    torch.manual_seed(0)
    model = torchvision.models.resnet18(weights=None).eval()
    out = []
    for images, _ in torch.utils.data.DataLoader(dataset, batch_size=BATCH):
        with torch.no_grad():
            s, i = torch.softmax(model(images), dim=1).max(dim=1)
        out.extend(zip(i.tolist(), s.tolist()))
    return out


def eval_chain():
    return T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(), T.Normalize(MEAN, STD)])


class _Files(torch.utils.data.Dataset):
    """Files through torchvision's default loader (PIL, convert('RGB')) and
    the eval chain: what the example's FileDataset stands for."""

    def __init__(self, paths):
        self.paths = paths
        self.tf = eval_chain()

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return self.tf(torchvision.datasets.folder.default_loader(self.paths[i])), 0


def test_image_folder_matches_torchvision(srv, tmp_path):
    torch.set_num_threads(1)
    folder = str(tmp_path / "imgs")
    make_images(folder, ["cat", "dog", "zebra"])
    p = run_example(folder, srv.sock)
    assert p.returncode == 0, p.stderr
    rows = parse(p.stdout)
    ref_ds = torchvision.datasets.ImageFolder(folder, eval_chain())
    assert [r[0] for r in rows] == [s[0] for s in ref_ds.samples]
    assert [r[3] for r in rows] == ref_ds.targets
    ref = reference(ref_ds)
    assert len(ref) == len(rows) == 7
    # random weights put every image in one class: the scores carry the check
    assert len({round(r[2], 6) for r in rows}) == len(rows), rows
    for (path, top1, score, _), (rtop1, rscore) in zip(rows, ref):
        assert top1 == rtop1, path
        assert abs(score - rscore) <= SCORE_TOL, (path, score, rscore)
    timing = [ln for ln in p.stdout.splitlines() if ln.startswith("# ")]
    assert len(timing) == 1 and timing[0].startswith("# 7 images in "), p.stdout


def test_flat_folder_with_a_corrupt_file(srv, tmp_path):
    torch.set_num_threads(1)
    folder = str(tmp_path / "flat")
    paths = make_images(folder, None)
    bad = os.path.join(folder, "c_zz_corrupt.jpg")     # sorts among the good ones
    with open(paths[1], "rb") as f:
        data = f.read()
    with open(bad, "wb") as f:
        f.write(data[:600] + b"\x00" * 64)          # the header, then garbage: cut
    p = run_example(folder, srv.sock, batch=4)
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert bad in p.stderr, p.stderr
    rows = parse(p.stdout)
    good = sorted(paths)
    assert [r[0] for r in rows] == good
    assert all(r[3] is None for r in rows)
    ref = reference(_Files(good))
    for (path, top1, score, _), (rtop1, rscore) in zip(rows, ref):
        assert top1 == rtop1, path
        assert abs(score - rscore) <= SCORE_TOL, (path, score, rscore)


def test_private_daemon_without_socket(tmp_path):
    """No --socket and no DVPPD_SOCKET: the example's loader starts its own
    dvppd (this build's), classifies, and leaves nothing running."""
    folder = str(tmp_path / "one")
    make_images(folder, ["only"])
    env = dict(os.environ, PYTHONPATH=PYCLIENT, DVPP_BUILD=daemon_util.BUILD,
               DVPPD=daemon_util.DVPPD, DVPPD_CHANNELS="1")
    env.pop("DVPPD_SOCKET", None)
    p = subprocess.run(["/usr/bin/python3", EXAMPLE, folder, "--batch", "8", "--threads", "1"],
                       capture_output=True, text=True, timeout=300, env=env)
    assert p.returncode == 0, p.stderr
    rows = parse(p.stdout)
    assert len(rows) == 7 and all(r[3] == 0 for r in rows)
    ref = reference(torchvision.datasets.ImageFolder(folder, eval_chain()))
    assert [r[1] for r in rows] == [r[0] for r in ref]
