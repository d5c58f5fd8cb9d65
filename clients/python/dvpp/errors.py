"""dvpp.errors: the exceptions of the client and the status table they use.

Every error of this package is a DvppError: the daemon's refusals and
failures (an ``Error`` message or a failed ``Result``) and this library's
own (ProtocolError, LeaseError, Disconnected). Import them from ``dvpp``.
"""

# core/dvpp_status.h
STATUS = {
    "OK": 0, "EINVAL": -1, "ENOMEM": -2, "EAGAIN": -3, "ELIMIT": -4, "ECORRUPT": -5,
    "EUNSUPPORTED": -6, "EFORMAT": -7, "EOVERFLOW": -8, "ECODEC": -9, "EIO": -10,
    "ESYS": -11, "ESTRIDE": -12, "ENOSPC": -13, "ECANCELED": -14, "ETIMEDOUT": -15,
    "ENOTFOUND": -16, "EBUSY": -17, "EPROFILE": -18,
}


class DvppError(Exception):
    """A refusal or failure reported by dvppd (an ``Error`` message or a
    failed ``Result``), or by this library. ``status`` is the negative
    dvpp_status, ``code`` its name ("EINVAL", "EAGAIN", ...), ``field`` the
    message field or spec key at fault; ``result`` the failed Result, if
    any."""

    def __init__(self, status, code, message="", field="", result=None):
        self.status = int(status)
        self.code = code or ""
        self.message = message or ""
        self.field = field or ""
        self.result = result
        text = f"{self.code or self.status}: {self.message}"
        if self.field:
            text += f" (field {self.field})"
        super().__init__(text)


class ProtocolError(DvppError):
    """The daemon sent something this client cannot accept (an undecodable
    packet, a bad ring, an unexpected answer)."""

    def __init__(self, message, field=""):
        super().__init__(STATUS["EIO"], "EIO", message, field)


class LeaseError(DvppError, ValueError):
    """A ring result's payload asked for when the slot is no longer the
    caller's: ``reason`` is "released" (``release()`` was called),
    "expired" (the daemon took the slot back after its lease timeout: the
    descriptor shows another generation or a free slot) or "closed" (the
    ring, or the client, was closed). A ValueError too, as the "slot was
    released" error before it."""

    def __init__(self, reason, message):
        self.reason = reason
        super().__init__(STATUS["EINVAL"], "EINVAL", message, "lease")


class Disconnected(DvppError):
    """The connection is gone (closed by dvppd, refused, or closed here).
    ``last_error`` is the Error dvppd sent before dropping it, if any."""

    def __init__(self, message, last_error=None):
        self.last_error = last_error
        if last_error is not None:
            message += f" (last error: {last_error})"
        super().__init__(STATUS["EIO"], "EIO", message)


def _error_from(msg, result=None):
    """The DvppError of an ``Error`` message or a failed Result's fields."""
    return DvppError(msg.status, msg.code, msg.message, msg.field, result)
