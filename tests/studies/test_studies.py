"""Every study at smoke size (`mrclab study NAME --smoke`): it runs end to end on a small fabric
and writes its table, plot and cells, with the command that made them."""
import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MRCLAB = os.environ.get("MRCLAB", str(ROOT / "build" / "mrclab"))


def study(*args, timeout=900):
    return subprocess.run([MRCLAB, "study", *map(str, args)], capture_output=True, text=True, timeout=timeout)


def test_ride_through_smoke(tmp_path):
    proc = study("ride-through", "--smoke", "--out", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(tmp_path / f"ride-through.{ext}") for ext in ("md", "png", "json")]
    assert "[6/6]" in proc.stderr  # one progress line per drill
    data = json.loads((tmp_path / "ride-through.json").read_text())
    assert data["setup"]["command"].startswith("mrclab study ride-through --smoke")
    cells = data["cells"]
    assert set(cells) == {"flap", "blackhole", "loss", "spine", "leaf", "plane"}
    for row in cells.values():
        assert set(row) == {"mrc-srv6", "mrc-udp", "rc", "rc-4qp"}
        for column in ("mrc-srv6", "mrc-udp"):  # MRC rides through every failure, nothing lost
            assert row[column]["rode_through"] == 1 and row[column]["bytes_lost"] == 0, (column, row[column])
    # Four QPs per peer over a 16-host ring put RC on every plane: a plane going down stops it.
    assert cells["plane"]["rc-4qp"]["rode_through"] == 0 and cells["plane"]["rc-4qp"]["interrupted_by"]
    md = (tmp_path / "ride-through.md").read_text()
    assert "| failure | MRC, srv6 EVs |" in md and "![" in md and "Regenerate: `mrclab study ride-through" in md
    assert (tmp_path / "ride-through.png").read_bytes()[:4] == b"\x89PNG"


def test_evs_smoke(tmp_path):
    proc = study("evs", "--smoke", "--out", tmp_path, "--quiet")
    assert proc.returncode == 0, proc.stderr
    data = json.loads((tmp_path / "evs.json").read_text())
    assert data["setup"]["evs_list"] == [8, 32] and data["setup"]["min_active"] == {"8": [1, 7], "32": [1, 28]}
    assert set(data["cells"]) == {"8-1", "8-7", "32-1", "32-28"}
    for row in ("8-1", "32-1"):  # the default floor: every failure ridden through, nothing lost
        for failure, c in data["cells"][row].items():
            assert c["rode_through"] == 1 and c["bytes_lost"] == 0, (row, failure, c)
    md = (tmp_path / "evs.md").read_text()
    assert "| EVs per QP | min_active |" in md and md.count("\n| 8 |") == 2


def test_collisions_smoke(tmp_path):
    proc = study("collisions", "--smoke", "--out", tmp_path, "--quiet")
    assert proc.returncode == 0, proc.stderr
    cells = json.loads((tmp_path / "collisions.json").read_text())["cells"]
    assert set(cells) == {"all_reduce", "all_to_all"}
    for row in cells.values():
        assert set(row) == {"rc-1qp", "rc-4qp", "mrc-udp", "mrc-srv6"}
        for c in row.values():
            assert c["state"] == "completed" and c["collective_seconds"] > 0 and c["hottest_over_mean"] >= 1, c
        # Spraying spreads the fabric's load more evenly than one path per QP.
        assert row["mrc-srv6"]["hottest_over_mean"] < row["rc-1qp"]["hottest_over_mean"], row
    assert "| collective | rc-1qp | rc-4qp | mrc-udp | mrc-srv6 |" in (tmp_path / "collisions.md").read_text()


def test_spraying_smoke(tmp_path):
    proc = study("spraying", "--smoke", "--out", tmp_path, "--quiet")
    assert proc.returncode == 0, proc.stderr
    cells = json.loads((tmp_path / "spraying.json").read_text())["cells"]
    fault_free, degraded, down = (f"all-to-all 1MiB, {c}" for c in
                                  ("fault-free", "plane 0 at 25Gbit", "4 links of plane 0 down"))
    assert set(cells) == {fault_free, degraded, down}
    for row in cells.values():
        assert set(row) == {"rc-1qp", "rc-4qp", "mrc-srv6"}
        mrc = row["mrc-srv6"]  # spraying completes under every condition, its ports queued something
        assert mrc["state"] == "completed" and mrc["collective_seconds"] > 0 and mrc["queue_peak_bytes"] > 0, row
    for c in cells[fault_free].values():
        assert c["state"] == "completed" and c["queue_peak_bytes"] > 0, c
    assert cells[fault_free]["mrc-srv6"]["busiest_over_mean"] < cells[fault_free]["rc-1qp"]["busiest_over_mean"]
    md = (tmp_path / "spraying.md").read_text()
    assert "| collective, condition | rc-1qp | rc-4qp | mrc-srv6 |" in md and "peak queue" in md


def test_study_help_and_bad_arguments(tmp_path):
    proc = study("--help")
    assert proc.returncode == 0 and "ride-through" in proc.stdout
    proc = study("no-such-study")
    assert proc.returncode == 2 and "invalid choice: 'no-such-study'" in proc.stderr
    proc = study("ride-through", "--hosts", "100", "--hosts-per-leaf", "32", "--out", tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == "mrclab study: error: --hosts 100 is not a multiple of --hosts-per-leaf 32\n"
    assert not list(tmp_path.iterdir())  # nothing written
    # An --out where the table cannot go is refused before the drills run, not after.
    (tmp_path / "a-file").write_text("")
    proc = study("ride-through", "--smoke", "--out", tmp_path / "a-file" / "out")
    assert proc.returncode == 2
    assert proc.stderr == f"mrclab study: error: --out {tmp_path}/a-file/out: {tmp_path}/a-file is not a directory\n"
    (tmp_path / "a-file").unlink()
    # A failure larger than a plane is refused (not shrunk to fit); not given, it fits the plane.
    small = ("--hosts", "32", "--hosts-per-leaf", "8", "--spines", "3", "--job-hosts", "8", "--out", tmp_path)
    proc = study("ride-through", "--failed-spines", "5", *small)
    assert proc.returncode == 2
    assert proc.stderr == "mrclab study: error: --failed-spines 5: must be 1 to the 3 spines of one plane\n"
    proc = study("spraying", "--links", "13", *small)
    assert proc.returncode == 2
    assert proc.stderr == "mrclab study: error: --links 13: must be 1 to the 12 leaf-spine links of one plane\n"
    # A "degraded" rate that would not slow the fabric's links is refused before any drill runs.
    for rate, reason in (("100Gbit", "must be above 0 and below the fabric's 100Gbit links"),
                         ("25gbit", "expected a rate such as 25Gbit (bit, kbit, Mbit, Gbit, Tbit)")):
        proc = study("spraying", "--degraded-rate", rate, *small)
        assert (proc.returncode, proc.stderr) == (2, f"mrclab study: error: --degraded-rate {rate}: {reason}\n")
    assert not list(tmp_path.iterdir())
    proc = study("evs", "--smoke", "--min-active", "1,300%", "--out", tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == "mrclab study: error: --min-active 1,300%: 300% is 24, outside 0..8 EVs\n"
