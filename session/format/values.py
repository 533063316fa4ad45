"""How the recorded texts write values: bytes per dtype, and a call's arguments (or a line's statements) split at top-level separators."""

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


def split_args(text: str, sep: str = ",") -> list[str]:
    """The top-level ``sep``-separated items of ``text`` (not inside ``()``, ``[]``, ``{}`` or a quoted string),
    each stripped: a call's argument text, ``"buf0, (4, 8), 'a,b'"`` -> ``["buf0", "(4, 8)", "'a,b'"]``, or a
    wrapper line's statements (``sep=";"``).  An empty item between two separators stays (``""``); a trailing
    empty one does not.  A quote escapes with a backslash (C++ ``'\\''``); a ``#`` outside brackets and quotes ends
    the text (a Python wrapper line's comment: ``"buf1 = buf0; del buf0  # reuse"`` -> ``["buf1 = buf0", "del
    buf0"]``).  The wrapper parsers (tracer.codeparse, tracer.codeparse_cpp) and the memory plan (session.memory)
    share it."""
    out, depth, cur, quote, escaped = [], 0, [], "", False
    for ch in text:
        if quote:
            cur.append(ch)
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = ""
            continue
        if ch in "'\"":
            quote = ch
        elif ch == "#" and depth == 0:
            break
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
            continue
        cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out
