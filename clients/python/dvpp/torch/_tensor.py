"""dvpp.torch._tensor: ring slots as torch tensors, without a copy.

``as_tensor(result)`` is ``torch.from_numpy(result.leased_array())``: the
tensor's memory is the slot itself, seen through the ring's copy-on-write
mapping (dvpp.ring.Ring.private_view), and the slot's lease lasts as long as
the tensor or anything sharing its storage (views, slices, a DLPack
capsule) lives; it ends when they are collected, or at once on
``release()``. In-place writes (``x.sub_()``, a model's ``normalize_``)
copy only the pages they touch, into this process: the daemon's memory,
other consumers of the ring and the next result in the slot never see
them. Reading costs nothing more than a read-only view.
"""

import torch

from ..ring import Result


def as_tensor(result):
    """A torch.Tensor over @result's ring slot (see the module docstring):
    the shape and dtype of the result's tensor (a batch's N x C x H x W, a
    video frame's pixels or tensor). A list or tuple of results gives a
    list of tensors. Inline results give a tensor of a copy of their bytes."""
    if isinstance(result, (list, tuple)):
        return [as_tensor(r) for r in result]
    if not isinstance(result, Result):
        raise TypeError(f"as_tensor takes a dvpp Result (or a list of them), not "
                        f"{type(result).__name__}")
    return torch.from_numpy(result.leased_array())


def release(result):
    """End @result's lease now (SlotRelease): tensors made of it must not be
    used afterwards (their bytes may be the next job's). A list releases
    each."""
    if isinstance(result, (list, tuple)):
        for r in result:
            release(r)
        return
    result.release()
