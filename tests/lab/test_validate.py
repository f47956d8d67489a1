"""`mrclab validate` on emulated labs: the shipped regression (BFD relaxed from 300 ms to 1 s) is
caught on the shipped scenario (exit 1, routing's detection named, RC's recovery longer, after the extra runs
it takes to be sure); a change of comments only passes in every one of several repeated
validations (no false alarm on a noisy machine;
the two lab files share a name, so they take turns being deployed); Ctrl-C during a drill
reverts its faults and destroys both labs; bad labs are refused before anything is deployed."""
import json
import os
import signal
import subprocess

from conftest import MRCLAB, ROOT, STATE, assert_nothing_left, lab_file, mrclab, wait_for

BASE = f"t-val-{os.getpid() % 10000}"      # renamed copies: never a user's lab
SLOW = f"t-val-s-{os.getpid() % 10000}"


def validate(*args, timeout=1500):
    return subprocess.run([MRCLAB, "validate", *map(str, args)], capture_output=True, text=True, timeout=timeout)


def test_relaxed_bfd_is_a_regression_of_rc_not_of_mrc(tmp_path):
    base = lab_file(tmp_path, BASE)
    slow = lab_file(tmp_path, SLOW, base="clos2-slow-bfd.yaml")
    out = tmp_path / "v"
    proc = validate("--baseline", base, "--candidate", slow, ROOT / "scenarios" / "validate-silent-spine.yaml",
                    "--runs", "5", "--max-runs", "8", "--out", out)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    v = json.loads((out / "validation.json").read_text())
    assert v["scenarios"][0]["runs_per_lab"] == 8  # 5 runs looked worse; 8 runs per lab said so
    figures = {(f["transport"], f["figure"]): f for f in v["scenarios"][0]["figures"]}
    worse = {key for key, f in figures.items() if f["verdict"] == "worse"}
    # Routing sees the silent spine ~2 s later (in nearly every run: worse for both transports),
    # and RC (ECMP) waits that much longer: its worst recovery moves by more than half (whether
    # 8 runs of its bimodal recovery also reach the corrected level varies from run to run).
    assert ("mrc", "routing detect #0 blackhole") in worse, proc.stdout
    assert any(key[0] == "rc" and key[1].startswith("routing detect") for key in worse), proc.stdout
    assert figures[("rc", "worst recovery")]["change_percent"] > 50, figures[("rc", "worst recovery")]
    # MRC sprays around the dead spine on its own: its training figures are not worse.
    assert not {key for key in worse if key[0] == "mrc" and not key[1].startswith("routing")}, proc.stdout
    assert "worse: rc: routing detect" in proc.stdout
    for name in (BASE, SLOW):
        assert_nothing_left(name)


def test_a_comments_only_change_passes_every_time(tmp_path):
    base = lab_file(tmp_path, BASE)
    (tmp_path / "candidate").mkdir()
    changed = tmp_path / "candidate" / base.name
    changed.write_text("# Reviewed 2026-11: no functional change.\n" +
                       base.read_text().replace("# ", "# (reworded) ") + "# end of file\n")
    scenario = tmp_path / "quick.yaml"
    scenario.write_text(
        "name: quick\nlab: clos2\nseed: 3\njob:\n  collectives: [{kind: all_reduce, size: 256KiB}]\n"
        "  compute: 20ms\n  warmup_steps: 2\n  baseline_steps: 5\n  tail_steps: 5\n"
        "transports:\n  - {name: mrc, transport: mrc, ev_mode: srv6, evs: 16}\n"
        "  - {name: rc, transport: rc, ev_mode: udp, ack_timeout: 500ms}\n"
        "faults:\n  - {at: 0.3s, kind: blackhole, target: p0-leaf0:spine0, duration: 1.5s}\n"
        "  - {at: 0.3s, kind: blackhole, target: p1-leaf2:spine1, duration: 1.5s}\n"
        "slos:\n  - {slo: no_interruption, transport: mrc}\nmax_duration: 40s\n")
    for attempt in range(3):
        out = tmp_path / f"v{attempt}"
        proc = validate("--baseline", base, "--candidate", changed, scenario, "--runs", "5", "--out", out)
        assert proc.returncode in (0, 3), f"validation {attempt + 1}: {proc.stdout}{proc.stderr}"
        v = json.loads((out / "validation.json").read_text())
        assert not [f for s in v["scenarios"] for f in s["figures"] if f["verdict"] == "worse"], proc.stdout
        # Same name: they took turns (A B, B A, A B, ...: deployed whenever the other one ran last).
        sides = [r["side"] for r in v["scenarios"][0]["runs"]]
        turns = sum(1 for i, side in enumerate(sides) if side == "candidate" and (i == 0 or sides[i - 1] != side))
        assert turns >= 3 and proc.stderr.count(f"deploying candidate lab {BASE}") == turns, proc.stderr
        assert_nothing_left(BASE)


def test_ctrl_c_reverts_the_running_drill_and_destroys_both_labs(tmp_path):
    base = lab_file(tmp_path, BASE)
    slow = lab_file(tmp_path, SLOW, base="clos2-slow-bfd.yaml")
    proc = subprocess.Popen([MRCLAB, "validate", "--baseline", base, "--candidate", slow, "--out", tmp_path / "v",
                             ROOT / "scenarios" / "validate-silent-spine.yaml"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        # Interrupt while the first drill has its faults applied (they start 0.5 s into the schedule).
        journal = STATE / BASE / "faults.jsonl"
        wait_for(lambda: journal.exists() and '"op":"apply"' in journal.read_text(), timeout=120,
                 what="the first drill's faults")
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 130, err
    assert "interrupted" in err.strip().splitlines()[-1]
    for name in (BASE, SLOW):
        assert_nothing_left(name)


def test_labs_are_refused_before_anything_is_deployed(tmp_path):
    base = lab_file(tmp_path, BASE)
    scenario = ROOT / "scenarios" / "validate-silent-spine.yaml"
    proc = validate("--baseline", base, "--candidate", "no-such-lab", scenario, "--out", tmp_path / "v")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        "mrclab validate: error: --candidate no-such-lab: neither a lab file nor a deployed lab (mrclab list "
        "shows them)")
    small = lab_file(tmp_path, SLOW, **{"leaves_per_plane: 4": "leaves_per_plane: 2", "hosts: 8": "hosts: 4"})
    proc = validate("--baseline", base, "--candidate", small, scenario, "--out", tmp_path / "v")
    assert proc.returncode == 2
    last = proc.stderr.strip().splitlines()[-1]
    assert "validate-silent-spine.yaml" in last and "p0-leaf2" in last and f"--candidate {small}" in last, last
    assert not (tmp_path / "v").exists()
    # A lab already deployed is the user's: validate neither redeploys nor destroys it.
    mrclab("deploy", base, "--quiet")
    try:
        proc = validate("--baseline", base, "--candidate", base, scenario, "--out", tmp_path / "v")
        assert proc.returncode == 2
        assert proc.stderr.strip().splitlines()[-1].startswith(
            f"mrclab validate: error: --baseline {base}: lab '{BASE}' is already deployed")
        proc = validate("--baseline", BASE, "--candidate", BASE, scenario, "--out", tmp_path / "v")
        assert proc.returncode == 2
        assert proc.stderr.strip().splitlines()[-1].endswith(f"the same deployed lab {BASE}")
        assert (STATE / BASE).exists()
    finally:
        mrclab("destroy", BASE)
    for name in (BASE, SLOW):
        assert_nothing_left(name)
