"""How the recorded texts write values: bytes per dtype, and a call's arguments split at top-level commas."""

from __future__ import annotations

#: bytes per element, by the dtype's name as torch prints it (``torch.float32`` less ``torch.``, or its C
#: alias ``float`` / ``half`` / ``long``); the element sizes of ``torch.dtype.itemsize``
DTYPE_BYTES: dict[str, int] = {
    **dict.fromkeys(("float64", "double", "int64", "long", "complex64", "uint64"), 8), "complex128": 16,
    **dict.fromkeys(("float32", "float", "int32", "int", "uint32", "complex32"), 4),
    **dict.fromkeys(("float16", "half", "bfloat16", "int16", "short", "uint16"), 2),
    **dict.fromkeys(("int8", "uint8", "bool", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                     "float8_e5m2fnuz", "float8_e8m0fnu"), 1)}


def dtype_bytes(dtype: object) -> int | None:
    """Bytes per element of ``dtype`` (``"torch.float32"``, ``"float32"``, a ``torch.dtype``: its str),
    None for an unknown or missing one."""
    return DTYPE_BYTES.get(str(dtype or "").removeprefix("torch.")) if dtype else None


def split_args(text: str) -> list[str]:
    """A call's argument text split at its top-level commas (not inside ``()``, ``[]``, ``{}``),
    each stripped: ``"buf0, (4, 8), s0"`` -> ``["buf0", "(4, 8)", "s0"]``.  An empty item between two
    commas stays (``""``); a trailing empty one does not.  Quotes are not tracked."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out
