#!/usr/bin/python3
"""Fails when a file of the sans-I/O MRC core includes what the core must not use.

The core owns no socket, clock, thread, file or global (see mrc/README.md): every header it
includes is either its own (mrc/core/...) or a standard header on the allowed list below.
Tests (*_test.cc) may use drivers and files; they are not part of the library.

usage: check_purity.py CORE_DIR    (exit 0 pure, 1 with one line per offending include)
"""
import pathlib
import re
import sys

ALLOWED_STD = {
    "algorithm", "array", "bit", "cassert", "cmath", "compare", "cstddef", "cstdint", "cstring",
    "deque", "functional", "initializer_list", "iterator", "limits", "map", "memory", "numeric", "optional",
    "set", "span", "stdexcept", "string", "string_view", "tuple", "type_traits", "unordered_map",
    "unordered_set", "utility", "variant", "vector",
    "immintrin.h",  # carry-less multiplication intrinsics (ICRC)
    "zlib.h",       # CRC-32 fallback: a pure function
}
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def offences(core: pathlib.Path):
    for path in sorted(core.iterdir()):
        if path.suffix not in (".h", ".cc") or path.stem.endswith("_test"):
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            kind, header = m.groups()
            ok = header.startswith("mrc/core/") if kind == '"' else header in ALLOWED_STD
            if not ok:
                yield f"{path.name}:{number}: includes {header}: the core may use only mrc/core/ and pure standard headers"


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    found = list(offences(pathlib.Path(sys.argv[1])))
    for line in found:
        print(line)
    print(f"mrc core purity: {len(found)} offending include(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
