"""Deploy -> ready -> BGP -> uSID path through a chosen spine -> destroy -> nothing left."""
import json
import os
import re
import signal
import subprocess
import textwrap
from pathlib import Path

from conftest import (MRCLAB, STATE, alive, assert_nothing_left, inspect, journal_pids, lab_file,
                      mrclab, wait_bgp_established, wait_for)


def usid_counter(netns, locator):
    out = subprocess.run(["ip", "-n", netns, "-s", "-6", "route", "show", locator],
                         capture_output=True, text=True, check=True).stdout
    match = re.search(r"packets (\d+)", out)
    assert match, f"no seg6local counters on {netns} {locator}: {out}"
    return int(match.group(1))


SEND_AND_RECEIVE = textwrap.dedent("""
    import socket, subprocess, sys
    dst_ns, dst, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rx = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    rx.setsockopt(17, 102, 1)   # UDP_NO_CHECK6_RX: uSID shifts invalidate the checksum
    rx.bind(("::", 48123)); rx.settimeout(3)
    sender = ("import socket; s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); "
              "s.setsockopt(17, 101, 1); "
              f"[s.sendto(b'mrclab-test', ({dst!r}, 48123)) for _ in range({count})]")
    subprocess.run(["ip", "netns", "exec", dst_ns, "/usr/bin/python3", "-c", sender], check=True)
    got = 0
    try:
        while got < count:
            rx.recv(64); got += 1
    except socket.timeout:
        pass
    print(got)
""")


