"""Names that look alike: one script per name, and a skeleton two look-alike names share.

A student may choose the name the public board shows; "Bоb" with a Cyrillic о reads as the
classmate bob. Unicode's answer (UTS #39) is two checks, both small enough to keep here:
- a name is written in one script (Latin, Cyrillic, Greek, ...; Han with Hiragana and Katakana,
  or with Hangul or Bopomofo, counts as one), digits and . _ - and spaces in any: no "Bоb";
- two names are confusable when their skeletons are equal: NFKC, the common Cyrillic and Greek
  look-alikes of Latin letters mapped to those letters, 0 to o, 1 and I to l, "rn" to m and "vv"
  to w, case-folded, and only letters and digits kept. The table is not Unicode's full one: it
  holds the letters that pass for Latin in the fonts a browser uses, which is what a board shows.
"""

from __future__ import annotations

import unicodedata

# Cyrillic and Greek letters that pass for Latin ones (upper and lower case), and Latin's own
LOOK_ALIKES = str.maketrans({
    **dict(zip("АВЕКМНОРСТУХЅІЈԚԜҮҺӀ", "ABEKMHOPCTYXSIJQWYhl", strict=True)),
    **dict(zip("аеорсухѕіјԁԛԝһӏүкмтвн", "aeopcyxsijdqwhlykmtbh", strict=True)),
    **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEZHIKMNOPTYX", strict=True)),
    **dict(zip("αορνικχυγωε", "aopvikxuywe", strict=True)),
    "0": "o", "1": "l", "I": "l",
})
SEQUENCES = (("rn", "m"), ("vv", "w"))
ONE_SCRIPT = (frozenset({"CJK", "HIRAGANA", "KATAKANA"}), frozenset({"CJK", "HANGUL"}),
              frozenset({"CJK", "BOPOMOFO"}))


def script_of(char: str) -> str | None:
    """The script a letter belongs to, by its Unicode name's first word (None: not a letter)."""
    if not char.isalpha():
        return None
    return unicodedata.name(char, "UNKNOWN").split()[0]


def scripts(name: str) -> set[str]:
    return {s for s in map(script_of, unicodedata.normalize("NFKC", name)) if s is not None}


def single_script(name: str) -> bool:
    """Whether the name's letters are of one script (or one of the usual CJK mixes)."""
    found = scripts(name)
    return len(found) <= 1 or any(found <= allowed for allowed in ONE_SCRIPT)


def skeleton(name: str) -> str:
    """The form two look-alike names share (see the module's docstring)."""
    text = unicodedata.normalize("NFKC", name).translate(LOOK_ALIKES).translate(LOOK_ALIKES)
    text = text.casefold()  # twice before: a Greek Ι becomes I, then l
    text = "".join(c for c in text if c.isalnum()).translate(LOOK_ALIKES)
    for seq, letter in SEQUENCES:
        text = text.replace(seq, letter)
    return text
