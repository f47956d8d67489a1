#!/usr/bin/python3
"""What a switch running as a container from a router image costs against a namespace switch:
the default lab (12 switches) deployed with this machine's FRR 8.4 in namespaces, with every
switch from the bookworm image (the same FRR 8.4: the difference is the container), and from
the trixie image (FRR 10.3, which adds mgmtd), in turns, --repeat times each. Prints per variant
the median seconds to ready (and to start the daemons), seconds to destroy, memory per switch
(RSS of its FRR daemons, plus the container's own processes: conmon and the container's sleep),
and MemAvailable's drop per switch while the lab runs (which counts page cache and kernel
objects too).

    sudo tests/bench/container_switch_bench.py              # builds missing images first
    sudo tests/bench/container_switch_bench.py --repeat 5 --json

Not a timed test: it prints figures (README quotes them). Run on an idle machine."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MRCLAB = os.environ.get("MRCLAB", str(ROOT / "build" / "mrclab"))
NAME = "bench-ctr"
VARIANTS = {"namespace (FRR 8.4)": "",
            "container bookworm (FRR 8.4)": "images:\n  - image: mrclab/frr:bookworm\n",
            "container trixie (FRR 10.3)": "images:\n  - image: mrclab/frr:trixie\n"}


def mrclab(*args):
    proc = subprocess.run([MRCLAB, *args], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"mrclab {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout


def status_kib(pid, key):
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def mem_available_kib():
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1])
    return 0


def container_processes():
    """PIDs of every lab container's sleep and its conmon (the sleep's parent)."""
    pids = []
    for pid in Path("/proc").iterdir():
        if not pid.name.isdigit():
            continue
        try:
            cmdline = (pid / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if cmdline[:2] == [b"/bin/sleep", b"infinity"]:
            parent = status_kib(pid.name, "PPid")
            conmon = (Path(f"/proc/{parent}/cmdline").read_bytes() if parent else b"")
            if b"conmon" in conmon and f"mrclab-{NAME}-".encode() in conmon:
                pids += [int(pid.name), parent]
    return pids


def once(lab_file):
    before = mem_available_kib()
    report = json.loads(mrclab("deploy", lab_file, "--json"))
    state = json.loads(mrclab("inspect", NAME, "--json"))
    switches = len(state["live"]["daemons"])
    daemons = [d["pid"] for node in state["live"]["daemons"].values() for d in node.values()]
    daemon_kib = sum(status_kib(p, "VmRSS") for p in daemons)
    container_kib = sum(status_kib(p, "VmRSS") for p in container_processes())
    drop_kib = before - mem_available_kib()
    start = time.monotonic()
    mrclab("destroy", NAME)
    return {"ready_s": report["seconds"]["total"], "daemons_s": report["seconds"]["daemons"],
            "destroy_s": time.monotonic() - start,
            "daemons_per_switch": len(daemons) / switches,
            "daemon_rss_mib_per_switch": daemon_kib / 1024 / switches,
            "container_rss_mib_per_switch": container_kib / 1024 / switches,
            "mem_available_drop_mib_per_switch": drop_kib / 1024 / switches}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="deploys per variant, in turns (default 3)")
    parser.add_argument("--json", action="store_true", help="one JSON document on stdout")
    args = parser.parse_args()
    for suite in ("bookworm", "trixie"):
        mrclab("image", "build", suite)
    base = (ROOT / "labs" / "clos2.yaml").read_text().replace("name: clos2", f"name: {NAME}")
    runs = {v: [] for v in VARIANTS}
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for i, (variant, extra) in enumerate(VARIANTS.items()):
            files[variant] = Path(tmp) / f"v{i}.yaml"
            files[variant].write_text(base + extra)
        for r in range(args.repeat):
            for variant in VARIANTS:
                print(f"round {r + 1}/{args.repeat}: {variant} ...", file=sys.stderr)
                runs[variant].append(once(str(files[variant])))
    result = {v: {k: statistics.median(run[k] for run in rs) for k in rs[0]} for v, rs in runs.items()}
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"{'variant (12 switches, medians of ' + str(args.repeat) + ')':40} {'ready':>7} {'daemons':>8} "
          f"{'destroy':>8} {'daemons':>8} {'FRR RSS':>8} {'+container':>10} {'MemAvail drop':>14}")
    print(f"{'':40} {'s':>7} {'s':>8} {'s':>8} {'/switch':>8} {'MiB/sw':>8} {'MiB/sw':>10} {'MiB/switch':>14}")
    for variant, r in result.items():
        print(f"{variant:40} {r['ready_s']:7.2f} {r['daemons_s']:8.2f} {r['destroy_s']:8.2f} "
              f"{r['daemons_per_switch']:8.0f} {r['daemon_rss_mib_per_switch']:8.1f} "
              f"{r['container_rss_mib_per_switch']:10.2f} {r['mem_available_drop_mib_per_switch']:14.1f}")


if __name__ == "__main__":
    main()
