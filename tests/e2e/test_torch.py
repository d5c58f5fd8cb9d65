"""dvpp.torch (issue 20) against a real dvppd, PyTorch and torchvision:

  tensors   as_tensor aliases the ring slot (same address, inside the ring
            memfd's mapping); in-place writes reach neither the daemon's
            pages, another mapping of the ring, nor the next result in that
            slot; a leaked tensor's lease ends when it is collected (and not
            while a view of its storage lives); DLPack (torch, numpy).
  parity    the ImageNet eval chain and the seeded training chain equal
            torchvision on PIL images (max |diff| <= 1e-6, f32) on a real
            photo re-encoded at every JPEG sampling, progressive, grey, PNG
            RGB/RGBA/grey/grey+alpha/palette, odd sizes, an EXIF-rotated
            JPEG and (when forensics-samples-files is installed) real phone
            photos; the other transforms one by one; refusals name the
            transform.
  loader    ImageFolder's classes and sample order equal torchvision's; the
            DataLoader's order, labels and batches equal torch's DataLoader
            over torchvision's ImageFolder (shuffled with a seeded
            generator, training chain seeded); epochs reshuffle; len and
            drop_last; a corrupt file mid-epoch is reported by its path
            (raise) or left out (skip); the daemon killed mid-epoch is a
            clear error, not a hang; a private daemon when no socket is
            given.
  package   `import dvpp` works without torch; dvpp.torch says what it needs.

    DVPP_BUILD=build /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/e2e/test_torch.py
"""
import gc
import glob
import io
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from PIL import Image

pytest.register_assert_rewrite("daemon_util")
import daemon_util  # noqa: E402
from daemon_util import PYCLIENT, ROOT, free_port, sock_dir, stop_daemon  # noqa: E402

torch = pytest.importorskip("torch")
T = pytest.importorskip("torchvision.transforms")
tvdatasets = pytest.importorskip("torchvision.datasets")
dvpp = daemon_util.pyclient()
import dvpp.torch as dt  # noqa: E402
from dvpp.torch import transforms as D  # noqa: E402
from dvpp.torch._runner import retry_ring_full  # noqa: E402

CORPUS = os.path.join(ROOT, "tests", "data", "corpus", "libjpeg-turbo")
PHOTO = os.path.join(CORPUS, "testorig.ppm")       # a real photo, 227x149
FORENSICS = "/usr/share/forensics-samples/original-files"
MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
TOL = 1e-6


def start(tmp, name, **sock_extra):
    port = free_port()
    sdir = sock_dir("dvpptorch-", 0o755)
    sock = os.path.join(sdir, f"{name}.sock")
    sock_cfg = {"path": sock, "mode": "0600", "lease_timeout_ms": 600000}
    sock_cfg.update(sock_extra)
    cfg = {"http": {"listen": f"127.0.0.1:{port}"}, "socket": sock_cfg,
           "device": {"channels": 2}}
    return daemon_util.start_daemon(tmp, cfg, name, port, sock=sock, sock_dir=sdir)


@pytest.fixture(scope="module")
def srv(tmp_path_factory):
    d = start(str(tmp_path_factory.mktemp("torch_srv")), "srv")
    yield d
    stop_daemon(d)


@pytest.fixture(scope="module")
def client(srv):
    c = dvpp.Client(srv.sock, timeout=60)
    yield c
    c.close()


@pytest.fixture(scope="module")
def photo():
    return Image.open(PHOTO).convert("RGB")


encode = daemon_util.encode_image


def pil_of(data):
    """What torchvision's default loader gives: Image.open().convert('RGB')."""
    return Image.open(io.BytesIO(data)).convert("RGB")


def maxdiff(a, b):
    assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    return (a.double() - b.double()).abs().max().item()


def eval_chains():
    tv = T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(), T.Normalize(MEAN, STD)])
    ours = D.Compose([D.Resize(256), D.CenterCrop(224), D.ToTensor(), D.Normalize(MEAN, STD)])
    return tv, ours


def train_chains(size=224):
    tv = T.Compose([T.RandomResizedCrop(size), T.RandomHorizontalFlip(), T.ToTensor(),
                    T.Normalize(MEAN, STD)])
    ours = D.Compose([D.RandomResizedCrop(size), D.RandomHorizontalFlip(), D.ToTensor(),
                      D.Normalize(MEAN, STD)])
    return tv, ours


# --------------------------------------------------------------------------
# tensors over the ring

RAW_SPEC = {"input": "raw", "raw": {"format": "rgb", "width": 64, "height": 48},
            "normalize": {"dtype": "float32", "scale": 1}}


