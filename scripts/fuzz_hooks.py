"""Schemathesis hooks of `npm run fuzz` (scripts/fuzz.ts).

POST /as4 takes `multipart/related` (an AS4 message: a SOAP 1.2 envelope and an encrypted
attachment), for which schemathesis has no serializer. This one sends a real AS4 message written by
scripts/fuzz.ts (FUZZ_AS4_TEMPLATE_DIR: message.bin and content-type.txt), mutated with each
generated value: spliced in at a position, written over the bytes at a position, in place of the
SOAP part, or in place of the attachment; an empty value sends the message unchanged. The position
and the mutation derive from the value, so a run is reproducible with its seed.
"""
import hashlib
import os

from schemathesis.transport import register_serializer

_DIR = os.environ["FUZZ_AS4_TEMPLATE_DIR"]
with open(os.path.join(_DIR, "message.bin"), "rb") as f:
    TEMPLATE = f.read()
with open(os.path.join(_DIR, "content-type.txt"), encoding="utf-8") as f:
    CONTENT_TYPE = f.read().strip()

# The parts of the template: the SOAP envelope, then the attachment (bodies between header and boundary).
_BOUNDARY = CONTENT_TYPE.split('boundary="', 1)[1].split('"', 1)[0].encode() if 'boundary="' in CONTENT_TYPE else CONTENT_TYPE.split("boundary=", 1)[1].split(";", 1)[0].encode()
_DELIMITER = b"\r\n--" + _BOUNDARY


def _part_bodies(message: bytes) -> list[tuple[int, int]]:
    """(start, end) of each part's body in the message."""
    spans = []
    at = message.find(b"--" + _BOUNDARY)
    while at >= 0:
        head_end = message.find(b"\r\n\r\n", at)
        if head_end < 0:
            break
        end = message.find(_DELIMITER, head_end)
        if end < 0:
            break
        spans.append((head_end + 4, end))
        at = end + 2
    return spans


_PARTS = _part_bodies(TEMPLATE)
assert len(_PARTS) == 2, f"the AS4 template has {len(_PARTS)} parts, expected 2"


def _bytes(value) -> bytes:
    if value is None:
        return b""
    if isinstance(value, bytes):
        return value
    if hasattr(value, "data"):  # schemathesis' Binary
        return _bytes(value.data)
    return str(value).encode("utf-8", "surrogatepass")


def _mutate(value: bytes) -> bytes:
    if not value:
        return TEMPLATE
    digest = hashlib.sha256(value).digest()
    mode = digest[0] % 4
    position = int.from_bytes(digest[1:5], "big") % len(TEMPLATE)
    if mode == 0:
        return TEMPLATE[:position] + value + TEMPLATE[position:]
    if mode == 1:
        return TEMPLATE[:position] + value + TEMPLATE[position + len(value):]
    (soap_start, soap_end), (att_start, att_end) = _PARTS
    if mode == 2:
        return TEMPLATE[:soap_start] + value + TEMPLATE[soap_end:]
    return TEMPLATE[:att_start] + value + TEMPLATE[att_end:]


def as4_message(ctx, value):
    return {"data": _mutate(_bytes(value)), "headers": {"Content-Type": CONTENT_TYPE}}


register_serializer(as4_message, "multipart/related")
