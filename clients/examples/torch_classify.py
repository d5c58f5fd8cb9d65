#!/usr/bin/python3
"""torch_classify.py: classify a folder of images with a torchvision ResNet-18
whose input tensors come straight from dvppd's ring (dvpp.torch, issue 20).

    PYTHONPATH=clients/python /usr/bin/python3 clients/examples/torch_classify.py \\
        FOLDER [--socket PATH] [--batch N] [--seed S] [--threads T]

FOLDER is either torchvision's ImageFolder layout (one subfolder per class:
the class index of each file is printed too) or a flat folder of images
(every *.jpg/*.jpeg/*.png, sorted). The images go through the ImageNet eval
chain (Resize(256), CenterCrop(224), ToTensor(), Normalize) run by dvppd:
each batch is one N x 3 x 224 x 224 float32 tensor the daemon wrote into a
ring slot, handed to the model without a copy (dvpp.torch.DataLoader).

The weights are random (torchvision.models.resnet18(weights=None) after
torch.manual_seed(S), default 0): nothing can be downloaded here, and the
point is the hand-off, not the labels. Same seed, same weights: the output
equals the same model run on torchvision's own loader (tests/e2e/
test_torch_example.py checks it).

--socket: a running dvppd's socket (default $DVPPD_SOCKET); without one,
dvpp.torch starts a private dvppd for the run (the build's, or dvppd on
PATH). Output, one line per file, in the folder's order:

    PATH<TAB>top1=INDEX<TAB>score=SOFTMAX_PROBABILITY[<TAB>label=CLASS_INDEX]

then '#' lines with the timings (total, images/s, time waiting for the
loader, time in the model). A file dvppd cannot read is reported on stderr
and left out; the exit status is then 1.
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))   # run from the source tree

import torch  # noqa: E402
import torchvision  # noqa: E402

import dvpp.torch as dt  # noqa: E402
from dvpp.torch import transforms as T  # noqa: E402

MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
EXTENSIONS = (".jpg", ".jpeg", ".png")


def dataset_of(folder, tf):
    """An ImageFolder when @folder has class subfolders, else a FileDataset of
    its images; (dataset, has_labels)."""
    if any(e.is_dir() for e in os.scandir(folder)):
        return dt.ImageFolder(folder, tf), True
    paths = sorted(os.path.join(folder, f) for f in os.listdir(folder)
                   if f.lower().endswith(EXTENSIONS))
    if not paths:
        raise SystemExit(f"{folder}: no {'/'.join(EXTENSIONS)} files and no class folders")
    return dt.FileDataset(paths, transform=tf), False


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--socket", default=None, help="dvppd socket (default $DVPPD_SOCKET, "
                    "else a private dvppd)")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0, help="torch.manual_seed for the weights")
    ap.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: "
                    "torch's default)")
    args = ap.parse_args(argv)
    if args.batch < 1:
        ap.error("--batch must be >= 1")
    if args.threads:
        torch.set_num_threads(args.threads)

    torch.manual_seed(args.seed)
    model = torchvision.models.resnet18(weights=None).eval()
    tf = T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(), T.Normalize(MEAN, STD)])
    ds, labelled = dataset_of(args.folder, tf)
    paths = [s[0] for s in ds.samples]

    t0 = time.perf_counter()
    t_wait = t_model = 0.0
    done = 0               # samples of the dataset consumed so far (batches are in order)
    n_out = 0
    with dt.DataLoader(ds, batch_size=args.batch, socket=args.socket,
                       on_error="skip") as loader:
        it = iter(loader)
        while True:
            tw = time.perf_counter()
            try:
                images, labels = next(it)
            except StopIteration:
                break
            tm = time.perf_counter()
            t_wait += tm - tw
            with torch.no_grad():
                scores, top1 = torch.softmax(model(images), dim=1).max(dim=1)
            t_model += time.perf_counter() - tm
            # the batch's files, less the ones the loader reported failed
            failed = {p for p, _ in loader.failures}
            batch_paths = [p for p in paths[done:done + args.batch] if p not in failed]
            done += args.batch
            for k, path in enumerate(batch_paths):
                line = f"{path}\ttop1={int(top1[k])}\tscore={float(scores[k]):.8f}"
                if labelled:
                    line += f"\tlabel={int(labels[k])}"
                print(line)
            n_out += len(batch_paths)
            del images        # the slot goes back to the ring now, not at the next batch
        failures = list(loader.failures)
    total = time.perf_counter() - t0
    print(f"# {n_out} images in {total:.3f} s: {n_out / total if total else 0:.1f} images/s "
          f"(batch {args.batch}; waiting for dvppd {t_wait:.3f} s, model {t_model:.3f} s)")
    for path, err in failures:
        print(f"torch_classify: {path}: {err}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
