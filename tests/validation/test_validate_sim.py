"""`mrclab validate` on simulated drills (--backend ns3; no root): a candidate lab with slower
links is a regression naming step time (exit 1, JUnit failures, report; 5 runs per lab look
worse, so it runs 10 before it says so), the same lab against
itself is no regression with every figure the same (a simulation is deterministic per seed, and
both labs get the same seeds), the Python API, and bad input (exit 2, one line naming what)."""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MRCLAB = os.environ.get("MRCLAB", str(ROOT / "build" / "mrclab"))
LAB = ROOT / "labs" / "clos2.yaml"


def mrclab(*args, timeout=600):
    return subprocess.run([MRCLAB, *map(str, args)], capture_output=True, text=True, timeout=timeout)


def scenario(tmp_path, name="tiny", backend=""):
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"name: {name}\nlab: {LAB}\nseed: 5\n" + (f"backend: {backend}\n" if backend else "") +
                    "job:\n  hosts: all\n  collectives: [{kind: all_reduce, size: 128KiB}]\n  compute: 5ms\n"
                    "  step_timeout: 2s\n  warmup_steps: 1\n  baseline_steps: 4\n  tail_steps: 4\n"
                    "transports:\n  - {name: mrc, transport: mrc, ev_mode: srv6, evs: 16}\n"
                    "faults:\n  - {at: 20ms, kind: loss, target: p0-leaf0:spine0, rate: 5%, duration: 50ms}\n"
                    "slos:\n  - {slo: no_interruption, transport: mrc}\nmax_duration: 20s\n")
    return path


def slow_lab(tmp_path):
    path = tmp_path / "clos2-slow.yaml"
    path.write_text(LAB.read_text().replace("name: clos2", "name: clos2-slow").replace("1Gbit", "250Mbit"))
    return path


def test_slower_links_are_a_regression_named_in_every_output(tmp_path):
    out = tmp_path / "v"
    proc = mrclab("validate", "--baseline", LAB, "--candidate", slow_lab(tmp_path), scenario(tmp_path),
                  "--backend", "ns3", "--runs", "5", "--out", out)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "worse: mrc: step time p50" in proc.stdout
    assert "verdict: REGRESSION" in proc.stdout
    assert "validate: tiny: run 5/5 on the candidate lab" in proc.stderr  # progress
    assert "look worse before correcting for the number of figures: 5 more runs per lab" in proc.stderr
    assert "validate: tiny: run 10/10 on the candidate lab" in proc.stderr
    v = json.loads((out / "validation.json").read_text())
    assert v["verdict"] == "regression" and v["exit_status"] == 1
    fig = next(f for f in v["scenarios"][0]["figures"] if f["figure"] == "step time p50")
    assert fig["verdict"] == "worse" and fig["change_percent"] > 50 and fig["confidence"] > 0.99
    assert len(fig["baseline"]) == 10 and len(fig["candidate"]) == 10
    assert v["scenarios"][0]["runs_per_lab"] == 10 and fig["p_worse"] <= fig["level"] < v["alpha"]
    seeds = sorted((r["side"], r["seed"]) for r in v["scenarios"][0]["runs"])
    assert seeds == sorted([(side, 5 + i) for side in ("baseline", "candidate") for i in range(10)])
    cases = ET.parse(out / "junit.xml").getroot().findall(".//testcase")
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    assert "mrc: step time p50" in failed and len(cases) == len(v["scenarios"][0]["figures"])
    html = (out / "validation.html").read_text()
    assert "Regression:" in html and "first pair of runs" in html and "<img" in html
    assert (out / "validation.md").read_text().count("validation-files/spread-tiny.png") == 1


def test_the_same_lab_is_no_regression(tmp_path):
    proc = mrclab("validate", "--baseline", LAB, "--candidate", LAB, scenario(tmp_path), "--backend", "ns3",
                  "--runs", "3", "--out", tmp_path / "v", "--json", "-q")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    v = json.loads(proc.stdout)
    assert v["verdict"] == "pass" and v["scenarios"][0]["runs_per_lab"] == 3  # nothing looked worse
    figures = v["scenarios"][0]["figures"]
    assert figures and all(f["verdict"] == "same" and f["baseline"] == f["candidate"] for f in figures)


