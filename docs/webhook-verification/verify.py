import hashlib
import hmac
import time


def verify_shiri_signature(raw_body: bytes, signature_header: str, secret: str, tolerance_seconds: int = 300) -> bool:
    """True when raw_body was signed by Shiri with secret, less than tolerance_seconds ago."""
    timestamp = None
    signatures = []
    for part in (signature_header or "").split(","):
        key, _, value = part.partition("=")
        if key == "t" and value.isascii() and value.isdigit():
            timestamp = int(value)
        elif key == "v1" and value:
            signatures.append(value.lower().encode())
    if timestamp is None or abs(time.time() - timestamp) > tolerance_seconds:
        return False  # no timestamp, or too old: a replay
    signed = str(timestamp).encode() + b"." + raw_body
    expected = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest().encode()
    # Any v1 will do: during a secret rotation there is one per secret, the new one first.
    return any(hmac.compare_digest(expected, s) for s in signatures)
