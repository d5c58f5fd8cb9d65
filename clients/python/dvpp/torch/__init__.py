"""dvpp.torch: dvppd as PyTorch's CPU input pipeline.

    from dvpp.torch import transforms            # was: from torchvision import transforms
    from dvpp.torch import ImageFolder, DataLoader   # was: torchvision.datasets / torch.utils.data

    tf = transforms.Compose([transforms.RandomResizedCrop(224),
                             transforms.RandomHorizontalFlip(), transforms.ToTensor(),
                             transforms.Normalize([0.485, 0.456, 0.406],
                                                  [0.229, 0.224, 0.225])])
    loader = DataLoader(ImageFolder("train/", tf), batch_size=64, shuffle=True)
    for images, labels in loader:               # images: 64 x 3 x 224 x 224, in a ring slot
        loss = criterion(model(images), labels)

- ``as_tensor(result)``: a Result (a job's, a batch's, a video frame's) as
  a torch.Tensor over its ring slot, no copy, holding the lease while it
  lives (dvpp.torch._tensor); ``Result.__dlpack__`` does the same for
  other runtimes.
- ``transforms``: torchvision 0.14's transforms that map onto the
  pipeline, compiled once per Compose, bit-for-bit torchvision's results
  on PIL images.
- ``ImageFolder``, ``FileDataset``, ``DataLoader``: datasets and a loader
  whose batches the daemon builds straight into ring slots, several in
  flight.
- ``connect()`` / ``default_client()``: the daemon at DVPPD_SOCKET (or
  ``socket=``), or a private one started for the process.

Needs torch (Debian's python3-torch); ``import dvpp`` itself does not.
Docs: docs/python.md.
"""

try:
    import torch as _torch  # noqa: F401  (the clear error, before the submodules)
except ImportError as e:  # pragma: no cover - exercised without torch only
    raise ImportError("dvpp.torch needs PyTorch (Debian: apt install python3-torch; "
                      "pip: the 'torch' extra of dvpp)") from e

from . import transforms
from ._daemon import PrivateDaemon, connect, default_client, find_dvppd
from ._runner import SourceError
from ._tensor import as_tensor, release
from .data import DataLoader, FileDataset, ImageFolder, ItemError

__all__ = ["as_tensor", "release", "transforms", "ImageFolder", "FileDataset", "DataLoader",
           "ItemError", "SourceError", "connect", "default_client", "PrivateDaemon",
           "find_dvppd"]