def raw_rgb(seed, w=64, h=48):
    return np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)


def expect_tensor(px):
    return torch.from_numpy(px.astype(np.float32).transpose(2, 0, 1)[None].copy())


def wait_free(ring, slot, timeout=5.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ring.descriptor(slot)["status"] == dvpp.SLOT_FREE:
            return True
        time.sleep(0.005)
    return False


def test_tensor_aliases_the_ring_slot(client):
    ring = client.open_ring(2, 64 * 48 * 3 * 4)
    px = raw_rgb(1)
    r = client.submit(RAW_SPEC, px.tobytes(), ring=ring)
    t = dt.as_tensor(r)
    assert t.shape == (1, 3, 48, 64) and t.dtype == torch.float32
    assert torch.equal(t, expect_tensor(px))
    slot_addr = ring.private_address(r.slot)
    assert t.data_ptr() == slot_addr + (r.offset - ring.slot_offset(r.slot))
    # the address is inside a mapping of the ring's memfd, not a copy
    with open("/proc/self/maps") as f:
        maps = [line.split() for line in f]
    hit = [m for m in maps if int(m[0].split("-")[0], 16) <= t.data_ptr()
           < int(m[0].split("-")[1], 16)]
    assert hit and "memfd:" in " ".join(hit[0][5:]) and hit[0][1].startswith("rw-p"), hit
    r.release()
    ring.close()


def test_in_place_writes_stay_private(client):
    ring = client.open_ring(1, 64 * 48 * 3 * 4)   # one slot: the next result reuses it
    px1, px2 = raw_rgb(2), raw_rgb(3)
    r1 = client.submit(RAW_SPEC, px1.tobytes(), ring=ring)
    t = dt.as_tensor(r1)
    shared = r1.array()                      # the daemon's pages, read-only
    other = np.frombuffer(__import__("mmap").mmap(os.dup(ring.fd), ring.map_bytes,
                                                  flags=__import__("mmap").MAP_SHARED,
                                                  prot=__import__("mmap").PROT_READ),
                          dtype=np.float32, count=3 * 48 * 64,
                          offset=r1.offset)   # another consumer's mapping of the ring
    t.sub_(1000.0)                           # a model writing into its input
    t.mul_(-1)
    assert torch.equal(t, -(expect_tensor(px1) - 1000.0))
    assert np.array_equal(shared.reshape(1, 3, 48, 64), expect_tensor(px1).numpy())
    assert np.array_equal(other.reshape(1, 3, 48, 64), expect_tensor(px1).numpy())
    del t, shared
    r1.release()
    assert wait_free(ring, r1.slot)
    r2 = client.submit(RAW_SPEC, px2.tobytes(), ring=ring)
    assert r2.slot == r1.slot
    t2 = dt.as_tensor(r2)
    assert torch.equal(t2, expect_tensor(px2)), "the next result saw the old private pages"
    assert np.array_equal(other.reshape(1, 3, 48, 64), expect_tensor(px2).numpy())
    r2.release()
    del t2, other
    ring.close()


def test_sparse_writes_dropped_exactly(client):
    """Writes to a few scattered pages of a slot: only those pages become
    private (the untouched ones keep mapping the daemon's), and after the
    lease every page of the next result in the slot is the daemon's."""
    from dvpp.ring import _private_runs

    w, h = 256, 256                          # 768 KiB of f32: 192 pages
    spec = dict(RAW_SPEC, raw={"format": "rgb", "width": w, "height": h})
    ring = client.open_ring(1, w * h * 3 * 4)
    for k in range(3):
        px = raw_rgb(50 + k, w, h)
        r = client.submit(spec, px.tobytes(), ring=ring)
        t = dt.as_tensor(r)
        assert torch.equal(t, expect_tensor(px)), k
        assert _private_runs(ring._pmm, ring.slot_offset(0), ring.slot_bytes) == []
        flat = t.view(-1)
        for i in (0, 5000, 100000, flat.numel() - 1):   # pages 0, 4, 97, 191
            flat[i] = -1.0
        runs = _private_runs(ring._pmm, ring.slot_offset(0), ring.slot_bytes)
        base = ring.slot_offset(0)
        assert [(o - base) // 4096 for o, _ in runs] == [0, 4, 97, 191], runs
        del t, flat
        r.release()
        assert _private_runs(ring._pmm, ring.slot_offset(0), ring.slot_bytes) == []
        assert wait_free(ring, 0)
    ring.close()


def test_leaked_tensor_lease_ends_when_collected(client):
    ring = client.open_ring(2, 64 * 48 * 3 * 4)
    r = client.submit(RAW_SPEC, raw_rgb(4).tobytes(), ring=ring)
    slot = r.slot
    t = dt.as_tensor(r)
    view = t[0, 1]                           # shares t's storage
    del r, t
    gc.collect()
    time.sleep(0.05)
    assert ring.descriptor(slot)["status"] == dvpp.SLOT_READY, "lease ended under a view"
    assert view.shape == (48, 64)
    del view
    gc.collect()
    client.stats()                           # any request flushes queued releases too
    assert wait_free(ring, slot), "the collected tensor's slot was not released"
    # explicit release ends it at once, whatever still lives
    r = client.submit(RAW_SPEC, raw_rgb(5).tobytes(), ring=ring)
    t = dt.as_tensor(r)
    dt.release(r)
    assert wait_free(ring, r.slot)
    del t
    ring.close()


def test_dlpack_export_holds_the_lease(client):
    ring = client.open_ring(2, 64 * 48 * 3 * 4)
    px = raw_rgb(6)
    r = client.submit(RAW_SPEC, px.tobytes(), ring=ring)
    t = torch.utils.dlpack.from_dlpack(r)
    a = np.from_dlpack(r)
    assert torch.equal(t, expect_tensor(px)) and np.array_equal(a, expect_tensor(px).numpy())
    assert t.data_ptr() == a.ctypes.data == ring.private_address(r.slot) + \
        (r.offset - ring.slot_offset(r.slot))
    assert r.__dlpack_device__() == (1, 0)
    slot = r.slot
    del r, t
    gc.collect()
    assert ring.descriptor(slot)["status"] == dvpp.SLOT_READY
    del a
    gc.collect()
    client.stats()
    assert wait_free(ring, slot)
    ring.close()


def test_tensors_collected_across_threads(client):
    """Four threads share one client and drop tensors in every way (plain
    del, views outliving their tensor, cycles the collector breaks while
    another thread holds the client's lock): no deadlock, every value right,
    every slot back at the end."""
    import threading

    ring = client.open_ring(6, 64 * 48 * 3 * 4)
    errors = []

    def work(k):
        try:
            for i in range(60):
                px = raw_rgb(1000 * k + i)
                r = retry_ring_full(lambda: client.submit(RAW_SPEC, px.tobytes(), ring=ring),
                                    "test")
                t = dt.as_tensor(r)
                assert torch.equal(t, expect_tensor(px))
                if i % 3 == 0:
                    keep = t[0, 2]            # a view outlives the tensor a while
                    del t
                    assert keep.shape == (48, 64)
                    del keep
                elif i % 3 == 1:
                    cycle = [t]
                    cycle.append(cycle)       # only the cyclic collector frees it
                    del cycle, t
                    if i % 9 == 1:
                        gc.collect()
                else:
                    t.add_(1)
                    del t
                del r
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not any(th.is_alive() for th in threads), "deadlock"
    assert not errors, errors
    gc.collect()
    client.stats()
    assert all(wait_free(ring, s) for s in range(ring.slots))
    ring.close()


def test_batch_result_as_one_tensor(client, photo):
    jpg = encode(photo, "JPEG", quality=92)
    spec = {"ops": [{"resize": {"w": 32, "h": 24}}], "normalize": {"dtype": "float32"}}
    ring = client.open_ring(2, 4 * 3 * 24 * 32 * 4)
    res = client.batch_submit(spec, [jpg] * 4, ring)
    t = dt.as_tensor(res)
    assert t.shape == (4, 3, 24, 32)
    single = client.submit(spec, jpg)        # inline: a copy of its bytes
    s = dt.as_tensor(single)
    for i in range(4):
        assert torch.equal(t[i], s[0])
    res.release()
    ring.close()


def test_video_frames_as_tensors(client, tmp_path):
    """Decoded frames (a tensor spec per frame) as tensors over their slots,
    each its own slot, equal to the same frames' NV12 pixels through the
    same spec."""
    clip = tmp_path / "clip.mp4"
    subprocess.run(["ffmpeg", "-v", "error", "-f", "lavfi", "-i",
                    "testsrc=size=64x48:rate=10", "-frames:v", "4", "-c:v", "libx264",
                    "-pix_fmt", "yuv420p", "-f", "mp4", str(clip)], check=True)
    spec = {"normalize": {"dtype": "uint8", "scale": 1, "layout": "nhwc"}}
    ring = client.open_ring(4, 64 * 48 * 3)
    pixels = []      # the same frames as NV12, through the same spec as raw input
    raw = dict(spec, input="raw", raw={"format": "nv12", "width": 64, "height": 48})
    with client.decode_video(clip.read_bytes(), ring, format="nv12") as frames:
        for f in frames:
            with f:
                pixels.append(client.submit(raw, f.tobytes()).array().copy())
    tensors = []
    with client.decode_video(clip.read_bytes(), ring, spec=spec) as frames:
        for f in frames:
            tensors.append(dt.as_tensor(f))
    assert len(tensors) == len(pixels) == 4
    assert all(t.shape == (1, 48, 64, 3) and t.dtype == torch.uint8 for t in tensors)
    assert len({t.data_ptr() for t in tensors}) == 4, "each frame is its own slot"
    for k in range(4):
        assert np.array_equal(tensors[k][0].numpy(), pixels[k].reshape(48, 64, 3)), k
    del tensors, f
    gc.collect()
    client.stats()
    assert all(wait_free(ring, s) for s in range(ring.slots)), [ring.descriptor(s) for s in range(ring.slots)]
    ring.close()


# --------------------------------------------------------------------------
# parity with torchvision


def sources(photo):
    """(name, bytes): the same real photo in every form the issue names."""
    big = photo.resize((455, 301), Image.LANCZOS)     # odd sizes, both axes
    out = [
        ("jpeg444", encode(photo, "JPEG", quality=93, subsampling=0)),
        ("jpeg422", encode(photo, "JPEG", quality=93, subsampling=1)),
        ("jpeg420", encode(photo, "JPEG", quality=93, subsampling=2)),
        ("jpeg420-odd", encode(big, "JPEG", quality=90, subsampling=2)),
        ("jpeg-progressive", encode(big, "JPEG", quality=88, progressive=True)),
        ("jpeg-grey", encode(photo.convert("L"), "JPEG", quality=90)),
        ("png-rgb", encode(photo, "PNG")),
        ("png-rgba", encode(_with_alpha(photo), "PNG")),
        ("png-grey", encode(photo.convert("L"), "PNG")),
        ("png-grey-alpha", encode(_with_alpha(photo).convert("LA"), "PNG")),
        ("png-palette", encode(photo.convert("P", palette=Image.ADAPTIVE), "PNG")),
        ("jpeg-exif-rotated", _exif_rotated(big)),
        ("jpeg-tiny", encode(photo.resize((7, 5)), "JPEG", quality=95)),
        ("png-grey16", encode(Image.fromarray((np.asarray(photo.convert("L"), np.uint16)
                                                * 3), "I;16"), "PNG")),
        ("jpeg-cmyk", encode(photo.convert("CMYK"), "JPEG", quality=90)),
    ]
    for j in (os.path.join(CORPUS, "testimgint.jpg"), os.path.join(CORPUS, "testimgari.jpg")):
        out.append((os.path.basename(j), open(j, "rb").read()))
    for sample in ("1x2,1x1,1x1", "4x1,1x1,1x1", "2x2,1x1,1x1"):   # 4:4:0, 4:1:1, cjpeg 4:2:0
        out.append((f"cjpeg-{sample}", subprocess.run(
            ["cjpeg", "-quality", "90", "-sample", sample, PHOTO], capture_output=True,
            check=True).stdout))
    return out


def _with_alpha(img):
    rgba = img.convert("RGBA")
    a = np.array(rgba)
    a[..., 3] = np.linspace(0, 255, a.shape[1], dtype=np.uint8)[None, :]
    return Image.fromarray(a, "RGBA")


def _exif_rotated(img):
    exif = Image.Exif()
    exif[0x0112] = 6                     # rotate 90 CW to view: torchvision ignores it
    return encode(img, "JPEG", quality=90, exif=exif.tobytes())


@pytest.fixture(scope="module")
def default_client(srv, monkeypatch_module):
    monkeypatch_module.setenv("DVPPD_SOCKET", srv.sock)
    c = dt.default_client()
    yield c


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_eval_chain_parity(client, photo):
    tv, ours = eval_chains()
    for name, data in sources(photo):
        want = tv(pil_of(data))
        got = ours(data, client=client)
        assert maxdiff(got, want) <= TOL, name


def test_train_chain_parity_seeded(client, photo):
    tv, ours = train_chains()
    for seed, (name, data) in enumerate(sources(photo)):
        img = pil_of(data)
        for k in range(3):
            torch.manual_seed(1000 * seed + k)
            want = tv(img)
            torch.manual_seed(1000 * seed + k)
            got = ours(data, client=client)
            assert maxdiff(got, want) <= TOL, (name, k)


def test_real_phone_photos(client):
    photos = sorted(glob.glob(os.path.join(FORENSICS, "pic*", "IMG_*.jpg")))[:3]
    if not photos:
        pytest.skip("forensics-samples-files is not installed (make deps installs it)")
    tv_e, ours_e = eval_chains()
    tv_t, ours_t = train_chains()
    for p in photos:
        data = open(p, "rb").read()
        img = pil_of(data)
        assert maxdiff(ours_e(data, client=client), tv_e(img)) <= TOL, p
        torch.manual_seed(7)
        want = tv_t(img)
        torch.manual_seed(7)
        assert maxdiff(ours_t(p, client=client), want) <= TOL, p


def draft_loader(size):
    """torchvision's default loader with PIL's draft first (as fast loaders do)."""
    def load(path):
        with open(path, "rb") as f:
            img = Image.open(f)
            img.draft("RGB", size)
            return img.convert("RGB")
    return load


def test_draft_equals_pil_draft_loader(client, photo, tmp_path):
    """draft=(w, h): PIL's Image.draft (a DCT-scaled decode) before the
    transforms, bit for bit torchvision's result on the drafted PIL image,
    eval and seeded training chains, every sampling; PNG unaffected."""
    photos = sorted(glob.glob(os.path.join(FORENSICS, "pic*", "IMG_*.jpg")))[:2]
    paths = []
    big = photo.resize((1021, 677), Image.LANCZOS)
    for k, sub in enumerate((0, 1, 2)):
        paths.append(tmp_path / f"s{sub}.jpg")
        big.save(paths[-1], "JPEG", quality=90, subsampling=sub)
    paths.append(tmp_path / "p.png")
    big.save(paths[-1], "PNG")
    paths += photos
    for size in ((224, 224), (100, 90), (2000, 2000)):
        tv_e, ours_e = eval_chains()
        tv_t, ours_t = train_chains()
        load = draft_loader(size)
        for p in paths:
            assert maxdiff(ours_e(str(p), client=client, draft=size), tv_e(load(p))) <= TOL, \
                (p, size)
            torch.manual_seed(3)
            want = tv_t(load(p))
            torch.manual_seed(3)
            assert maxdiff(ours_t(str(p), client=client, draft=size), want) <= TOL, (p, size)
    # through the loader: ImageFolder(draft=) against torchvision's ImageFolder(loader=)
    root = tmp_path / "folder" / "c"
    root.mkdir(parents=True)
    for p in paths[:4]:
        shutil.copy(p, root / os.path.basename(p))
    tv_e, ours_e = eval_chains()
    want = list(torch.utils.data.DataLoader(
        tvdatasets.ImageFolder(str(tmp_path / "folder"), tv_e, loader=draft_loader((224, 224))),
        batch_size=4))
    got = list(dt.DataLoader(dt.ImageFolder(str(tmp_path / "folder"), ours_e,
                                            draft=(224, 224)), batch_size=4, client=client))
    assert maxdiff(got[0][0], want[0][0]) <= TOL


SINGLE = [
    ("resize-int-max", lambda m: [m.Resize(100, max_size=120)]),
    ("resize-hw", lambda m: [m.Resize((61, 97))]),
    ("resize-up", lambda m: [m.Resize((400, 333))]),
    ("resize-nearest", lambda m: [m.Resize(90, interpolation=m.InterpolationMode.NEAREST)]),
    ("resize-bicubic", lambda m: [m.Resize(90, interpolation=m.InterpolationMode.BICUBIC)]),
    ("resize-lanczos", lambda m: [m.Resize(90, interpolation=m.InterpolationMode.LANCZOS)]),
    ("resize-box", lambda m: [m.Resize(90, interpolation=m.InterpolationMode.BOX)]),
    ("resize-hamming", lambda m: [m.Resize(90, interpolation=m.InterpolationMode.HAMMING)]),
    ("centercrop-odd", lambda m: [m.CenterCrop((101, 77))]),
    ("centercrop-bigger", lambda m: [m.CenterCrop((160, 240))]),
    ("rrc-scale", lambda m: [m.RandomResizedCrop((96, 128), scale=(0.5, 0.9), ratio=(0.5, 2.0))]),
    ("hflip-always", lambda m: [m.RandomHorizontalFlip(1.0)]),
    ("vflip-always", lambda m: [m.RandomVerticalFlip(1.0)]),
    ("vflip-never", lambda m: [m.RandomVerticalFlip(0.0)]),
    ("pad-constant", lambda m: [m.Pad((3, 5, 7, 9), fill=(10, 200, 30))]),
    ("pad-edge", lambda m: [m.Pad(6, padding_mode="edge")]),
    ("pad-reflect", lambda m: [m.Pad((4, 2), padding_mode="reflect")]),
    ("pad-symmetric", lambda m: [m.Pad(5, padding_mode="symmetric")]),
    ("grey1", lambda m: [m.Grayscale()]),
    ("grey3", lambda m: [m.Grayscale(3)]),
]


@pytest.mark.parametrize("name,make", SINGLE, ids=[s[0] for s in SINGLE])
@pytest.mark.parametrize("tail", ["totensor", "piltotensor", "convert"])
def test_single_transforms(client, photo, name, make, tail):
    data = encode(photo, "JPEG", quality=91)
    tails = {"totensor": lambda m: [m.ToTensor()],
             "piltotensor": lambda m: [m.PILToTensor()],
             "convert": lambda m: [m.PILToTensor(), m.ConvertImageDtype(torch.float32)]}
    tv = T.Compose(make(T) + tails[tail](T))
    ours = D.Compose(make(D) + tails[tail](D))
    for seed in range(3):
        torch.manual_seed(seed)
        want = tv(pil_of(data))
        torch.manual_seed(seed)
        got = ours(data, client=client)
        assert maxdiff(got, want) <= TOL, (name, tail, seed)


def test_torchvision_objects_are_translated(client, photo):
    data = encode(photo, "JPEG", quality=90)
    tv = T.Compose([T.Resize(128), T.CenterCrop(112), T.ToTensor(), T.Normalize(MEAN, STD)])
    ours = D.Compose(tv)          # torchvision's own Compose
    assert maxdiff(ours(data, client=client), tv(pil_of(data))) <= TOL


def test_pil_image_source(client, photo):
    tv, ours = eval_chains()
    assert maxdiff(ours(photo, client=client), tv(photo)) <= TOL


@pytest.mark.parametrize("bad,named", [
    ([T.ColorJitter(0.4)], "ColorJitter"),
    ([T.Lambda(lambda x: x)], "Lambda"),
    ([D.ToTensor(), D.Resize(10)], "Resize after ToTensor"),
    ([D.Normalize(MEAN, STD)], "Normalize needs a tensor"),
    ([D.PILToTensor(), D.Normalize(MEAN, STD)], "uint8"),
    ([T.RandomRotation(10)], "RandomRotation"),
])
def test_inexpressible_transforms_are_refused_at_compose(bad, named):
    with pytest.raises(D.TransformError) as e:
        D.Compose(bad)
    assert named in str(e.value)


def test_random_params_match_torchvision_get_params():
    for seed in range(200):
        w, h = 50 + seed * 7 % 900, 40 + seed * 13 % 700
        torch.manual_seed(seed)
        want = T.RandomResizedCrop.get_params(torch.empty(1).expand(3, h, w),
                                              (0.08, 1.0), (3 / 4, 4 / 3))
        torch.manual_seed(seed)
        got = D.RandomResizedCrop.get_params_wh(w, h, (0.08, 1.0), (3 / 4, 4 / 3))
        assert tuple(got) == tuple(want), (seed, w, h)


# --------------------------------------------------------------------------
# datasets and the loader


@pytest.fixture(scope="module")
def folder(tmp_path_factory, photo):
    """A small ImageFolder tree: 3 classes (one nested), mixed formats and
    sizes, names whose sorted order is not their creation order."""
    root = tmp_path_factory.mktemp("imagefolder")
    rng = np.random.default_rng(20)
    files = {"cat": ["b.jpg", "a.JPEG", "sub/z.png", "c.jpeg"],
             "ant": ["x.png", "w.jpg", "y.jpg"],
             "dog": ["m.jpg", "k.png", "l.jpg", "j.jpg", "n.png"]}
    for cls, names in files.items():
        for k, n in enumerate(names):
            p = root / cls / n
            p.parent.mkdir(parents=True, exist_ok=True)
            w, h = int(rng.integers(150, 300)), int(rng.integers(150, 300))
            img = photo.resize((w, h), Image.BICUBIC)
            if n.lower().endswith("png"):
                img.save(p, "PNG")
            else:
                img.save(p, "JPEG", quality=int(rng.integers(70, 96)),
                         subsampling=int(k % 3))
    (root / "dog" / "notes.txt").write_text("not an image")
    return str(root)


def test_imagefolder_layout_equals_torchvision(folder):
    ours = dt.ImageFolder(folder)
    tv = tvdatasets.ImageFolder(folder)
    assert ours.classes == tv.classes and ours.class_to_idx == tv.class_to_idx
    assert ours.samples == tv.samples and ours.targets == tv.targets
    assert len(ours) == len(tv)


def test_imagefolder_getitem(folder, client):
    tv_t, ours_t = eval_chains()
    ours = dt.ImageFolder(folder, ours_t, client=client)
    tv = tvdatasets.ImageFolder(folder, tv_t)
    for i in (0, 5, len(tv) - 1):
        (x, y), (a, b) = ours[i], tv[i]
        assert y == b and maxdiff(x, a) <= TOL


def test_loader_equals_torch_loader_train_chain(folder, client):
    tv_t, ours_t = train_chains(96)
    tv_loader = torch.utils.data.DataLoader(
        tvdatasets.ImageFolder(folder, tv_t), batch_size=4, shuffle=True,
        generator=torch.Generator().manual_seed(5), num_workers=0)
    ours_loader = dt.DataLoader(dt.ImageFolder(folder, ours_t), batch_size=4, shuffle=True,
                                generator=torch.Generator().manual_seed(5), client=client,
                                prefetch=3)
    assert len(ours_loader) == len(tv_loader) == 3
    for epoch in range(2):
        torch.manual_seed(100 + epoch)
        want = [(x.clone(), y.clone()) for x, y in tv_loader]
        torch.manual_seed(100 + epoch)
        got = list(ours_loader)
        assert len(got) == len(want)
        for (x, y), (a, b) in zip(got, want):
            assert torch.equal(y, b) and y.dtype == torch.int64
            assert maxdiff(x, a) <= TOL, epoch
        del got
    gc.collect()


def test_loader_order_reshuffles_and_drop_last(folder, client):
    ours_t = D.Compose([D.Resize((32, 32)), D.ToTensor()])
    ds = dt.ImageFolder(folder, ours_t)
    g = torch.Generator().manual_seed(3)
    loader = dt.DataLoader(ds, batch_size=5, shuffle=True, generator=g, drop_last=True,
                           client=client)
    assert len(loader) == 2
    tv = torch.utils.data.DataLoader(list(range(len(ds))), batch_size=5, shuffle=True,
                                     generator=torch.Generator().manual_seed(3),
                                     drop_last=True)
    orders = []
    for _ in range(2):
        want = [b.tolist() for b in tv]
        batches = list(loader)
        assert all(x.shape == (5, 3, 32, 32) for x, _ in batches)
        got = [y.tolist() for _, y in batches]
        assert got == [[ds.targets[i] for i in b] for b in want]
        del batches
        orders.append(want)
    assert orders[0] != orders[1], "the second epoch was not reshuffled"


def test_loader_takes_torch_worker_arguments(folder, client):
    """The two-line swap keeps torch's worker/pinning arguments working
    (ignored: no worker processes here); collate_fn and unknown ones are
    refused by name."""
    ds = dt.ImageFolder(folder, D.Compose([D.Resize((20, 20)), D.ToTensor()]))
    loader = dt.DataLoader(ds, batch_size=4, num_workers=2, pin_memory=True,
                           persistent_workers=True, prefetch_factor=2, client=client)
    assert sum(len(y) for _, y in loader) == len(ds)
    with pytest.raises(TypeError, match="collate_fn"):
        dt.DataLoader(ds, collate_fn=lambda b: b, client=client)
    with pytest.raises(TypeError, match="num_wrkers"):
        dt.DataLoader(ds, num_wrkers=2, client=client)


def test_loader_batch_is_one_ring_slot(folder, client):
    ds = dt.ImageFolder(folder, D.Compose([D.Resize((40, 30)), D.ToTensor()]))
    loader = dt.DataLoader(ds, batch_size=6, client=client)
    x, y = next(iter(loader))
    assert x.shape == (6, 3, 40, 30)
    ring = loader._rings.get(6 * 3 * 40 * 30 * 4)
    addrs = [ring.private_address(s) for s in range(ring.slots)]
    assert x.data_ptr() in [a + 0 for a in addrs], "the batch is not a view of a ring slot"


def test_loader_batches_above_64_items(client, photo):
    """A batch of more items than one message carries memfds (64) is made of
    several jobs, in order, joined: the same tensor as one job per item."""
    datas = [encode(photo.resize((40 + k % 7, 30 + k % 5)), "JPEG", quality=80 + k % 15)
             for k in range(150)]
    tf = D.Compose([D.RandomResizedCrop(16), D.RandomHorizontalFlip(), D.ToTensor()])
    loader = dt.DataLoader(dt.FileDataset(datas, list(range(150)), tf), batch_size=70,
                           client=client)
    torch.manual_seed(11)
    got = list(loader)
    assert [len(y) for _, y in got] == [70, 70, 10]
    assert torch.equal(torch.cat([y for _, y in got]), torch.arange(150))
    torch.manual_seed(11)
    torch.empty((), dtype=torch.int64).random_()      # the loader's base-seed draw
    want = torch.stack([tf(d, client=client).clone() for d in datas])
    assert maxdiff(torch.cat([x for x, _ in got]), want) == 0


def test_loader_frame_header_after_large_app_segments(client, photo, tmp_path):
    """A JPEG whose frame header (SOF) comes after 130 KB of APPn segments
    (big EXIF/ICC blocks, as phone photos have): the loader reads past its
    first 64 KiB for the size and gives torchvision's tensor."""
    jpg = encode(photo, "JPEG", quality=90)
    app = b"".join(b"\xff\xe2" + (65000).to_bytes(2, "big") + bytes(64998) for _ in range(2))
    path = tmp_path / "big_app.jpg"
    path.write_bytes(jpg[:2] + app + jpg[2:])
    tv, ours = eval_chains()
    (x, _), = list(dt.DataLoader(dt.FileDataset([str(path)], [0], ours), client=client))
    assert maxdiff(x[0], tv(Image.open(path).convert("RGB"))) <= TOL


def test_corrupt_file_mid_epoch(folder, client, tmp_path):
    files = sorted(glob.glob(os.path.join(folder, "*", "*.jpg")))[:6]
    paths = [str(tmp_path / f"{i}.jpg") for i in range(6)]
    for src, dst in zip(files, paths):
        shutil.copy(src, dst)
    data = open(paths[3], "rb").read()
    open(paths[3], "wb").write(data[:600])        # cut after the header: decode fails
    open(paths[4], "wb").write(b"not an image at all")
    tf = D.Compose([D.Resize((24, 24)), D.ToTensor()])
    ds = dt.FileDataset(paths, list(range(6)), tf)
    with pytest.raises(dt.ItemError) as e:
        list(dt.DataLoader(ds, batch_size=2, client=client))
    assert e.value.path == paths[3] and e.value.index == 3
    loader = dt.DataLoader(ds, batch_size=2, client=client, on_error="skip")
    got = list(loader)
    assert [y.tolist() for _, y in got] == [[0, 1], [2], [5]]
    assert [p for p, _ in loader.failures] == [paths[3], paths[4]]
    assert "not a JPEG or PNG" in str(loader.failures[1][1])
    want = [tf(p, client=client) for p in paths if p not in (paths[3], paths[4])]
    assert maxdiff(torch.cat([x for x, _ in got]), torch.stack(want)) == 0


def test_daemon_killed_mid_epoch_is_an_error(tmp_path, folder):
    d = start(str(tmp_path), "killed")
    try:
        ds = dt.ImageFolder(folder, D.Compose([D.Resize((64, 64)), D.ToTensor()]))
        loader = dt.DataLoader(ds, batch_size=2, socket=d.sock, timeout=30)
        it = iter(loader)
        next(it)
        d.proc.send_signal(signal.SIGKILL)
        d.proc.wait()
        t0 = time.monotonic()
        with pytest.raises(dvpp.Disconnected) as e:
            for _ in it:
                pass
        assert time.monotonic() - t0 < 20
        assert "went away during the epoch" in str(e.value)
        loader.close()
    finally:
        stop_daemon(d, check=False)


def test_private_daemon_for_the_loader(folder, monkeypatch):
    monkeypatch.delenv("DVPPD_SOCKET", raising=False)
    monkeypatch.setenv("DVPPD", daemon_util.DVPPD)
    ds = dt.ImageFolder(folder, D.Compose([D.Resize((16, 16)), D.ToTensor()]))
    loader = dt.DataLoader(ds, batch_size=4)
    batches = list(loader)
    assert sum(len(y) for _, y in batches) == len(ds)
    daemon = loader.client.daemon
    assert daemon.alive
    del batches
    loader.close()
    assert not daemon.alive and not os.path.exists(daemon.dir)


# --------------------------------------------------------------------------
# the package without torch

def test_dvpp_imports_without_torch(tmp_path):
    block = tmp_path / "sitecustomize.py"
    block.write_text("import sys\nsys.modules['torch'] = None\n")
    env = dict(os.environ, PYTHONPATH=f"{tmp_path}:{PYCLIENT}")
    code = ("import dvpp\nprint('ok', dvpp.Client.__name__)\n"
            "try:\n    import dvpp.torch\nexcept ImportError as e:\n    print('refused', e)\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "ok Client" in out.stdout
    assert "refused dvpp.torch needs PyTorch" in out.stdout
