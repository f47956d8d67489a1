"""Simulated drills (`mrclab drill --backend ns3`): no root, no kernel state. Every fault kind
the simulation models has the expected outcome, the same seed gives the same events.jsonl byte
for byte, what only an emulated lab can do is refused by --check, and reports and comparisons
work on simulated runs."""
import json
import os
import re
import socket
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MRCLAB = os.environ.get("MRCLAB", str(ROOT / "build" / "mrclab"))
LAB = ROOT / "labs" / "clos2.yaml"


def mrclab(*args, timeout=600):
    return subprocess.run([MRCLAB, *map(str, args)], capture_output=True, text=True, timeout=timeout)


def kernel_lacks_srv6():
    """Whether this kernel refuses SRv6 uSID routes, as ctest's lab suites check it."""
    return subprocess.run([ROOT / "tests" / "skip_without_srv6.sh", "true"], capture_output=True).returncode == 77


def scenario(tmp_path, name, faults, transports=("mrc",), slos=None, backend="ns3", seed=3):
    """A short simulated drill on the default lab: a 256 KiB all-reduce over its 8 hosts."""
    lines = "".join(f"  - {{name: {t}, transport: {t}, ev_mode: srv6, evs: 32}}\n" for t in transports)
    slos = slos or ["{slo: no_interruption, transport: mrc}", "{slo: bytes_lost, max: 0, transport: mrc}"]
    text = (f"name: {name}\nlab: {LAB}\n" + (f"backend: {backend}\n" if backend else "") + f"seed: {seed}\n"
            "job:\n  hosts: all\n  collectives: [{kind: all_reduce, size: 256KiB}]\n  compute: 10ms\n"
            "  step_timeout: 2s\n  warmup_steps: 2\n  baseline_steps: 5\n  tail_steps: 5\n"
            f"transports:\n{lines}faults:\n" + "".join(f"  - {f}\n" for f in faults) +
            "slos:\n" + "".join(f"  - {s}\n" for s in slos) + "max_duration: 30s\n")
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return path


def clos_scenario(tmp_path, name, clos, job, seed, max_duration, faults=()):
    """A simulated MRC drill (srv6, 16 EVs; no interruption) on a generated statically routed
    100 Gbit/s fabric: `clos` is the inside of the lab's clos block, `job` the job's lines."""
    lab = tmp_path / f"{name}-lab.yaml"
    lab.write_text(f"name: {name}\nclos: {{{clos}}}\nrouting: static\nlink_rate: 100Gbit\n")
    path = tmp_path / f"{name}-drill.yaml"
    path.write_text(f"name: {name}\nlab: {lab}\nbackend: ns3\nseed: {seed}\njob:\n{job}"
                    "transports:\n  - {name: mrc, transport: mrc, ev_mode: srv6, evs: 16}\n" +
                    ("faults:\n" + "".join(f"  - {f}\n" for f in faults) if faults else "") +
                    f"slos:\n  - {{slo: no_interruption, transport: mrc}}\nmax_duration: {max_duration}\n")
    return path


def drill(tmp_path, path, *extra):
    out = tmp_path / "runs"
    proc = mrclab("drill", path, "--out", out, "--metrics", "off", "--json", "-q", *extra)
    assert proc.returncode in (0, 1, 3), proc.stderr
    result = json.loads(proc.stdout)
    return proc.returncode, result, Path(result["run_dir"])


def transport(result, name):
    return next(t for t in result["transports"] if t["name"] == name)


def mrc_and_rc(tmp_path, name, faults):
    """The MRC and RC transports' results through the same faults, on seed 7 (whose RC paths
    the tests name)."""
    _, result, _ = drill(tmp_path, scenario(tmp_path, name, faults, transports=("mrc", "rc"), seed=7))
    return transport(result, "mrc"), transport(result, "rc")


