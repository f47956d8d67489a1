#!/usr/bin/python3
"""Failover on a real lab (not a timed test): the time from a link cut to goodput back above 90%
of its level before the cut, for MRC and for the RoCEv2 RC baseline, measured in one run.

Two hosts on different leaves (host0 -> host5) exchange 256 KiB all-to-all steps back to back
over one QP pair on clos2-fast (unshaped links, so the only losses are the fault's). The busiest
uplink of host0's plane-0 leaf is cut, either as `link_down` (carrier lost: BGP/BFD withdraw the
link and the kernel reroutes) or as `blackhole` (carrier kept: routing never notices). Goodput
is computed from the job's own steps (bytes / step time) in 10 ms bins.

    sudo PYTHONPATH=build/python tests/bench/lab_failover_bench.py [--json]
"""
import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "build" / "python"))
import mrclab  # noqa: E402

BIN = 0.01
CASES = [("mrc", "srv6"), ("mrc", "udp"), ("rc", "udp"), ("rc", "srv6")]


def tx_packets(lab, node, interface):
    stats = json.loads(lab.exec(node, ["ip", "-j", "-s", "link", "show", "dev", interface]).stdout)
    return stats[0]["stats64"]["tx"]["packets"]


def busiest_uplink(lab, leaf):
    spines = [i for i in lab.node(leaf).interfaces if i.startswith("spine")]
    before = {s: tx_packets(lab, leaf, s) for s in spines}
    time.sleep(0.5)
    return max(spines, key=lambda s: tx_packets(lab, leaf, s) - before[s])


def bgp_routes(lab):
    """Every switch's BGP routes: {switch: {(prefix, next hops)}} (nhid ids ignored)."""
    snapshot = {}
    for sw in lab.switches:
        routes, prefix, hops = set(), None, []
        for line in lab.exec(sw.name, ["ip", "-6", "route", "show", "proto", "bgp"]).stdout.splitlines() + ["end"]:
            words = line.split()
            if line[:1] not in (" ", "\t"):
                if prefix:
                    routes.add((prefix, tuple(sorted(hops))))
                prefix, hops = words[0], []
            if "via" in words:
                hops.append(words[words.index("via") + 1] + "%" + words[words.index("dev") + 1])
        snapshot[sw.name] = routes
    return snapshot


def wait_converged(lab, baseline, timeout=60):
    """Until every switch has the routes it had before the first case (a restored link is up
    before its session, and the session before its routes)."""
    deadline = time.monotonic() + timeout
    while bgp_routes(lab) != baseline:
        if time.monotonic() > deadline:
            raise RuntimeError("the fabric did not converge back within 60 s")
        time.sleep(0.2)


def goodput_series(steps, bytes_per_step):
    """(bin start time, Gbit/s) from step end times."""
    bins = {}
    for s in steps:
        bins.setdefault(int(s["end"] / BIN), 0)
        bins[int(s["end"] / BIN)] += bytes_per_step
    if not bins:
        return []
    first, last = min(bins), max(bins)
    return [(b * BIN, bins.get(b, 0) * 8 / BIN / 1e9) for b in range(first, last + 1)]


def measure(lab, transport, ev_mode, fault_kind, baseline):
    wait_converged(lab, baseline)
    size = 256 << 10
    with lab.job(hosts=["host0", "host5"], transport=transport, ev_mode=ev_mode, evs=32,
                 collectives=[("all_to_all", size)], compute_seconds=0, step_timeout_seconds=3,
                 label=f"{transport}-{ev_mode}") as job:
        job.start()
        job.wait_for_steps(20, timeout=60)
        uplink = busiest_uplink(lab, "p0-leaf0")
        time.sleep(1.0)
        fault = getattr(lab.fault, fault_kind)(f"p0-leaf0:{uplink}")
        cut = time.time()
        job.wait_for_steps(len(job.steps) + 10_000, timeout=3.0)  # 3 s after the cut, or the job ended
        fault.revert()
        result = job.stop() if job.state == "running" else job.wait()
        steps = job.steps
    series = goodput_series(steps, size)
    before = [g for t, g in series if cut - 1.0 <= t < cut - BIN]
    level = sum(before) / max(1, len(before))
    recovered = next((t + BIN - cut for t, g in series if t >= cut and g >= 0.9 * level), None)
    return {"transport": transport, "ev_mode": ev_mode, "fault": fault_kind, "cut_link": f"p0-leaf0:{uplink}",
            "goodput_before_gbps": round(level, 3), "recovery_ms": None if recovered is None else round(recovered * 1000, 1),
            "job": result["state"], "reason": result.get("reason", "")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    rows = []
    with mrclab.Lab.deploy(ROOT / "labs" / "clos2-fast.yaml", name="bench-fo") as lab:
        baseline = bgp_routes(lab)
        for fault_kind in ("link_down", "blackhole"):
            for transport, ev_mode in CASES:
                rows.append(measure(lab, transport, ev_mode, fault_kind, baseline))
                if not args.json:
                    r = rows[-1]
                    rec = "never" if r["recovery_ms"] is None else f"{r['recovery_ms']:.0f} ms"
                    print(f"{r['fault']:9} {r['transport']:3} {r['ev_mode']:4}  before {r['goodput_before_gbps']:.2f} Gbit/s"
                          f"  back >90% after {rec:>7}  job {r['job']} {r['reason']}", flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
