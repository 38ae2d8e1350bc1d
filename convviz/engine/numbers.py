"""A number as it enters convviz, by whatever door: one reader, its rules and its messages.

Two spellings. **Strict**, for what a program writes (a link's field, the command line, a Python
argument): ASCII digits, '-', '.' and 'e', as `fields.number_text` writes them; a whole number is
digits and '-' alone; a Python argument is a number of its kind (an int where a whole number is
meant: never 2.0, '2' or True). **Typed**, for what a person types into a field (a grid's cell, the
learning rate, the target): also a decimal comma ('1,5'), the minus sign '−' (U+2212), a leading
'+' and spaces around. Both refuse other digits ('٣', '３'), '_', NaN and infinity, a value outside
the field's range and text over `MAX_CHARS`, each with one message that names the field, the value
and the range (`ConvSpecError`, a ValueError).

>>> read("1,5", "η", Range(0, 1000, above=True), typed=True)
1.5
>>> read("12", "H", Range(1, 128, whole=True), link=True)
12

and `H=2.0` in a link is refused with "`H=2.0` is not a whole number (digits 0-9 only): H must
be a whole number in 1…128".
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from numbers import Integral, Real

from convviz.engine.text import MINUS, echo


class ConvSpecError(ValueError):
    """A value or a convolution that cannot be computed; the message names what and a way out."""


MAX_CHARS = 32  # the text of one number ('-1.2345678901234567e-123' is 24 characters)
_STRICT = re.compile(r"-?([0-9]+(\.[0-9]*)?|\.[0-9]+)(e[-+]?[0-9]+)?", re.ASCII | re.IGNORECASE)
_WHOLE = re.compile(r"-?[0-9]+", re.ASCII)
_NON_FINITE = re.compile(r"[-+]?(nan|inf|infinity)", re.IGNORECASE)


def _g(v: float) -> str:
    """A bound as a message writes it: 1000, 0.999, 1e9, -1e9."""
    return str(v) if isinstance(v, int) else f"{v:g}".replace("e+0", "e").replace("e+", "e")


@dataclass(frozen=True)
class Range:
    """What a field takes: a number (a whole one if `whole`) from lo to hi, lo itself excluded
    when `above` (a learning rate of 0)."""

    lo: float
    hi: float
    whole: bool = False
    above: bool = False

    def __str__(self) -> str:
        if self.whole:
            return f"a whole number in {_g(self.lo)}…{_g(self.hi)}"
        if self.above:
            return f"a number above {_g(self.lo)}, up to {_g(self.hi)}"
        return f"a number in {_g(self.lo)}…{_g(self.hi)}"

    def check(self, value, refuse) -> int | float:
        """The value if it lies in the range; else `refuse(why)`'s error."""
        if value < self.lo or (self.above and value <= self.lo):
            raise refuse("is too small")
        if value > self.hi:
            raise refuse("is too large")
        return value


def refusal(subject: str, why: str, field: str, rng: Range) -> ConvSpecError:
    """The one message of a refused value: '{subject} {why}: {field} must be {range}'."""
    return ConvSpecError(f"{subject} {why}: {field} must be {rng}")


def read(
    text: str, name: str, rng: Range, *, typed: bool = False, link: bool = False, each: bool = False
) -> int | float:
    """A number from text, strict or (`typed`) as a person types it; ConvSpecError if refused.

    name : the field as the reader knows it ('H', 'η', 'input x'); link : quote it as a link
    writes it (`H=٣`); each : the text is one value of a list named `name`.
    """
    text = str(text)
    field = f"{name} value" if each else name
    subject = echo(f"{name}={text}") if link else f"{field} {echo(text)}"

    def refuse(why: str) -> ConvSpecError:
        return refusal(subject, why, f"each {field}" if each else field, rng)

    if not text.strip() and not link:
        raise refusal(field, "is empty", f"each {field}" if each else field, rng)
    if len(text) > MAX_CHARS:
        raise refuse(f"is too long ({len(text):,} characters; a number has at most {MAX_CHARS})")
    plain = _plain(text) if typed else text
    if _NON_FINITE.fullmatch(plain):
        raise refuse("is not a finite number")
    if rng.whole and not _WHOLE.fullmatch(plain):
        raise refuse("is not a whole number (digits 0-9 only)")
    if not _STRICT.fullmatch(plain):
        example = "e.g. 12, −3.5, 1,5 or 1e3" if typed else "digits 0-9, '.', '-', 'e' only"
        raise refuse(f"is not a number ({example})")
    return rng.check(int(plain) if rng.whole else float(plain), refuse)


def _plain(typed: str) -> str:
    """A typed number in the strict spelling: spaces around, a leading '+', '−' and one decimal
    comma read as a link writes them (anything else is left for the strict reader to refuse)."""
    plain = typed.strip().replace(MINUS, "-")
    if plain.count(",") == 1 and "." not in plain:
        plain = plain.replace(",", ".")
    return plain[1:] if plain[:1] == "+" and plain[1:2] not in ("+", "-") else plain


def take(value, name: str, rng: Range) -> int | float:
    """A Python argument: an int (a whole-number field) or a real number, in the range; never a
    bool, a string, NaN or 2.0 for a whole number. ConvSpecError naming it if refused."""

    def refuse(why: str) -> ConvSpecError:
        return refusal(f"{name} {echo(repr(value))}", why, name, rng)

    if value is None:  # an emptied field, or an argument left None
        raise refusal(name, "is empty", name, rng)
    if isinstance(value, bool) or not isinstance(value, Integral if rng.whole else Real):
        kind = "an int" if rng.whole else "a real number"
        word = "whole number" if rng.whole else "number"
        raise refuse(f"is not a {word} (a {type(value).__name__}, not {kind})")
    if rng.whole:
        return rng.check(int(value), refuse)
    try:
        number = float(value)
    except OverflowError:  # an int past float's range
        raise refuse("is too large" if value > 0 else "is too small") from None
    if not math.isfinite(number):
        raise refuse("is not a finite number")
    return rng.check(number, refuse)
