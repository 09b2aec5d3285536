"""Array-of-bytes patterns in Cheat Engine syntax: "48 8B ?? 4? ?A".

`??` or `?` matches any byte; `4?` and `?A` match one nibble. A pattern compiles to
byte values and masks, plus its longest run of fully literal bytes: the scanner looks for
that run with a fast substring search and verifies the rest only where it occurs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(r"^[0-9A-Fa-f?]{1,2}$")


class PatternError(ValueError):
    """A pattern that cannot be parsed; the message points at the offending token."""


@dataclass(frozen=True)
class Pattern:
    text: str
    values: bytes
    masks: bytes
    anchor: bytes          # longest run of literal bytes
    anchor_offset: int     # where that run starts inside the pattern

    def __len__(self) -> int:
        return len(self.values)

    @property
    def literal(self) -> bool:
        return all(m == 0xFF for m in self.masks)

    def matches_at(self, data: bytes | bytearray | memoryview, position: int) -> bool:
        if position < 0 or position + len(self.values) > len(data):
            return False
        for value, mask, index in zip(self.values, self.masks, range(position, position + len(self.values))):
            if data[index] & mask != value:
                return False
        return True


def parse_pattern(text: str) -> Pattern:
    if not isinstance(text, str):
        raise PatternError(f"a pattern must be text such as '48 8B ?? 05', got {type(text).__name__}")
    tokens = text.split()
    if not tokens:
        raise PatternError("the pattern is empty; write hex bytes separated by spaces, e.g. '48 8B ?? 05'")
    values, masks = bytearray(), bytearray()
    for index, token in enumerate(tokens):
        if not _TOKEN.match(token):
            where = f"token {index + 1} ({token!r})"
            hint = "each token is two hex digits, '??' or '?', or a nibble wildcard such as '4?' or '?A'"
            if len(token) > 2 and all(c in "0123456789abcdefABCDEF" for c in token):
                hint = "separate bytes with spaces (e.g. '48 8B' rather than '488B')"
            raise PatternError(f"bad pattern {text!r}: {where} is not a byte: {hint}")
        if token in ("?", "??"):
            values.append(0)
            masks.append(0)
            continue
        if len(token) == 1:
            raise PatternError(f"bad pattern {text!r}: token {index + 1} ({token!r}) has one hex digit; "
                               "write it as two, e.g. '0" + token + "'")
        high, low = token[0], token[1]
        value = (0 if high == "?" else int(high, 16) << 4) | (0 if low == "?" else int(low, 16))
        mask = (0 if high == "?" else 0xF0) | (0 if low == "?" else 0x0F)
        values.append(value)
        masks.append(mask)
    if not any(masks):
        raise PatternError(f"bad pattern {text!r}: it is all wildcards and would match everywhere")
    best_start, best_length, start = 0, 0, None
    for i, mask in enumerate([*masks, 0]):
        if mask == 0xFF:
            start = i if start is None else start
        elif start is not None:
            if i - start > best_length:
                best_start, best_length = start, i - start
            start = None
    return Pattern(text=" ".join(tokens), values=bytes(values), masks=bytes(masks),
                   anchor=bytes(values[best_start:best_start + best_length]), anchor_offset=best_start)