# (fault, comment): MRC rides through each of them.
RIDE_THROUGH = {
    "link_down": "{at: 100ms, kind: link_down, target: p0-leaf0:spine0, duration: 500ms}",
    "flap": "{at: 100ms, kind: flap, target: p0-leaf0:spine0, count: 3, down: 100ms, up: 100ms}",
    "blackhole": "{at: 100ms, kind: blackhole, target: p1-leaf1:spine1, duration: 500ms}",
    "loss": "{at: 100ms, kind: loss, target: p0-leaf2:spine1, rate: 2%, duration: 500ms}",
    "rate": "{at: 100ms, kind: rate, target: p0-leaf0:spine0, rate: 100Mbit, duration: 500ms}",
    "switch_down": "{at: 100ms, kind: switch_down, target: p0-spine0, duration: 500ms}",
    "plane_down": "{at: 100ms, kind: plane_down, target: 1, duration: 500ms}",
    "ev_deny": "{at: 100ms, kind: ev_deny, target: {from: host0, to: host1, evs: [0, 2, 4]}, duration: 500ms}",
    "port_disable": "{at: 100ms, kind: port_disable, target: {host: host0, plane: 0}, duration: 500ms}",
}


@pytest.mark.parametrize("kind", sorted(RIDE_THROUGH))
def test_mrc_rides_through_every_modelled_fault(tmp_path, kind):
    status, result, run_dir = drill(tmp_path, scenario(tmp_path, f"sim-{kind.replace('_', '-')}", [RIDE_THROUGH[kind]]))
    assert status == 0, result["slos"]
    assert result["backend"] == "ns3" and result["time_base"] == "simulated"
    mrc = transport(result, "mrc")
    assert mrc["rode_through"] and mrc["job"]["bytes_lost"] == 0 and mrc["job"]["bytes_verified"] > 0
    (fault,) = mrc["faults"]
    assert fault["kind"] == kind and fault["windows"], "the fault was applied"
    assert all(w[1] is not None and w[1] > w[0] for w in fault["windows"]), "and reverted"
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    applied = [e for e in events if e["type"] == "fault_applied"]
    reverted = [e for e in events if e["type"] == "fault_reverted"]
    assert len(applied) == len(reverted) == len(fault["windows"])


def test_blackhole_interrupts_rc_on_its_pinned_path(tmp_path):
    # RC pins each QP to one path; the default drill's blackhole sits on one of them (seed 7).
    mrc, rc = mrc_and_rc(tmp_path, "sim-rc-blackhole", ["{at: 100ms, kind: blackhole, target: p1-leaf1:spine1, duration: 2s}"])
    assert mrc["rode_through"]
    assert not rc["rode_through"] and "retry_exceeded" in rc["job"]["reason"]


def test_overlapping_faults_on_one_link_each_hold_until_their_own_revert(tmp_path):
    # A short blackhole inside a long one on RC's pinned path: the short one's revert must not
    # lift the long one (they compose, as each fault's own nft table does in an emulated lab).
    mrc, rc = mrc_and_rc(tmp_path, "sim-overlap", ["{at: 100ms, kind: blackhole, target: p1-leaf1:spine1, duration: 2s}",
                                                   "{at: 120ms, kind: blackhole, target: p1-leaf1:spine1, duration: 30ms}"])
    assert mrc["rode_through"]
    assert not rc["rode_through"] and "retry_exceeded" in rc["job"]["reason"], rc["job"]


def test_every_port_of_a_host_disabled_waits_and_resumes(tmp_path):
    # Nothing can leave host0 while both its ports are out of service: its QPs wait (no
    # deadline may stay due, which once spun the simulation at one instant for ever) and the
    # step finishes once they are back.
    path = scenario(tmp_path, "sim-no-ports", ["{at: 100ms, kind: port_disable, target: {host: host0, plane: 0}, duration: 300ms}",
                                               "{at: 100ms, kind: port_disable, target: {host: host0, plane: 1}, duration: 300ms}"])
    status, result, _ = drill(tmp_path, path)
    assert status == 0, result["slos"]
    mrc = transport(result, "mrc")
    assert mrc["rode_through"] and mrc["job"]["bytes_lost"] == 0
    assert [f["kind"] for f in mrc["faults"]] == ["port_disable", "port_disable"]


ALL_EVS_DENIED = "{at: 100ms, kind: ev_deny, target: {from: host0, to: host1, evs: [%s]}, duration: 300ms}" % (
    ", ".join(map(str, range(32))))


