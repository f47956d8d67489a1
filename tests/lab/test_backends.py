"""One scenario in both worlds: the emulated lab (netns) and its ns-3 simulation give the same
verdict per transport and per fault (MRC rides through a blackholed spine link, RC on its
pinned path does not), through the same run directory, and `mrclab compare` puts the two runs
side by side."""
import json

from conftest import judged_drill, lab_file, mrclab


def scenario(tmp_path, lab):
    # The default drill's blackhole (p1-leaf1:spine1, seed 7) crosses one of RC's pinned paths.
    text = (f"name: t-backends\nlab: {lab}\nseed: 7\njob:\n  hosts: all\n"
            "  collectives: [{kind: all_reduce, size: 256KiB}]\n  compute: 20ms\n  step_timeout: 3s\n"
            "  warmup_steps: 2\n  baseline_steps: 5\n  tail_steps: 5\n"
            "transports:\n  - {name: mrc, transport: mrc, ev_mode: srv6, evs: 32}\n"
            "  - {name: rc, transport: rc, ev_mode: srv6, evs: 32}\n"
            "faults:\n  - {at: 500ms, kind: blackhole, target: p1-leaf1:spine1, duration: 2s}\n"
            "slos:\n  - {slo: no_interruption, transport: mrc}\n  - {slo: bytes_lost, max: 0}\nmax_duration: 60s\n")
    path = tmp_path / "scenario.yaml"
    path.write_text(text)
    return path


def run(path, out, backend):
    def attempt(n):
        proc = mrclab("drill", path, "--backend", backend, "--out", out / str(n), "--metrics", "off", "--json",
                      "--quiet", check=False, timeout=400)
        return proc, json.loads(proc.stdout) if proc.stdout else {}
    proc, result = judged_drill(attempt)
    assert proc.returncode in (0, 1), (proc.stderr, result.get("emulation_fidelity"))
    return result, {t["name"]: t for t in result["transports"]}


def test_same_verdicts_in_the_emulated_lab_and_the_simulation(tmp_path):
    path = scenario(tmp_path, lab_file(tmp_path, "t-backends"))
    emulated, e = run(path, tmp_path / "netns", "netns")
    simulated, s = run(path, tmp_path / "ns3", "ns3")
    assert emulated["backend"] == "netns" and simulated["backend"] == "ns3"
    for name in ("mrc", "rc"):
        assert e[name]["rode_through"] == s[name]["rode_through"], (name, e[name]["job"], s[name]["job"])
    assert e["mrc"]["rode_through"] and not e["rc"]["rode_through"]
    assert [f["kind"] for f in e["mrc"]["faults"]] == [f["kind"] for f in s["mrc"]["faults"]] == ["blackhole"]
    assert emulated["verdict"] == simulated["verdict"] == "pass"
    out = tmp_path / "cmp"
    mrclab("compare", emulated["run_dir"], simulated["run_dir"], "--out", out)
    text = (out / "compare.md").read_text()
    assert "netns" in text and "ns3" in text