def test_too_few_runs_to_show_a_regression_say_how_many_would(tmp_path):
    """Every run conclusive (a simulation), but 5 per lab cannot reach the corrected level: the
    verdict is inconclusive (exit 3) and names the --max-runs that can, not a busy machine."""
    proc = mrclab("validate", "--baseline", LAB, "--candidate", slow_lab(tmp_path), scenario(tmp_path),
                  "--backend", "ns3", "--runs", "3", "--max-runs", "5", "--out", tmp_path / "v", "-q")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "5 + 5 conclusive runs cannot show it at p ≤ " in proc.stdout
    assert "(the least p of so few runs is 0.004); run with --max-runs 6 or more" in proc.stdout
    assert "bottleneck" not in proc.stdout and "quieter machine" not in proc.stdout


def test_a_scenario_meant_for_simulation_is_validated_in_simulation(tmp_path):
    """Without --backend, the scenarios' backend: key decides, as it does for drill; scenarios
    that ask for different backends are refused (exit 2) before anything runs."""
    sim = scenario(tmp_path, "sim", backend="ns3")
    proc = mrclab("validate", "--baseline", LAB, "--candidate", LAB, sim, "--runs", "2", "--out", tmp_path / "v",
                  "--json", "-q")
    assert proc.returncode == 0, proc.stderr
    v = json.loads(proc.stdout)
    assert v["backend"] == "ns3" and v["verdict"] == "pass"
    proc = mrclab("validate", "--baseline", LAB, "--candidate", LAB, sim, scenario(tmp_path), "--out", tmp_path / "w")
    assert proc.returncode == 2 and not (tmp_path / "w").exists()
    assert proc.stderr.strip() == (f"mrclab validate: error: --backend: the scenarios are meant for different backends "
                                   f"({sim}: ns3, {tmp_path / 'tiny.yaml'}: netns); give --backend, or validate them "
                                   "separately")


def test_python_api(tmp_path):
    sys.path.insert(0, str(ROOT / "build" / "python"))
    import mrclab as api
    v = api.validate(LAB, slow_lab(tmp_path), [scenario(tmp_path)], runs=5, backend="ns3", out=tmp_path / "v")
    assert v["verdict"] == "regression"
    assert "tiny: mrc: step time p50" in api.worse_figures(v)
    try:
        api.validate(LAB, tmp_path / "missing.yaml", [scenario(tmp_path)], backend="ns3")
    except api.ValidateError as e:
        assert "--candidate" in str(e) and "missing.yaml" in str(e)
    else:
        raise AssertionError("a missing lab file was accepted")


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    s = scenario(tmp_path)
    broken = tmp_path / "broken.yaml"
    broken.write_text("name: broken\nclos: {planes: 0}\n")
    cases = [
        (["--baseline", LAB, "--candidate", tmp_path / "nope.yaml", s, "--backend", "ns3"],
         "--candidate", "no such lab file"),
        (["--baseline", LAB, "--candidate", broken, s, "--backend", "ns3"], "--candidate", "planes"),
        (["--baseline", LAB, "--candidate", LAB, tmp_path / "none.yaml", "--backend", "ns3"], "none.yaml",
         "no such scenario file"),
        (["--baseline", LAB, "--candidate", LAB, s, "--runs", "1"], "--runs 1", "2 to 100"),
        (["--baseline", LAB, "--candidate", LAB, s, "--runs", "4", "--max-runs", "3"], "--max-runs 3",
         "must be --runs (4) to 200"),
        (["--baseline", LAB, "--candidate", LAB, s, "--alpha", "2"], "--alpha", "between 0 and 1"),
    ]
    for args, where, why in cases:
        proc = mrclab("validate", *args, "--out", tmp_path / "v")
        assert proc.returncode == 2, (args, proc.stdout, proc.stderr)
        last = proc.stderr.strip().splitlines()[-1]
        assert where in last and why in last, (args, last)