def test_an_ev_deny_that_min_active_refuses_is_reported_not_passed(tmp_path):
    # Denying all 32 EVs: each QP keeps its last one GOOD (min_active 1), so the fault as
    # written never happened and the drill cannot pass on it.
    status, result, run_dir = drill(tmp_path, scenario(tmp_path, "sim-deny-all", [ALL_EVS_DENIED]))
    assert status == 3 and result["verdict"] == "inconclusive", result["not_tested"]
    (gap,) = result["not_tested"]
    (fault,) = transport(result, "mrc")["faults"]
    assert 0 < fault["ev_denies_refused"] < fault["ev_denies"], fault
    assert gap.startswith("mrc: fault 0 (ev_deny host0->host1 EVs 0,1,") and "was not applied in full" in gap, gap
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    (refused,) = [e for e in events if e["type"] == "ev_deny_refused"]
    assert refused["refused"] >= 1 and refused["denies"] == 32 * refused["refused"], refused


def test_an_ev_deny_of_every_ev_with_min_active_0_stops_the_qps_until_reverted(tmp_path):
    path = scenario(tmp_path, "sim-deny-all-0", [ALL_EVS_DENIED])
    path.write_text(path.read_text().replace("evs: 32}", "evs: 32, min_active: 0}"))
    status, result, run_dir = drill(tmp_path, path)
    assert status == 0 and not result["not_tested"], result
    mrc = transport(result, "mrc")
    assert mrc["rode_through"] and mrc["job"]["bytes_lost"] == 0
    # A step waited out the 300 ms with host0's QPs to host1 on no EV at all.
    assert mrc["step_time"]["max"] >= 0.25, mrc["step_time"]
    (fault,) = mrc["faults"]
    assert fault["ev_denies"] > 0 and fault["ev_denies_refused"] == 0, fault
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    assert not [e for e in events if e["type"] == "ev_deny_refused"]


def test_a_disabled_port_stops_rc_on_it_and_not_mrc(tmp_path):
    # RC has one path per QP; with seed 7 host0's QPs to its ring neighbours are pinned to
    # plane 1 and cannot leave it when a controller takes that port out: neither their data nor
    # their ACKs leave host0, and the job is interrupted. MRC moves to plane 0.
    mrc, rc = mrc_and_rc(tmp_path, "sim-rc-port", ["{at: 100ms, kind: port_disable, target: {host: host0, plane: 1}, duration: 5s}"])
    assert mrc["rode_through"]
    assert not rc["rode_through"] and rc["job"]["state"] == "interrupted", rc["job"]


def test_a_plane_down_for_good_makes_mrc_lose_nothing_and_rc_stop(tmp_path):
    path = scenario(tmp_path, "sim-plane", ["{at: 100ms, kind: plane_down, target: 0}"], transports=("mrc", "rc"))
    _, result, _ = drill(tmp_path, path)
    assert transport(result, "mrc")["rode_through"]
    assert not transport(result, "rc")["rode_through"]


def test_a_watchdog_says_where_the_step_hung(tmp_path):
    # Both planes down for good: no chunk can move, the step watchdog ends the job and says
    # which rank waits for whom, and what the peer's QP to it has outstanding.
    path = scenario(tmp_path, "sim-hung", ["{at: 100ms, kind: plane_down, target: 0}",
                                           "{at: 100ms, kind: plane_down, target: 1}"])
    _, result, run_dir = drill(tmp_path, path)
    job = transport(result, "mrc")["job"]
    assert job["state"] == "interrupted", job
    assert re.search(r"\(0 of 8 ranks done\); rank 0 waits in all_reduce phase \d+/14 for rank 7, whose QP to it has "
                     r"1 message\(s\) outstanding", job["reason"]), job["reason"]
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    watchdog = [e for e in events if e["type"] == "watchdog"]
    assert len(watchdog) == 1 and watchdog[0]["job"] == "mrc" and watchdog[0]["ranks_unfinished"] == 8, watchdog
    ranks = watchdog[0]["unfinished"]
    assert [r["rank"] for r in ranks] == list(range(8))
    assert all(r["waiting_for"] and r["qps_with_work"] and r["qps_with_work"][0]["retransmissions"] > 0 for r in ranks)