def test_deploy_verify_and_destroy_leave_nothing(deployed):
    name = deployed("t-life")
    state = inspect(name)
    assert state["state"] == "ready"
    assert state["deploy"]["verified"]["bgp_sessions_established"] == 32, "ready means every session was seen Established"
    live = state["live"]
    assert live["bgp_expected"] == 32
    wait_bgp_established(name, 32)
    for node, daemons in live["daemons"].items():
        assert {d for d, info in daemons.items() if info["alive"]} == \
            {"zebra", "bfdd", "staticd", "bgpd"}, node

    # A uSID container through p0-spine1, chosen by us, crosses p0-spine1 and only it.
    nodes = {n["name"]: n for n in state["plan"]["nodes"]}
    usid = lambda n: nodes[n]["usid"]
    host5_p0 = next(p for p in nodes["host5"]["ports"] if p["plane"] == 0)
    dst = f"fcbb:0:{usid('p0-leaf0')}:{usid('p0-spine1')}:{usid('p0-leaf2')}:{host5_p0['usid']}::"
    before = {s: usid_counter(f"{name}-{s}", f"fcbb:0:{usid(s)}::/48")
              for s in ("p0-spine0", "p0-spine1")}
    # The receiver runs in host5, the sender in host0.
    got = subprocess.run(["ip", "netns", "exec", f"{name}-host5", "/usr/bin/python3", "-c",
                          SEND_AND_RECEIVE, f"{name}-host0", dst, "20"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert int(got) == 20
    after = {s: usid_counter(f"{name}-{s}", f"fcbb:0:{usid(s)}::/48")
             for s in ("p0-spine0", "p0-spine1")}
    assert after["p0-spine1"] - before["p0-spine1"] >= 20
    assert after["p0-spine0"] == before["p0-spine0"]

    # vtysh through exec reaches the node's own bgpd.
    out = mrclab("exec", name, "p0-leaf0", "--", "vtysh", "-c", "show bgp ipv6 unicast summary json")
    peers = json.loads(out.stdout)["peers"]
    assert sorted(peers) == ["spine0", "spine1"]
    qdiscs = mrclab("exec", name, "host3", "--", "tc", "qdisc", "show", "dev", "eth1").stdout
    assert "tbf" in qdiscs and "rate 1Gbit" in qdiscs, "link_rate: 1Gbit shapes every link end"
    hostname = mrclab("exec", name, "p1-spine0", "--", "hostname").stdout.strip()
    assert hostname == "p1-spine0"

    pids = journal_pids(name)
    assert len(pids) == 48
    report = json.loads(mrclab("destroy", name, "--json").stdout)
    assert report["namespaces_removed"] == 20 and not report["problems"]
    assert_nothing_left(name, pids)


def test_static_routing_lab(deployed):
    name = deployed("t-static", base="clos2-static.yaml")
    state = inspect(name)
    assert state["state"] == "ready"
    assert state["live"]["bgp_expected"] == 0
    for daemons in state["live"]["daemons"].values():
        assert {d for d, i in daemons.items() if i["alive"]} == {"zebra", "staticd"}
    routes = mrclab("exec", name, "p0-leaf0", "--", "ip", "-6", "route").stdout
    assert "proto static" in routes and "proto bgp" not in routes
    # A static switch's routes go in through vtysh, one transaction: staticd reading them from
    # its own file commits each line alone (quadratic: a 192-switch lab never converged).
    node_dir = STATE / name / "nodes" / "p0-leaf0"
    assert "ipv6 route" not in (node_dir / "staticd.conf").read_text()
    generated = route_lines(mrclab("deploy", lab_file_of(name), "--frr-config", "p0-leaf0").stdout)
    assert len(generated) > 8 and running_route_lines(node_dir) == generated
    # Restarted daemons get them again (switch_down reverted).
    fault = json.loads(mrclab("fault", "apply", name, "switch_down", "p0-leaf0", "--json").stdout)["id"]
    mrclab("fault", "revert", name, fault)
    assert running_route_lines(node_dir) == generated
    installed = routes.count("proto static")
    wait_for(lambda: mrclab("exec", name, "p0-leaf0", "--", "ip", "-6", "route").stdout.count("proto static")
             == installed, timeout=30, what=f"p0-leaf0's {installed} static routes back in its kernel")


def route_lines(config):
    return sorted(line.strip() for line in config.splitlines() if line.strip().startswith("ipv6 route"))


def running_route_lines(node_dir):
    out = subprocess.run(["vtysh", "--config_dir", str(node_dir), "--vty_socket", str(node_dir),
                          "-d", "staticd", "-c", "show running-config"],
                         capture_output=True, text=True, check=True).stdout
    return route_lines(out)


def lab_file_of(name):
    return inspect(name)["source"]


def test_mixed_lab_with_explicit_nodes(deployed):
    name = deployed("t-mixed", base="mixed.yaml")
    assert inspect(name)["state"] == "ready"


def test_two_labs_side_by_side(deployed):
    a = deployed("t-side-a")
    b = deployed("t-side-b")
    listed = {entry["lab"]: entry for entry in json.loads(mrclab("list", "--json").stdout)}
    assert listed[a]["state"] == "ready" and listed[b]["state"] == "ready"
    pids_a = journal_pids(a)
    mrclab("destroy", a)
    assert_nothing_left(a, pids_a)
    wait_bgp_established(b, 32)  # destroying one lab did not touch the other


def test_destroy_after_deployer_was_sigkilled(tmp_path):
    name = "t-kill"
    path = lab_file(tmp_path, name)
    deployer = subprocess.Popen([MRCLAB, "deploy", str(path), "--quiet"])
    try:
        wait_for(lambda: len(journal_pids(name)) >= 20, what="daemons to start")
    finally:
        deployer.send_signal(signal.SIGKILL)
        deployer.wait()
    pids = journal_pids(name)
    assert any(alive(pid) for pid in pids)
    mrclab("destroy", name)
    assert_nothing_left(name, pids)


def test_destroy_ends_what_runs_in_the_labs_namespaces_unjournaled(deployed):
    """What a deployer SIGKILLed between fork and exec leaves: a process in a lab namespace that
    no journal line, pid file or command line names. Destroy finds it by its namespace."""
    name = deployed("t-stray")
    stray = subprocess.Popen(["ip", "netns", "exec", f"{name}-host0", "sleep", "300"])
    try:
        wait_for(lambda: Path(f"/proc/{stray.pid}/comm").read_text().strip() == "sleep", what="sleep to start")
        mrclab("destroy", name)
        assert stray.wait(timeout=10) == -signal.SIGTERM
    finally:
        if stray.poll() is None:
            stray.kill()
            stray.wait()
    assert_nothing_left(name)


def test_destroy_removes_the_temp_dir_of_a_daemon_killed_before_it(deployed):
    name = deployed("t-crash")
    entries = [line.split() for line in (STATE / name / "journal").read_text().splitlines()
               if line.startswith("process ")]
    pid = next(int(e[1]) for e in entries if e[3] == "zebra")   # process PID NETNS WHAT
    tmp = Path(f"/var/tmp/frr/zebra.{pid}")
    assert tmp.exists()
    os.kill(pid, signal.SIGKILL)   # a crash: nothing of FRR's own cleanup runs
    wait_for(lambda: not Path(f"/proc/{pid}").exists(), what=f"zebra {pid} to be gone")
    assert tmp.exists()
    mrclab("destroy", name)
    assert not tmp.exists(), "destroy left the killed daemon's /var/tmp/frr directory"
    assert_nothing_left(name)


def test_interrupted_deploy_rolls_back(tmp_path):
    name = "t-intr"
    path = lab_file(tmp_path, name)
    deployer = subprocess.Popen([MRCLAB, "deploy", str(path), "--quiet"],
                                stderr=subprocess.PIPE, text=True)
    wait_for(lambda: len(journal_pids(name)) >= 12, what="daemons to start")
    pids = journal_pids(name)
    deployer.send_signal(signal.SIGINT)
    _, err = deployer.communicate(timeout=60)
    assert deployer.returncode == 130, err
    assert "rolled back" in err
    assert_nothing_left(name, journal_pids(name) or pids)


def test_deploy_not_ready_before_its_deadline_fails_and_rolls_back(tmp_path):
    """An operation that was tried and failed exits 1 (bad input exits 2): a zero timeout checks
    readiness once, right after the daemons start, before any BGP session can be up."""
    name = "t-late"
    out = mrclab("deploy", lab_file(tmp_path, name), "--timeout", "0", "--quiet", check=False)
    assert out.returncode == 1, out.stderr
    assert out.stderr.count("\n") == 1 and "not ready before the deadline" in out.stderr, out.stderr
    assert_nothing_left(name, [])


def test_graph_is_valid_graphviz():
    dot = mrclab("graph", "labs/clos2.yaml").stdout
    assert 'subgraph cluster_p1' in dot and '"p1-leaf3" -- "p1-spine1"' in dot
    svg = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, check=True)
    assert "<svg" in svg.stdout


def test_inspect_of_a_lab_file_shows_its_plan_without_deploying():
    # A lab only the simulation can hold: its plan, and nothing made.
    info = json.loads(mrclab("inspect", "--json", "labs/clos8-1k.yaml").stdout)
    assert info["lab"] == "clos8-1k" and info["state"].startswith("not deployed"), info
    assert len(info["plan"]["nodes"]) == 1408 and info["plan"]["host_usids"] == "leaf-local"
    assert not (STATE / "clos8-1k").exists()
    text = mrclab("inspect", "labs/clos2.yaml").stdout
    assert text.startswith("lab clos2  state not deployed") and "p1-leaf3:spine1" in text, text
    bad = mrclab("inspect", "labs/no-such-lab.yaml", check=False)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "no-such-lab.yaml" in bad.stderr, bad.stderr


def test_lab_sysctls_are_set_by_selector_and_a_refused_value_rolls_back(deployed, tmp_path):
    sysctls = ("link_rate: 1Gbit\nsysctls:\n"
               "  - match: {role: leaf, plane: 0}\n    set: {net.ipv6.fib_multipath_hash_policy: 0}\n"
               "  - match: {kind: host}\n    set: {net.ipv6.icmp.ratelimit: 0}\n")
    name = deployed("t-sysctl", **{"link_rate: 1Gbit\n": sysctls})

    def read(node, key):
        return mrclab("exec", name, node, "--", "cat", "/proc/sys/" + key.replace(".", "/")).stdout.strip()

    assert read("p0-leaf0", "net.ipv6.fib_multipath_hash_policy") == "0"
    assert read("p0-leaf3", "net.ipv6.fib_multipath_hash_policy") == "0"
    assert read("p1-leaf0", "net.ipv6.fib_multipath_hash_policy") == "1"   # mrclab's own elsewhere
    assert read("p0-spine0", "net.ipv6.fib_multipath_hash_policy") == "1"
    assert read("host5", "net.ipv6.icmp.ratelimit") == "0"
    assert read("p0-leaf0", "net.ipv6.icmp.ratelimit") != "0"
    plan = {n["name"]: n for n in json.loads(mrclab("inspect", name, "--json").stdout)["plan"]["nodes"]}
    assert plan["p0-leaf1"]["sysctls"] == {"net.ipv6.fib_multipath_hash_policy": "0"}

    bad_name = "t-sysctl-bad"
    bad = lab_file(tmp_path, bad_name, **{"link_rate: 1Gbit\n": "link_rate: 1Gbit\nsysctls:\n  - match: {node: p0-spine1}\n"
                                                               "    set: {net.ipv6.fib_multipath_hash_policy: 7}\n"})
    proc = mrclab("deploy", bad, "--quiet", check=False)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith(
        f"mrclab: error: {bad}: sysctls[0].set.net.ipv6.fib_multipath_hash_policy: '7' cannot be set on p0-spine1: ")
    assert_nothing_left(bad_name)
