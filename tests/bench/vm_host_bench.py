#!/usr/bin/python3
"""What VM hosts (`runtime: vm`, rdma_rxe in small VMs) cost and carry on this machine: a lab
of 2 planes whose --hosts hosts are all VMs, half behind each of two leaves, is deployed
(--repeat times); the benchmark prints the seconds to ready (booting the VMs in parallel,
configuring and verifying them), qemu's memory per VM and the accelerator qemu used (kvm only
where it works, else tcg: software emulation), then perftest between the first and the last
host, across a spine, on every plane: ib_write_bw (RC, RDMA writes of --msg bytes) and
ib_write_lat (2-byte writes, one at a time), through /opt/mrclab-perftest (perftest's setup
connection relayed over the lab's IPv6); and `mrclab perf` (our MRC, 8 EVs) between the same
two hosts, its datagrams through the guests' kernels.

    sudo tests/bench/vm_host_bench.py                 # 8 VM hosts; builds the guest image first
    sudo tests/bench/vm_host_bench.py --hosts 2 --json

`build/vm_boot_bench N` times bare VM boots (one, then N at once) without a lab. Not a timed
test: it prints figures (emulator/README.md quotes them). Run on an idle machine."""
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
NAME = "bench-vm"


def mrclab(*args, timeout=900):
    proc = subprocess.run([MRCLAB, *map(str, args)], capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        sys.exit(f"mrclab {' '.join(map(str, args))} failed: {proc.stdout.strip()} {proc.stderr.strip()}")
    return proc.stdout


def lab_text(hosts):
    per_leaf = (hosts + 1) // 2
    return (f"name: {NAME}\nclos: {{planes: 2, spines_per_plane: 1, leaves_per_plane: 2, hosts: {hosts}, "
            f"hosts_per_leaf: {per_leaf}}}\nrouting: bgp\nruntimes:\n  - {{match: {{kind: host}}, runtime: vm}}\n")


def qemu_processes():
    marker = f"/run/mrclab/{NAME}/".encode()
    found = []
    for p in Path("/proc").iterdir():
        try:
            if p.name.isdigit() and (p / "comm").read_text().startswith("qemu"):
                cmdline = (p / "cmdline").read_bytes()
                if marker in cmdline:
                    found.append((int(p.name), cmdline.split(b"\0")))
        except OSError:
            pass
    return found


def rss_mib(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def perftest(server, client, address, tool, options):
    """Runs TOOL between two VM hosts (server listening on `address`); returns the client's output."""
    srv = subprocess.Popen([MRCLAB, "exec", NAME, server, "--", "timeout", "120", "/opt/mrclab-perftest", "server",
                            tool, address, *options], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while "]:18516" not in mrclab("exec", NAME, server, "--", "ss", "-Hltn"):
            if srv.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"{tool} server on {server} did not listen: {srv.stderr.read() if srv.poll() is not None else ''}")
            time.sleep(0.2)
        out = mrclab("exec", NAME, client, "--", "timeout", "120", "/opt/mrclab-perftest", "client", tool, address,
                     *options, timeout=180)
        srv.wait(timeout=60)
        return out
    finally:
        if srv.poll() is None:
            srv.kill()
            srv.wait()


def result_row(out):
    """The figures line of perftest's table (the line after its header)."""
    lines = out.splitlines()
    for i, line in enumerate(lines):
        if "#bytes" in line and i + 1 < len(lines):
            return lines[i + 1].split()
    sys.exit(f"no result in perftest's output:\n{out}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, default=8, help="VM hosts in the lab (at least 2)")
    parser.add_argument("--repeat", type=int, default=1, help="deploys to time")
    parser.add_argument("--msg", type=int, default=65536, help="ib_write_bw message bytes")
    parser.add_argument("--seconds", type=int, default=3, help="ib_write_bw duration")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.hosts < 2:
        sys.exit("--hosts: at least 2")
    mrclab("image", "build", "guest")
    with tempfile.TemporaryDirectory() as tmp:
        lab = Path(tmp) / f"{NAME}.yaml"
        lab.write_text(lab_text(args.hosts))
        ready = []
        for i in range(args.repeat):
            deploy = json.loads(mrclab("deploy", lab, "--json"))
            ready.append(deploy["seconds"]["total"])
            if i + 1 < args.repeat:
                mrclab("destroy", NAME)
        try:
            qemus = qemu_processes()
            accel = sorted({b.decode().split(",")[0] for _, argv in qemus for a, b in zip(argv, argv[1:]) if a == b"-accel"})
            rss = [rss_mib(pid) for pid, _ in qemus]
            plan = json.loads(mrclab("inspect", NAME, "--json"))["plan"]
            hosts = [n for n in plan["nodes"] if n["kind"] == "host"]
            first, last = hosts[0]["name"], hosts[-1]["name"]
            planes = []
            for port in hosts[-1]["ports"]:
                bw = result_row(perftest(last, first, port["address"], "ib_write_bw",
                                         ["-s", str(args.msg), "-D", str(args.seconds), "--report_gbits", "-F"]))
                lat = result_row(perftest(last, first, port["address"], "ib_write_lat", ["-n", "500", "-F"]))
                planes.append({"plane": port["plane"], "address": port["address"],
                               "write_bw_gbps": float(bw[3]), "write_lat_us": {
                                   "min": float(lat[2]), "typical": float(lat[4]), "mean": float(lat[5]),
                                   "p99": float(lat[7])}})
            # Our MRC between the same VM hosts (its core here, its datagrams through the guests'
            # kernels), messages of the same size.
            mrc = json.loads(mrclab("perf", NAME, first, last, "--msg", str(args.msg), "--duration",
                                    str(args.seconds), "--evs", "8", "--json"))
        finally:
            mrclab("destroy", NAME)
    figures = {"vm_hosts": args.hosts, "accelerator": accel, "ready_s": ready,
               "ready_s_median": statistics.median(ready), "qemu_rss_mib_mean": statistics.mean(rss),
               "perftest": {"from": first, "to": last, "msg_bytes": args.msg, "planes": planes},
               "mrc_perf": {"goodput_gbps": mrc["goodput_gbps"], "latency_us_p50": mrc["latency_us"]["p50"],
                            "retransmissions": mrc["retransmissions"], "ok": mrc["ok"]}}
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"{args.hosts} VM hosts ({', '.join(accel)}): ready in {statistics.median(ready):.1f} s "
          f"(median of {len(ready)}), qemu RSS {statistics.mean(rss):.0f} MiB per VM")
    print(f"perftest {first} -> {last} (across a spine)")
    print("plane  ib_write_bw Gbit/s   ib_write_lat us: min  typical  mean  p99")
    for p in planes:
        lat = p["write_lat_us"]
        print(f"{p['plane']:>5}  {p['write_bw_gbps']:>18.3f}   {lat['min']:>20.0f}  {lat['typical']:>7.0f}  "
              f"{lat['mean']:>4.0f}  {lat['p99']:>4.0f}")
    m = figures["mrc_perf"]
    print(f"mrclab perf (our MRC, 8 EVs, datagrams through the guests) {first} -> {last}: "
          f"{m['goodput_gbps']:.3f} Gbit/s, message latency p50 {m['latency_us_p50']:.0f} us, "
          f"{m['retransmissions']} retransmissions{'' if m['ok'] else ' (FAILED)'}")


if __name__ == "__main__":
    main()