def test_many_qps_per_host_all_learn_their_credit(tmp_path):
    # An all-to-all job gives each host a QP per peer (159 here), and each advertises its
    # receives at once: about 12,700 credit-only ACKs a leaf into 3 spines' uplinks, more than a
    # 1 MiB port buffer holds. The repeats of the ones dropped must not fall due together again
    # (they were dropped again, the same QPs' each time, and the job hung in its first step).
    path = clos_scenario(tmp_path, "wide", "planes: 2, spines_per_plane: 3, leaves_per_plane: 2, hosts: 160, "
                         "hosts_per_leaf: 80", seed=3, max_duration="30s",
                         job="  hosts: all\n  collectives: [{kind: all_reduce, size: 256KiB}, {kind: all_to_all, "
                             "size: 64KiB}]\n  compute: 1ms\n  step_timeout: 1s\n  warmup_steps: 1\n"
                             "  baseline_steps: 3\n  tail_steps: 0\n  timers: fabric\n")
    code, result, _ = drill(tmp_path, path)
    job = transport(result, "mrc")["job"]
    assert code == 0 and job["state"] == "completed" and job["steps"] == 5, job


def test_qps_per_peer_splits_every_chunk_and_still_checks_every_result(tmp_path):
    """RC and MRC with each chunk split over several QPs per peer (real payload: every piece's
    checksum and every collective's result checked); an RC pair's QPs take different paths."""
    path = scenario(tmp_path, "sim-split", ["{at: 100ms, kind: loss, target: p0-leaf2:spine1, rate: 2%, duration: 300ms}"],
                    transports=())
    text = path.read_text().replace("transports:\n", "transports:\n"
                                    "  - {name: rc, transport: rc, ev_mode: udp, evs: 32, qps_per_peer: 4}\n"
                                    "  - {name: mrc, transport: mrc, ev_mode: srv6, evs: 32, qps_per_peer: 3}\n")
    path.write_text(text.replace("size: 256KiB}]", "size: 256KiB}, {kind: all_to_all, size: 64KiB}]"))
    _, result, run = drill(tmp_path, path)
    per_step = (256 << 10) + (64 << 10)  # each rank checks the all-reduce's sum and its all-to-all output
    for name, lanes in (("rc", 4), ("mrc", 3)):
        t = transport(result, name)
        assert t["qps_per_peer"] == lanes and t["job"]["state"] == "completed", t["job"]
        assert t["job"]["bytes_lost"] == 0 and t["job"]["bytes_verified"] == t["job"]["steps"] * 8 * per_step, t["job"]
    evs = {}  # RC: (rank pair) -> EVs that carried its packets, at the run's last sample
    for line in (run / "evs.csv").read_text().splitlines()[1:]:
        t, name, qp, ev, _, _, tx_data = line.split(",")[:7]
        if name == "rc" and int(tx_data) > 0:
            evs.setdefault(qp.split("#")[0], set()).add(ev)
    assert len(evs) == 56 and sum(len(e) > 1 for e in evs.values()) > 40, evs


def test_check_refuses_more_qps_per_peer_than_a_chunk_has_words(tmp_path):
    path = scenario(tmp_path, "sim-split-small", [RIDE_THROUGH["loss"]])
    path.write_text(path.read_text().replace("evs: 32}", "evs: 32, qps_per_peer: 64}").replace("256KiB", "1KiB"))
    proc = mrclab("drill", path, "--check")
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"mrclab: error: {path}: transports[0].qps_per_peer: 64 QPs per peer split each "
                                   "chunk in as many pieces of 4 bytes or more, and a 1024-byte collective over 8 "
                                   "ranks has chunks of 128 bytes; use fewer QPs or a larger size")


def test_same_seed_same_events(tmp_path):
    path = scenario(tmp_path, "sim-determinism",
                    [RIDE_THROUGH["flap"], "{at: 300ms, kind: loss, target: p0-leaf2:spine1, rate: 5%, duration: 300ms}"])
    runs = [drill(tmp_path / str(i), path)[2] for i in range(2)]
    first, second = [(r / "events.jsonl").read_bytes() for r in runs]
    assert first == second and len(first) > 1000
    assert (runs[0] / "steps.csv").read_bytes() == (runs[1] / "steps.csv").read_bytes()
    # A different seed changes what the loss drops.
    other = path.read_text().replace("seed: 3", "seed: 4")
    path.write_text(other)
    third = (drill(tmp_path / "2", path)[2] / "events.jsonl").read_bytes()
    assert third != first


