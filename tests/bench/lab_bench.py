#!/usr/bin/python3
"""Lab deploy/destroy benchmark: deploys and destroys labs of growing size and prints, per size,
switches, hosts, links, seconds to ready (split into namespaces, links, daemons, convergence,
verification), seconds to destroy, and the total RSS of the FRR daemons.

    sudo tests/bench/lab_bench.py                      # clos2, clos4, clos8
    sudo tests/bench/lab_bench.py labs/clos4.yaml --json

Not a timed test: it prints figures (README quotes them). Run on an idle machine."""
import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MRCLAB = os.environ.get("MRCLAB", str(ROOT / "build" / "mrclab"))


def rss_mib(pids):
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def run(lab):
    name = subprocess.run([MRCLAB, "graph", lab], capture_output=True, text=True,
                          check=True).stdout.split('"')[1]
    deploy = subprocess.run([MRCLAB, "deploy", lab, "--json"], capture_output=True, text=True)
    if deploy.returncode != 0:
        sys.exit(f"deploy of {lab} failed: {deploy.stderr.strip()}")
    report = json.loads(deploy.stdout)
    state = json.loads(subprocess.run([MRCLAB, "inspect", name, "--json"], capture_output=True,
                                      text=True, check=True).stdout)
    pids = [d["pid"] for node in state["live"]["daemons"].values() for d in node.values()]
    rss = rss_mib(pids)
    start = time.monotonic()
    subprocess.run([MRCLAB, "destroy", name], capture_output=True, check=True)
    destroy_s = time.monotonic() - start
    plan = state["plan"]
    return {
        "lab": name,
        "switches": sum(1 for n in plan["nodes"] if n["kind"] == "switch"),
        "hosts": sum(1 for n in plan["nodes"] if n["kind"] == "host"),
        "links": len(plan["links"]),
        "daemons": len(pids),
        "ready_s": report["seconds"]["total"],
        "split_s": {k: v for k, v in report["seconds"].items() if k != "total"},
        "destroy_s": destroy_s,
        "frr_rss_mib": rss,
        "verified": report["verified"],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("labs", nargs="*", default=[str(ROOT / "labs" / f) for f in
                                                    ("clos2.yaml", "clos4.yaml", "clos8.yaml")])
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    args = parser.parse_args()
    results = []
    for lab in args.labs:
        print(f"benchmarking {lab} ...", file=sys.stderr)
        results.append(run(lab))
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{'lab':8} {'sw':>4} {'hosts':>5} {'links':>5} {'ready':>7} {'ns':>6} {'links':>6} "
          f"{'daemons':>7} {'conv':>6} {'verify':>6} {'destroy':>7} {'FRR RSS':>9}")
    for r in results:
        s = r["split_s"]
        print(f"{r['lab']:8} {r['switches']:>4} {r['hosts']:>5} {r['links']:>5} "
              f"{r['ready_s']:>6.2f}s {s['namespaces']:>5.2f}s {s['links']:>5.2f}s "
              f"{s['daemons']:>6.2f}s {s['convergence']:>5.2f}s {s['verification']:>5.2f}s "
              f"{r['destroy_s']:>6.2f}s {r['frr_rss_mib']:>6.0f} MiB")


if __name__ == "__main__":
    main()
