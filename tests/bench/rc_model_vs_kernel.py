#!/usr/bin/python3
"""mrclab's RC model against the kernel's RC (rdma_rxe) under the same faults: the table of
emulator/README.md ("VM hosts"), measured from scratch.

The path: host0 -> host1 on plane 0 of a 2-plane fabric with one spine per plane and one host
per leaf, so p0-leaf0:spine0 is the QP's only path (no other route on that plane). Every fault
hits that link 2 s into the run (after the kernel's writes flow) and is held 8 s. Both RCs use an
ACK timeout of 2^14 x 4.096 us (67.1 ms, the first retry) and --retry-count retries (default 6);
one more row runs the blackhole with retry count 7.

  kernel   a lab whose two hosts are VMs (rdma_rxe): /opt/mrclab-rdma writes 16 KiB, 4 in
           flight, for 20 s; the QP's first failed completion (status, how long after the last
           good one) or its longest gap without a completion
  model    the same fabric with namespace hosts (emulated) and in ns-3 (simulated): a drill whose
           job is a 1 MiB all-reduce between the two hosts over `transport: rc` (one EV: plane
           0); the QP's error (retry_exceeded, how long after the fault) or the job completing

    sudo tests/bench/rc_model_vs_kernel.py                # about 5 minutes; builds the guest image
    sudo tests/bench/rc_model_vs_kernel.py --json

Not a timed test: it prints figures. Exit status 0, 1 when a run could not be made."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MRCLAB = os.environ.get("MRCLAB", str(ROOT / "build" / "mrclab"))
VM_LAB = "rcvk-vm"
LINK = "p0-leaf0:spine0"
ACK_TIMEOUT_EXP = 14  # 4.096 us * 2^14 = 67.1 ms
ACK_TIMEOUT_S = 4.096e-6 * 2 ** ACK_TIMEOUT_EXP
FAULTS = {  # name: (mrclab fault apply arguments, the scenario's fault lines)
    "blackhole": (["blackhole", LINK], "kind: blackhole"),
    "link_down": (["link_down", LINK], "kind: link_down"),
    "loss 1%": (["loss", LINK, "--loss", "0.01"], "kind: loss\n    rate: 1%"),
    "loss 10%": (["loss", LINK, "--loss", "0.1"], "kind: loss\n    rate: 10%"),
    "loss 50%": (["loss", LINK, "--loss", "0.5"], "kind: loss\n    rate: 50%"),
}
FAULT_AT_S, HELD_S = 2, 8


def lab_text(name, vm):
    runtime = "runtimes:\n  - {match: {kind: host}, runtime: vm}\n" if vm else ""
    return (f"name: {name}\nclos: {{planes: 2, spines_per_plane: 1, leaves_per_plane: 2, hosts: 2, "
            f"hosts_per_leaf: 1}}\nrouting: bgp\n{runtime}")


def run(*args, timeout=600, check=True):
    proc = subprocess.run([MRCLAB, *map(str, args)], capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        sys.exit(f"mrclab {' '.join(map(str, args))} failed ({proc.returncode}): {proc.stdout.strip()} "
                 f"{proc.stderr.strip()}")
    return proc


def guest(host, *cmd, check=True, timeout=120):
    return run("exec", VM_LAB, host, "--", *cmd, check=check, timeout=timeout)


def wait_for(condition, timeout, what):
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            sys.exit(f"timed out waiting for {what}")
        time.sleep(0.1)


def kernel_run(address, fault_args, retry_count):
    """mrclab-rdma host0 -> host1 (address: host1 on plane 0) with the fault applied once the
    writes flow and held HELD_S; returns the client's JSON."""
    def sent():
        return int(guest("host0", "cat", "/sys/class/infiniband/rxe_eth0/ports/1/hw_counters/sent_pkts").stdout)
    guest("host1", "pkill", "-x", "mrclab-rdma", check=False)
    server = subprocess.Popen([MRCLAB, "exec", VM_LAB, "host1", "--", "timeout", "90", "/opt/mrclab-rdma", "server",
                               address], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: "LISTEN" in guest("host1", "rdma", "resource", "show", "cm_id").stdout, 60, "the server")
        before = sent()
        client = subprocess.Popen([MRCLAB, "exec", VM_LAB, "host0", "--", "timeout", "80", "/opt/mrclab-rdma", "client",
                                   address, "--seconds", "20", "--size", "16384", "--depth", "4", "--ack-timeout",
                                   str(ACK_TIMEOUT_EXP), "--retry-count", str(retry_count)],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(lambda: client.poll() is not None or sent() > before + 200, 60, "the writes to flow")
            run("fault", "apply", VM_LAB, *fault_args)
            try:
                client.wait(timeout=HELD_S)
            except subprocess.TimeoutExpired:
                pass
            run("fault", "revert", VM_LAB, "--all")
            out, err = client.communicate(timeout=120)
        finally:
            if client.poll() is None:
                client.kill()
                client.wait()
    finally:
        guest("host1", "pkill", "-x", "mrclab-rdma", check=False)
        server.kill()
        server.wait()
    result = json.loads(out) if out.strip() else {"error": f"no output: {err.strip()}"}
    if isinstance(result.get("error"), str):  # it never connected
        sys.exit(f"mrclab-rdma client failed: {result['error']}")
    return result


def model_run(tmp, lab_file, row, fault_lines, retry_count, backend):
    """Drill `row` of the RC model; returns (the QP's error, seconds after the fault, or None;
    the job's reason; steps done)."""
    scenario = Path(tmp) / f"model-{row}-{backend}.yaml"
    scenario.write_text(f"""name: rc-model
lab: {lab_file}
seed: 7
job:
  hosts: all
  collectives:
    - {{kind: all_reduce, size: 1MiB}}
  compute: 20ms
  step_timeout: 20s
  baseline_steps: 5
  tail_steps: 5
transports:
  - {{name: rc, transport: rc, ev_mode: srv6, evs: 1, ack_timeout: {ACK_TIMEOUT_S * 1000:.3f}ms, retry_count: {retry_count}}}
faults:
  - at: {FAULT_AT_S}s
    {fault_lines}
    target: {LINK}
    duration: {HELD_S}s
max_duration: 60s
""")
    out = Path(tmp) / scenario.stem
    proc = run("drill", scenario, "--backend", backend, "--out", out, "--quiet", check=False, timeout=900)
    if proc.returncode not in (0, 1):
        sys.exit(f"drill {scenario} ({backend}) failed ({proc.returncode}): {proc.stderr.strip()}")
    events = [json.loads(line) for line in next(out.glob("*/events.jsonl")).read_text().splitlines()]
    fault_t = next(e["t"] for e in events if e["type"] not in ("step", "drill", "job_state", "watchdog"))
    ended = [e for e in events if e["type"] == "job_state" and e.get("state") == "interrupted"]
    steps = sum(1 for e in events if e["type"] == "step")
    return (ended[0]["t"] - fault_t if ended else None), ended[0]["reason"] if ended else "", steps


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--retry-count", type=int, default=6, help="both RCs' retry count (0..6)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not 0 <= args.retry_count <= 6:
        sys.exit("--retry-count: 0..6 (7 is its own row)")
    rows = [(name, args.retry_count) for name in FAULTS] + [("blackhole", 7)]
    run("image", "build", "guest", timeout=900)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        vm_lab, netns_lab = Path(tmp) / "vm.yaml", Path(tmp) / "netns.yaml"
        vm_lab.write_text(lab_text(VM_LAB, vm=True))
        netns_lab.write_text(lab_text("rcvk", vm=False))
        run("deploy", vm_lab, "--quiet")
        try:
            plan = json.loads(run("inspect", VM_LAB, "--json").stdout)["plan"]
            host1 = next(n for n in plan["nodes"] if n["name"] == "host1")
            address = next(p["address"] for p in host1["ports"] if p["plane"] == 0)
            for i, (name, retry) in enumerate(rows):
                print(f"[{i + 1}/{len(rows)}] {name}, retry count {retry}: kernel", file=sys.stderr)
                kernel = kernel_run(address, FAULTS[name][0], retry)
                results.append({"fault": name, "retry_count": retry, "kernel": kernel})
        finally:
            run("destroy", VM_LAB)
        for i, row in enumerate(results):
            for backend in ("netns", "ns3"):
                print(f"[{i + 1}/{len(rows)}] {row['fault']}, retry count {row['retry_count']}: model ({backend})",
                      file=sys.stderr)
                after, reason, steps = model_run(tmp, netns_lab, i, FAULTS[row["fault"]][1], row["retry_count"],
                                                 backend)
                row[backend] = {"error_after_fault_s": after, "reason": reason, "steps": steps}
    if args.json:
        print(json.dumps({"ack_timeout_s": ACK_TIMEOUT_S, "fault_held_s": HELD_S, "rows": results}, indent=2))
        return
    print(f"ACK timeout {ACK_TIMEOUT_S * 1000:.1f} ms (the first retry), the fault held {HELD_S} s on the QP's only path")
    print("| fault | retry count | kernel RC (rdma_rxe) | RC model, emulated | RC model, simulated |")
    print("|---|---:|---|---|---|")
    for row in results:
        k = row["kernel"]
        if k.get("error"):
            kernel = f"{k['error']['status']} {k['error']['after_last_completion_s']:.2f} s after the last completion"
        else:
            kernel = f"survives (longest gap {k['longest_gap_s']:.2f} s)"
        model = ["survives" if row[b]["error_after_fault_s"] is None else
                 f"retry exceeded {row[b]['error_after_fault_s']:.2f} s after the fault" for b in ("netns", "ns3")]
        print(f"| {row['fault']} | {row['retry_count']} | {kernel} | {model[0]} | {model[1]} |")


if __name__ == "__main__":
    main()