def test_two_drills_at_once_each_serve_metrics(tmp_path):
    """The default metrics port held (as by another drill): drills started without --metrics serve
    on free ports and say so; asking for the taken address is refused by --check."""
    holder = socket.socket()
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        holder.bind(("127.0.0.1", 9464))
        holder.listen(1)
    except OSError:
        pass  # something else holds it already: taken either way
    try:
        path = scenario(tmp_path, "sim-concurrent", [RIDE_THROUGH["link_down"]])
        procs = [subprocess.Popen([MRCLAB, "drill", str(path), "--out", str(tmp_path / str(i)), "--json"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
        outs = [p.communicate(timeout=300) for p in procs]
        for p, (out, err) in zip(procs, outs):
            assert p.returncode == 0, err
            assert "port 9464 is taken" in err, err
        urls = [json.loads(out)["metrics_url"] for out, _ in outs]
        assert len(set(urls)) == 2 and not any(":9464/" in u for u in urls), urls
        check = mrclab("drill", path, "--check", "--metrics", "127.0.0.1:9464")
        assert check.returncode == 2
        assert check.stderr.count("\n") == 1 and f"{path}: --metrics: 127.0.0.1:9464 cannot be listened on" in check.stderr
        assert "a free port will be used" in mrclab("drill", path, "--check").stdout
    finally:
        holder.close()


@pytest.mark.parametrize("fault,kind", [
    ("{at: 1s, kind: bgp_reset, target: p0-spine0}", "bgp_reset"),
    ("{at: 1s, kind: config_change, target: p0-leaf0, config: ['interface spine0', ' shutdown']}", "config_change"),
])
def test_check_refuses_what_only_an_emulated_lab_can_do(tmp_path, fault, kind):
    path = scenario(tmp_path, "sim-refused", [fault])
    proc = mrclab("drill", path, "--check")
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"mrclab: error: {path}: faults[0].kind: {kind} is not modelled by the ns3 "
                                   "backend (it needs the emulated lab's FRR: --backend netns)")
    # The same scenario is fine for the emulated lab, where this kernel can run one.
    ok = mrclab("drill", path, "--check", "--backend", "netns")
    if kernel_lacks_srv6():
        assert ok.returncode == 2 and "this kernel cannot forward SRv6 uSIDs" in ok.stderr, ok
    else:
        assert ok.returncode == 0 and "netns backend" in ok.stdout, ok


def test_check_refuses_lab_sysctls_frr_configs_and_images_it_cannot_model(tmp_path):
    lab = tmp_path / "tuned.yaml"
    lab.write_text(LAB.read_text() + "sysctls:\n  - set: {net.ipv6.fib_multipath_hash_policy: 0}\n")
    path = scenario(tmp_path, "sim-tuned", [RIDE_THROUGH["link_down"]])
    proc = mrclab("drill", path, "--check", "--lab", lab)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"mrclab: error: {lab}: sysctls: kernel settings are not modelled by the ns3 "
                                   "backend (they need the emulated lab: --backend netns)")
    # Nor the switches' own FRR configuration: the simulation routes without FRR.
    (tmp_path / "own.conf").write_text("hostname x\n")
    lab.write_text(LAB.read_text() + "frr_config:\n  - {match: {role: spine}, file: own.conf}\n")
    proc = mrclab("drill", path, "--check", "--lab", lab)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"mrclab: error: {lab}: frr_config: the switches' own FRR configuration is not "
                                   "modelled by the ns3 backend (it routes without FRR; it needs the emulated lab: "
                                   "--backend netns)")
    # Nor switches from router images.
    lab.write_text(LAB.read_text() + "images:\n  - {match: {role: spine}, image: mrclab/frr:trixie}\n")
    proc = mrclab("drill", path, "--check", "--lab", lab)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"mrclab: error: {lab}: images[0].image: router images are not modelled by the ns3 "
                                   "backend (it routes without FRR; they need the emulated lab: --backend netns)")


