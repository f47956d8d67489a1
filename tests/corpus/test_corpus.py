"""The malformed-input corpus: every file here is refused, before anything is made, with exit
status 2 and exactly the one line its first line expects:

    # expect: FIELD: REASON      ->  stderr "mrclab: error: <file>: FIELD: REASON"

(`<file>` is the path as given, relative to this folder; `{file}` in an expectation stands for
it). Lab files go through `mrclab deploy FILE --check`, scenarios through `mrclab drill FILE
--check`. The same files seed the lab and scenario fuzzers (emulator/fuzz, harness/fuzz)."""
import os
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
MRCLAB = os.environ.get("MRCLAB", str(ROOT / "build" / "mrclab"))
COMMANDS = {"labs": ["deploy", "{file}", "--check"], "scenarios": ["drill", "{file}", "--check"]}
CASES = sorted(str(p.relative_to(HERE)) for kind in COMMANDS for p in (HERE / kind).glob("*.yaml"))


def expectation(path):
    first = (HERE / path).read_text().split("\n", 1)[0]
    assert first.startswith("# expect: "), f"{path}: the first line must be '# expect: FIELD: REASON'"
    return first[len("# expect: "):].replace("{file}", path)


def test_the_corpus_covers_labs_and_scenarios():
    kinds = {Path(c).parts[0] for c in CASES}
    assert kinds == set(COMMANDS) and len(CASES) >= 60, CASES


@pytest.mark.parametrize("path", CASES)
def test_malformed_input_is_refused_with_its_one_line(path):
    args = [a.replace("{file}", path) for a in COMMANDS[Path(path).parts[0]]]
    proc = subprocess.run([MRCLAB, *args], cwd=HERE, capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout) == (2, ""), proc
    assert proc.stderr == f"mrclab: error: {path}: {expectation(path)}\n"