def test_a_job_whose_qp_state_cannot_fit_in_memory_is_refused_before_anything_is_built(tmp_path):
    # An all-to-all over the 1,024 hosts of clos8-1k with 256 EVs per QP: over a million QPs of
    # about 51 KiB each, more than twice what this machine has (more QPs per peer if need be;
    # sized from the EVs' 180 bytes each alone, which the whole estimate of a QP's state exceeds).
    available = next(int(line.split()[1]) * 1024 for line in Path("/proc/meminfo").read_text().splitlines()
                     if line.startswith("MemAvailable:"))
    pairs, per_qp = 1024 * 1023 // 2, 180 * 256
    qps = max(1, -(-available // (pairs * per_qp)))
    path = tmp_path / "a2a.yaml"
    path.write_text(f"name: a2a\nlab: {ROOT / 'labs' / 'clos8-1k.yaml'}\nbackend: ns3\n"
                    "job:\n  hosts: all\n  collectives: [{kind: all_to_all, size: 4MiB}]\n  payload: virtual\n"
                    f"transports:\n  - {{name: mrc, transport: mrc, evs: 256, qps_per_peer: {qps}}}\nfaults: []\n")
    for extra in (["--check"], ["--out", tmp_path / "runs", "--metrics", "off"]):
        proc = mrclab("drill", path, *extra, timeout=120)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith(f"mrclab: error: {path}: transports[0].evs: the job's {2 * pairs * qps} QPs "
                                      "need about "), proc.stderr
        assert "KiB each with 256 EVs" in proc.stderr and "use fewer EVs" in proc.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
    # 16,384 ranks all-to-all: 134 million QP pairs, refused at once from their count (a list of
    # them, as the footprint makes for smaller jobs, would itself take gigabytes and minutes).
    lab = tmp_path / "wide.yaml"
    lab.write_text("name: wide16k\nclos: {planes: 1, spines_per_plane: 64, leaves_per_plane: 64, hosts: 16384, "
                   "hosts_per_leaf: 256}\nrouting: static\n")
    path.write_text(path.read_text().replace(f"lab: {ROOT / 'labs' / 'clos8-1k.yaml'}", f"lab: {lab}")
                    .replace(f"evs: 256, qps_per_peer: {qps}", "evs: 4"))
    proc = mrclab("drill", path, "--check", timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert f"transports[0].evs: the job's {16384 * 16383} QPs need about " in proc.stderr, proc.stderr


def test_check_names_the_backend_and_refuses_a_deployed_lab_name(tmp_path):
    path = scenario(tmp_path, "sim-check", [RIDE_THROUGH["link_down"]], backend=None)
    proc = mrclab("drill", path, "--check", "--backend", "ns3")
    assert proc.returncode == 0 and "(ns3 backend)" in proc.stdout
    assert "job mrc      8 ranks, 8 QP pairs, 0 udp source ports, " in proc.stdout and "sockets" not in proc.stdout
    proc = mrclab("drill", path, "--check", "--backend", "ns3", "--json")  # simulated hosts open no sockets
    assert proc.returncode == 0 and [sorted(j) for j in json.loads(proc.stdout)["jobs"]] == [
        ["buffer_bytes", "qp_pairs", "qp_state_bytes", "ranks", "source_ports", "transport"]]
    proc = mrclab("drill", path, "--check", "--backend", "ns3", "--lab", "no-such-lab")
    assert proc.returncode == 2 and "--lab: 'no-such-lab' is not a lab file" in proc.stderr
    # A bare lab name in the scenario is looked up in labs/ beside its folder: the error says where.
    (tmp_path / "named").mkdir()
    named = tmp_path / "named" / "sim-named.yaml"
    named.write_text(path.read_text().replace(f"lab: {LAB}", "lab: nolab"))
    looked = f"no {tmp_path / 'labs' / 'nolab.yaml'} (a lab name is looked up in labs/ beside the scenario's folder)"
    for backend, says in (("ns3", "'nolab' is not a lab file; "), ("netns", "'nolab' is neither a lab file nor a "
                                                                           "deployed lab (mrclab list); ")):
        proc = mrclab("drill", named, "--check", "--backend", backend)
        assert (proc.returncode, proc.stdout) == (2, ""), proc
        assert f"{named}: lab: {says}{looked}" in proc.stderr, proc.stderr
    # A --transport the scenario lacks is refused by --check and by the drill, with the names it has.
    for args in (["--check"], ["--out", tmp_path / "runs"]):
        proc = mrclab("drill", path, *args, "--backend", "ns3", "--transport", "mrc", "--transport", "nope")
        assert (proc.returncode, proc.stdout) == (2, ""), proc
        assert proc.stderr.endswith(f"{path}: --transport: no transport named 'nope' (the scenario's: mrc)\n")
    assert not (tmp_path / "runs").exists()


def test_report_and_compare_on_simulated_runs(tmp_path):
    path = scenario(tmp_path, "sim-report", [RIDE_THROUGH["blackhole"]])
    _, _, a = drill(tmp_path / "a", path)
    _, _, b = drill(tmp_path / "b", path)
    proc = mrclab("report", a)
    assert proc.returncode == 0, proc.stderr
    md = (a / "report.md").read_text()
    assert "Verdict: PASS" in md and "ns3 (simulation:" in md and "blackhole" in md
    assert (a / "report.html").stat().st_size > 10000
    result = json.loads((a / "result.json").read_text())
    assert f"- Started: 0.000 s simulated, lasted {result['seconds']:.3f} s simulated (" in md, md[:600]
    # The events' simulated clock never runs back, also after the simulation is released.
    times = [json.loads(line)["t"] for line in (a / "events.jsonl").read_text().splitlines()]
    assert times == sorted(times) and times[-1] == result["finished"] > 0
    out = tmp_path / "cmp"
    proc = mrclab("compare", a, b, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert "ns3" in (out / "compare.md").read_text()


def test_python_run_drill_in_simulation(tmp_path):
    import mrclab  # PYTHONPATH=build/python (ctest sets it)
    result = mrclab.run_drill(scenario(tmp_path, "sim-python", [RIDE_THROUGH["loss"]], backend=None),
                              out=tmp_path / "runs", backend="ns3", metrics="off")
    assert result["backend"] == "ns3" and result["verdict"] == "pass" and result["metrics_url"] is None
    path = scenario(tmp_path, "sim-python", [RIDE_THROUGH["loss"]])
    with pytest.raises(ValueError, match="backend must be 'netns' or 'ns3'"):
        mrclab.run_drill(path, backend="ns-3")
    # Errors name the keyword arguments, not the CLI's flags.
    with pytest.raises(ValueError, match=r"^metrics: bad bind address 'localhost': expected HOST:PORT$"):
        mrclab.run_drill(path, metrics="localhost")
    with pytest.raises(ValueError, match=r"^metrics: bad bind address 'localhost:9464': host must be an IPv4"):
        mrclab.run_drill(path, metrics="localhost:9464")
    with pytest.raises(ValueError, match=r": transports: no transport named 'rc' \(the scenario's: mrc\)$"):
        mrclab.run_drill(path, transports=["rc"], out=tmp_path / "runs")
    with pytest.raises(ValueError, match=r": lab: '.*nowhere.yaml' is not a lab file"):
        mrclab.run_drill(path, lab=tmp_path / "nowhere.yaml", out=tmp_path / "runs")


@pytest.mark.parametrize("name", ["sim-clos8-ride-through", "sim-clos8-1k-ride-through"])
def test_shipped_8_plane_scenarios_hold_their_claim(tmp_path, name):
    # Whole (about 95 s and 25 s): MRC rides through spine failures, flapping optics and 1% gray
    # loss within the scenario's SLOs; RC stops at a dead spine.
    status, result, _ = drill(tmp_path, ROOT / "scenarios" / f"{name}.yaml")
    assert status == 0 and result["verdict"] == "pass", result["slos"]
    assert transport(result, "mrc")["rode_through"]
    assert transport(result, "rc")["job"]["state"] == "interrupted"


@pytest.mark.parametrize("name,lab,hosts", [("sim-clos8-ride-through", "clos8", 64),
                                             ("sim-clos8-1k-ride-through", "clos8-1k", 128)])
def test_shipped_simulation_scenarios_are_valid(name, lab, hosts):
    proc = mrclab("drill", ROOT / "scenarios" / f"{name}.yaml", "--check")
    assert proc.returncode == 0, proc.stderr
    assert f"lab {lab} (ns3 backend), {hosts} job host(s)" in proc.stdout and proc.stdout.count(" at ") == 3


def test_past_255_hosts_leaf_local_usids_carry_a_drill(tmp_path):
    """A 300-host, 3-plane fabric (leaf-local host-port uSIDs, spines past the first uSID block)
    with a job on 6 hosts spread over it: MRC's srv6 paths reach every host and ride through a
    plane going down, and the virtual payload is reported as such."""
    lab = tmp_path / "wide.yaml"
    lab.write_text("name: wide\nclos: {planes: 3, spines_per_plane: 260, leaves_per_plane: 10, hosts: 300, "
                   "hosts_per_leaf: 30}\nrouting: static\nlink_rate: 100Gbit\n")
    text = (f"name: wide\nlab: {lab}\nbackend: ns3\nseed: 4\njob:\n  hosts: 6\n"
            "  collectives: [{kind: all_reduce, size: 64KiB}]\n  compute: 1ms\n  step_timeout: 100ms\n"
            "  timers: fabric\n  payload: virtual\n  warmup_steps: 1\n  baseline_steps: 3\n  tail_steps: 3\n"
            "transports:\n  - {name: mrc, transport: mrc, ev_mode: srv6, evs: 32}\nfaults:\n"
            "  - {at: 5ms, kind: plane_down, target: 2, duration: 20ms}\n"
            "slos:\n  - {slo: no_interruption, transport: mrc}\n  - {slo: bytes_lost, max: 0}\nmax_duration: 10s\n")
    path = tmp_path / "wide-drill.yaml"
    path.write_text(text)
    code, result, run_dir = drill(tmp_path, path)
    assert code == 0 and result["verdict"] == "pass", result["slos"]
    assert result["payload"] == "virtual"
    assert transport(result, "mrc")["rode_through"]
    assert any("bytes delivered (virtual payload" in s["detail"] for s in result["slos"])


def test_a_drill_on_part_of_a_large_fabric_records_what_it_touched(tmp_path):
    """A 49,152-host fabric (over 262,144 nodes and links) with a job on 4 of its hosts: lab.json
    is the plan's summary, links.csv lists only the link ends that counted a packet (each from a
    zero row at the sample before, unless it counted from the first sample on), and the report
    says why the lab is not drawn. (The paper's 131,072-host fabric runs the same way: README.)"""
    path = clos_scenario(tmp_path, "large", "planes: 4, spines_per_plane: 32, leaves_per_plane: 256, hosts: 49152, "
                         "hosts_per_leaf: 192", seed=4, max_duration="10s",
                         job="  hosts: 4\n  collectives: [{kind: all_reduce, size: 64KiB}]\n  compute: 1ms\n"
                             "  step_timeout: 100ms\n  timers: fabric\n  payload: virtual\n  warmup_steps: 1\n"
                             "  baseline_steps: 3\n  tail_steps: 3\n",
                         faults=["{at: 5ms, kind: plane_down, target: {plane: 2}, duration: 20ms}"])
    code, result, run_dir = drill(tmp_path, path)
    assert code == 0 and result["verdict"] == "pass", result["slos"]
    assert len(result["lab"]["digest"]) == 64
    plan = json.loads((run_dir / "lab.json").read_text())
    assert "nodes" not in plan and "links" not in plan
    assert plan["not_listed"] == {"nodes": 49152 + 4 * (32 + 256), "links": 4 * 49152 + 4 * 32 * 256,
                                  "fabric_links": 4 * 32 * 256, "why": plan["not_listed"]["why"]}
    assert [len(p["hosts"]) for p in plan["planes"]] == [49152] * 4

    rows = {}
    lines = (run_dir / "links.csv").read_text().splitlines()
    assert lines[0] == "t,link,end,rx_packets,tx_packets,rx_dropped,tx_dropped,queue_peak_bytes"
    for line in lines[1:]:
        t, link, end, *counters = line.split(",")
        rows.setdefault(end, []).append((float(t), [int(c or 0) for c in counters]))
    first_sample = min(t for r in rows.values() for t, _ in r)
    assert 0 < len(rows) < 1000  # of 917,504 ends: the 4 job hosts' ports, their leaves' and spines'
    for end, samples in rows.items():
        samples.sort()
        assert samples[0][0] == first_sample or not any(samples[0][1]), (end, samples[:2])
        assert any(samples[-1][1]), end
    assert any(end.startswith("p2-") for end in rows)  # the plane that went down carried traffic before

    proc = mrclab("report", run_dir)
    assert proc.returncode == 0, proc.stderr
    assert "The lab is not drawn: lab.json does not list its 50,304 nodes and 229,376 links" in \
        (run_dir / "report.md").read_text()
