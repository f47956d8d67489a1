"""`mrclab fault`: every fault kind applied through the CLI to one real clos2 lab, its effect
observed in the kernel and in FRR, reverted, and the effect observed gone. Also bad input,
revert --all after a SIGKILLed process, and destroy of a lab with active faults."""
import json
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

from conftest import (MRCLAB, STATE, alive, assert_nothing_left, journal_pids, lab_file, mrclab,
                      wait_for)

LAB = "t-faults"

# UDP datagrams from one namespace to an address in another; prints how many arrived. The
# sockets are made inside the namespaces with setns(2), so no process per datagram.
PROBE = textwrap.dedent("""
    import ctypes, os, socket, sys
    libc = ctypes.CDLL(None, use_errno=True)
    def socket_in(netns):
        home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        target = os.open("/run/netns/" + netns, os.O_RDONLY)
        try:
            assert libc.setns(target, 0x40000000) == 0, ctypes.get_errno()
            return socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        finally:
            libc.setns(home, 0x40000000); os.close(target); os.close(home)
    src, dst, address, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    rx = socket_in(dst); rx.bind((address, 48125)); rx.settimeout(0.5)
    tx = socket_in(src)
    for i in range(count):
        tx.sendto(b"mrclab-fault-probe", (address, 48125))
    got = 0
    try:
        while got < count:
            rx.recv(64); got += 1
    except socket.timeout:
        pass
    print(got)
""")


class Lab:
    def __init__(self, name):
        self.name = name
        plan = json.loads(mrclab("inspect", name, "--json").stdout)["plan"]
        self.links = plan["links"]
        self.switches = [n["name"] for n in plan["nodes"] if n["kind"] == "switch"]
        self.fabric = {n["name"]: [i["name"] for i in n["interfaces"]
                                   if i["peer_node"].startswith("p")]
                       for n in plan["nodes"] if n["kind"] == "switch"}

    def ns(self, node):
        return f"{self.name}-{node}"

    def link(self, node, interface):
        """The plan's link with this end: (this end, the other end), each with its address."""
        link = self.links[self.index_of(node, interface)]
        return (link["a"], link["b"]) if link["a"]["node"] == node else (link["b"], link["a"])

    def index_of(self, node, interface):
        for link in self.links:
            for end in (link["a"], link["b"]):
                if end["node"] == node and end["interface"] == interface:
                    return link["index"]
        raise KeyError(f"{node}:{interface}")

    def apply(self, kind, target, *options):
        out = mrclab("fault", "apply", self.name, kind, target, *options, "--json")
        return json.loads(out.stdout)["id"]

    def revert(self, fault_id):
        mrclab("fault", "revert", self.name, fault_id)

    def active(self):
        return json.loads(mrclab("fault", "list", self.name, "--json").stdout)

    def vty(self, node, daemon, *commands):
        """Replies of one daemon to commands over one vty connection (what vtysh speaks)."""
        path = STATE / self.name / "nodes" / node / f"{daemon}.vty"
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(str(path))
            replies = []
            for command in commands:
                s.sendall(command.encode() + b"\0")
                buf = b""
                while len(buf) < 4 or buf[-4:-1] != b"\0\0\0":
                    chunk = s.recv(65536)
                    assert chunk, f"{daemon} of {node} closed the connection"
                    buf += chunk
                replies.append(buf[:-4].decode())
            return replies

    def bgp(self, node):
        """peer interface -> its summary entry (state, connectionsDropped, ...)."""
        try:
            reply = self.vty(node, "bgpd", "show bgp ipv6 unicast summary json")[0]
        except OSError:
            return {}
        return json.loads(reply).get("peers", {})

    def established(self, node, peer):
        return self.bgp(node).get(peer, {}).get("state") == "Established"

    def all_established(self):
        return all(self.established(sw, peer) for sw in self.switches for peer in self.fabric[sw])

    def running_config(self, node, daemon):
        return self.vty(node, daemon, "enable", "show running-config")[1]

    def pid(self, node, daemon):
        return int((STATE / self.name / "nodes" / node / f"{daemon}.pid").read_text())

    def link_flags(self, node, interface):
        out = subprocess.run(["ip", "-n", self.ns(node), "-j", "link", "show", "dev", interface],
                             capture_output=True, text=True, check=True).stdout
        return set(json.loads(out)[0]["flags"])

    def is_up(self, node, interface):
        flags = self.link_flags(node, interface)
        return "UP" in flags and "LOWER_UP" in flags

    def probe(self, src, dst, address, count=20):
        out = subprocess.run([sys.executable, "-c", PROBE, self.ns(src), self.ns(dst), address,
                              str(count)], capture_output=True, text=True, check=True).stdout
        return int(out)

    def nft_tables(self, node):
        out = subprocess.run(["ip", "netns", "exec", self.ns(node), "nft", "list", "tables"],
                             capture_output=True, text=True, check=True).stdout
        return [line for line in out.splitlines() if "mrclab_fault_" in line]

    def tbf_rate(self, node, interface):
        """Rate of the root tbf in bit/s (tc's JSON gives bytes/s), None without one."""
        out = subprocess.run(["tc", "-n", self.ns(node), "-j", "qdisc", "show", "dev", interface],
                             capture_output=True, text=True, check=True).stdout
        for qdisc in json.loads(out):
            if qdisc.get("root") and qdisc["kind"] == "tbf":
                return qdisc["options"]["rate"] * 8
        return None


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    if (STATE / LAB).exists():
        mrclab("destroy", LAB, check=False)
    path = lab_file(tmp_path_factory.mktemp("faults"), LAB)
    mrclab("deploy", path, "--quiet")
    try:
        yield Lab(LAB)
    finally:
        if (STATE / LAB).exists():
            pids = journal_pids(LAB)
            mrclab("destroy", LAB, check=False)
            assert_nothing_left(LAB, pids)


@pytest.fixture
def healthy(lab):
    """Each test starts on a converged lab and leaves no fault behind."""
    wait_for(lab.all_established, timeout=60, what="every BGP session Established")
    yield lab
    if (STATE / LAB).exists():
        left = lab.active()
        if left:
            mrclab("fault", "revert", LAB, "--all")
        assert not left, f"the test left faults active: {left}"


def test_link_down_and_up(healthy):
    lab = healthy
    fid = lab.apply("link_down", "p0-leaf0:spine0")
    assert not lab.is_up("p0-leaf0", "spine0") and not lab.is_up("p0-spine0", "leaf0")
    assert "UP" not in lab.link_flags("p0-spine0", "leaf0"), "both ends administratively down"
    wait_for(lambda: not lab.established("p0-spine0", "leaf0"), timeout=10,
             what="the session over the downed link to leave Established")
    assert [f["id"] for f in lab.active()] == [fid]
    lab.revert(fid)
    assert lab.is_up("p0-leaf0", "spine0") and lab.is_up("p0-spine0", "leaf0")
    wait_for(lambda: lab.established("p0-spine0", "leaf0"), timeout=30, what="session back")
    assert lab.active() == []


def test_blackhole_keeps_carrier_and_drops(healthy):
    lab = healthy
    a, b = lab.link("p0-leaf1", "spine1")
    assert lab.probe(a["node"], b["node"], b["address"]) == 20
    fid = lab.apply("blackhole", "p0-leaf1:spine1")
    assert lab.is_up(a["node"], a["interface"]) and lab.is_up(b["node"], b["interface"])
    assert lab.probe(a["node"], b["node"], b["address"]) == 0
    assert lab.probe(b["node"], a["node"], a["address"]) == 0
    assert len(lab.nft_tables(a["node"])) == 1 and len(lab.nft_tables(b["node"])) == 1
    lab.revert(fid)
    assert lab.nft_tables(a["node"]) == [] and lab.nft_tables(b["node"]) == []
    assert lab.probe(a["node"], b["node"], b["address"]) == 20
    assert lab.probe(b["node"], a["node"], a["address"]) == 20

    # One direction: a -> b dropped at b's ingress, b -> a untouched.
    fid = lab.apply("blackhole", f"{a['node']}--{b['node']}", "--direction", "a-b")
    assert lab.probe(a["node"], b["node"], b["address"]) == 0
    assert lab.probe(b["node"], a["node"], a["address"]) == 20
    assert lab.nft_tables(a["node"]) == [] and len(lab.nft_tables(b["node"])) == 1
    lab.revert(fid)
    assert lab.probe(a["node"], b["node"], b["address"]) == 20


def test_loss_drops_about_the_given_fraction(healthy):
    lab = healthy
    a, b = lab.link("p1-leaf0", "spine0")
    assert lab.probe(a["node"], b["node"], b["address"], 10) == 10  # neighbour resolved
    fid = lab.apply("loss", "p1-leaf0:spine0", "--rate-loss", "0.5", "--direction", "a-b")
    got = lab.probe(a["node"], b["node"], b["address"], 200)
    assert 40 <= got <= 160, f"{got}/200 arrived at 50% loss"
    assert lab.probe(b["node"], a["node"], a["address"], 200) == 200, "other direction intact"
    lab.revert(fid)
    assert lab.probe(a["node"], b["node"], b["address"], 200) == 200


def test_rate_replaces_the_shaping_and_restores_it(healthy):
    lab = healthy
    assert lab.tbf_rate("host0", "eth0") == 1_000_000_000
    fid = lab.apply("rate", "host0:eth0", "--rate", "100Mbit")
    assert lab.tbf_rate("host0", "eth0") == 100_000_000
    assert lab.tbf_rate("p0-leaf0", "host0") == 100_000_000
    lab.revert(fid)
    assert lab.tbf_rate("host0", "eth0") == 1_000_000_000
    assert lab.tbf_rate("p0-leaf0", "host0") == 1_000_000_000


def test_switch_down_and_back(healthy):
    lab = healthy
    daemons = ("zebra", "bfdd", "staticd", "bgpd")
    old = {d: lab.pid("p0-spine1", d) for d in daemons}
    fid = lab.apply("switch_down", "p0-spine1")
    assert not any(alive(pid) for pid in old.values()), "its daemons are stopped"
    for leaf in ("p0-leaf0", "p0-leaf1", "p0-leaf2", "p0-leaf3"):
        assert not lab.is_up(leaf, "spine1")
    wait_for(lambda: not any(lab.established(f"p0-leaf{i}", "spine1") for i in range(4)),
             timeout=10, what="the neighbours' sessions to p0-spine1 to go down")
    lab.revert(fid)  # returns once every session of p0-spine1 is Established
    assert all(lab.established("p0-spine1", peer) for peer in lab.fabric["p0-spine1"])
    new = {d: lab.pid("p0-spine1", d) for d in daemons}
    assert all(alive(pid) for pid in new.values())
    assert not set(new.values()) & set(old.values())
    assert set(new.values()) <= set(journal_pids(LAB)), "destroy will find the new daemons"


def test_plane_down_takes_every_host_port_of_the_plane(healthy):
    lab = healthy
    fid = lab.apply("plane_down", "1")
    for h in range(8):
        assert not lab.is_up(f"host{h}", "eth1")
        assert lab.is_up(f"host{h}", "eth0"), "plane 0 untouched"
    assert not lab.is_up("p1-leaf0", "host0")
    lab.revert(fid)
    for h in range(8):
        assert lab.is_up(f"host{h}", "eth1")
    # The kernel dropped host0's plane-1 routes with the port; the revert put them back.
    routes = subprocess.run(["ip", "-n", lab.ns("host0"), "-6", "route", "show", "dev", "eth1"],
                            capture_output=True, text=True, check=True).stdout
    assert "fd00:1::/32 via" in routes and "fcbb:0:2000::/36 via" in routes
    a, b = lab.link("host0", "eth1")
    assert lab.probe(a["node"], b["node"], b["address"]) == 20


def test_bgp_reset_restart_and_clear(healthy):
    lab = healthy
    old = lab.pid("p1-leaf2", "bgpd")
    fid = lab.apply("bgp_reset", "p1-leaf2", "--mode", "restart")
    assert not alive(old)
    wait_for(lambda: not lab.established("p1-spine0", "leaf2"), timeout=10,
             what="the spine's session to the restarted leaf to go down")
    lab.revert(fid)
    assert lab.pid("p1-leaf2", "bgpd") != old and alive(lab.pid("p1-leaf2", "bgpd"))
    assert all(lab.established("p1-leaf2", peer) for peer in ("spine0", "spine1"))

    dropped = {p: s["connectionsDropped"] for p, s in lab.bgp("p1-leaf3").items()}
    bgpd = lab.pid("p1-leaf3", "bgpd")
    fid = lab.apply("bgp_reset", "p1-leaf3")  # clear bgp *
    wait_for(lambda: all(s["connectionsDropped"] > dropped[p]
                         for p, s in lab.bgp("p1-leaf3").items()),
             timeout=10, what="every session of p1-leaf3 to be reset")
    assert lab.pid("p1-leaf3", "bgpd") == bgpd, "clear keeps the daemon"
    lab.revert(fid)
    assert lab.active() == []


def test_config_change_and_revert(healthy):
    lab = healthy
    line = "neighbor spine0 description mrclab-fault-test"
    fid = lab.apply("config_change", "p0-leaf2", "--config", "router bgp 4200010002",
                    "--config", f" {line}", "--revert-config", "router bgp 4200010002",
                    "--revert-config", " no neighbor spine0 description")
    assert line in lab.running_config("p0-leaf2", "bgpd")
    lab.revert(fid)
    assert line not in lab.running_config("p0-leaf2", "bgpd")

    # No revert lines: the revert reloads the configuration saved at apply (frr-reload.py).
    # A shut interface is the case a restart from the deployed files cannot undo: zebra does
    # not bring up an interface whose configuration merely lacks "shutdown".
    zebra = lab.pid("p0-leaf2", "zebra")
    before = lab.running_config("p0-leaf2", "zebra")
    fid = lab.apply("config_change", "p0-leaf2", "--config", "interface spine1", "--config", " shutdown")
    assert "UP" not in lab.link_flags("p0-leaf2", "spine1")
    wait_for(lambda: not lab.established("p0-leaf2", "spine1"), timeout=30,
             what="the session over the shut interface to go down")
    assert (STATE / LAB / "faults" / str(fid) / "zebra.conf").is_file(), "saved at apply"
    lab.revert(fid)  # returns once the link is up and the switch's sessions are Established
    assert lab.is_up("p0-leaf2", "spine1")
    assert all(lab.established("p0-leaf2", peer) for peer in ("spine0", "spine1"))
    assert lab.running_config("p0-leaf2", "zebra") == before
    assert lab.pid("p0-leaf2", "zebra") == zebra, "restored without a restart"
    assert not (STATE / LAB / "faults" / str(fid)).exists()
    assert lab.active() == []


def test_config_change_revert_that_cannot_restore_fails_and_stays_active(healthy):
    lab = healthy
    fid = lab.apply("config_change", "p1-leaf1", "--config", "interface spine0",
                    "--config", " description mrclab-unrestorable")
    saved = STATE / LAB / "faults" / str(fid) / "zebra.conf"
    good = saved.read_text()
    saved.write_text(good.replace("frr version", "no-such-command here\nfrr version", 1))
    out = mrclab("fault", "revert", LAB, str(fid), check=False)
    assert out.returncode == 1, out.stderr
    assert "could not restore the saved configuration of zebra" in out.stderr, out.stderr
    assert "it stays active" in out.stderr
    assert [f["id"] for f in lab.active()] == [fid]
    saved.write_text(good)
    lab.revert(fid)
    assert "mrclab-unrestorable" not in lab.running_config("p1-leaf1", "zebra")
    assert lab.active() == []


def test_refused_config_line_changes_nothing(healthy):
    lab = healthy
    before = lab.running_config("p0-leaf3", "bgpd")
    out = mrclab("fault", "apply", LAB, "config_change", "p0-leaf3",
                 "--config", "router bgp 4200010003",
                 "--config", " neighbor spine0 description half-applied",
                 "--config", " neighbor nosuchpeer shutdown",
                 "--revert-config", "router bgp 4200010003",
                 "--revert-config", " no neighbor spine0 description", check=False)
    assert out.returncode == 2, out.stderr
    assert "config_lines[2]" in out.stderr and "nosuchpeer" in out.stderr
    assert "Specify remote-as or peer-group" in out.stderr, "FRR's own message"
    assert lab.running_config("p0-leaf3", "bgpd") == before
    assert lab.active() == []


@pytest.mark.parametrize("args, message", [
    (["link_down", "p0-leaf0:spine9"], "p0-leaf0 has no interface 'spine9'"),
    (["link_down", "p9-leaf0:spine0"], "unknown node 'p9-leaf0'"),
    (["link_down", "host0--host1"], "no link joins host0 and host1"),
    (["blackhole", "p0-leaf0"], "expected NODE:INTERFACE"),
    (["switch_down", "host3"], "'host3' is a host, not a switch"),
    (["plane_down", "2"], "2 is not a plane of lab"),
    (["rate", "host0:eth0", "--rate", "0bit"], "must be positive"),
    (["rate", "host0:eth0"], "rate needs --rate"),
    (["rate", "host0:eth0", "--rate", "1Gbit"], "--rate: 1Gbit is not below the link_rate of lab 't-faults' (1Gbit)"),
    (["loss", "host0:eth0", "--rate-loss", "1.5"], "outside 0..1"),
    (["link_down", "host0:eth0", "--rate", "1Gbit"], "--rate applies to rate only"),
    (["bgp_reset", "p0-leaf0", "--mode", "hard"], "'hard' is not clear or restart"),
    (["flap", "p0-leaf0"], "KIND 'flap' is not one of"),
    (["config_change", "p0-leaf0", "--config", "end"], "enters and leaves configure mode"),
])
def test_bad_input_is_refused_with_a_reason(lab, args, message):
    out = mrclab("fault", "apply", LAB, *args, check=False)
    assert out.returncode == 2 and message in out.stderr, out.stderr
    assert out.stderr.count("\n") == 1, "one line"
    assert lab.active() == []


def test_bad_revert_ids(lab):
    out = mrclab("fault", "revert", LAB, "9999", check=False)
    assert out.returncode == 2 and "not in the journal" in out.stderr
    out = mrclab("fault", "revert", LAB, check=False)
    assert out.returncode == 2 and "give a fault ID or --all" in out.stderr


def test_ids_are_unique_across_concurrent_processes(healthy):
    lab = healthy
    procs = [subprocess.Popen([MRCLAB, "fault", "apply", LAB, "rate", f"host{h}:eth0", "--rate",
                               "500Mbit", "--json"], stdout=subprocess.PIPE, text=True)
             for h in range(4)]
    ids = [json.loads(p.communicate(timeout=30)[0])["id"] for p in procs]
    assert len(set(ids)) == 4
    assert sorted(f["id"] for f in lab.active()) == sorted(ids)
    out = json.loads(mrclab("fault", "revert", LAB, "--all", "--json").stdout)
    assert sorted(r["id"] for r in out["reverted"]) == sorted(ids)
    assert all(lab.tbf_rate(f"host{h}", "eth0") == 1_000_000_000 for h in range(4))


def test_revert_all_finishes_what_a_sigkilled_process_left(healthy):
    lab = healthy
    fid = lab.apply("switch_down", "p1-spine1")
    known = set(journal_pids(LAB))
    reverter = subprocess.Popen([MRCLAB, "fault", "revert", LAB, str(fid)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Killed once it restarted the daemons, while it waits for their BGP sessions (a second
    # or so): the fault is half reverted and still active in the journal.
    deadline = time.monotonic() + 30
    while len(set(journal_pids(LAB)) - known) < 4 and time.monotonic() < deadline:
        time.sleep(0.005)
    reverter.send_signal(signal.SIGKILL)
    reverter.wait()
    assert reverter.returncode == -signal.SIGKILL, "the revert finished before it was killed"
    assert [f["id"] for f in lab.active()] == [fid]

    # A crash in the middle of an apply: journalled, half made (one end's table only).
    a, b = lab.link("p1-leaf1", "spine1")
    journal = STATE / LAB / "faults.jsonl"
    crashed = max(json.loads(line)["id"] for line in journal.read_text().splitlines()) + 1
    action = {"kind": "blackhole", "link": lab.index_of("p1-leaf1", "spine1"), "direction": "both"}
    with journal.open("a") as f:
        f.write(json.dumps({"op": "apply", "id": crashed, "action": action, "t": time.time()}) + "\n")
    subprocess.run(["ip", "netns", "exec", lab.ns(b["node"]), "nft",
                    f"add table netdev mrclab_fault_{crashed}"], check=True)

    out = mrclab("fault", "revert", LAB, "--all")
    assert "2 fault(s) reverted" in out.stdout
    assert lab.active() == []
    assert lab.nft_tables(b["node"]) == []
    assert all(lab.established("p1-spine1", peer) for peer in lab.fabric["p1-spine1"])


def test_destroy_with_active_faults_leaves_nothing(lab):
    wait_for(lab.all_established, timeout=60, what="every BGP session Established")
    lab.apply("blackhole", "p0-leaf0:spine1")
    lab.apply("rate", "host2:eth1", "--rate", "10Mbit")
    lab.apply("switch_down", "p1-spine0")
    lab.apply("bgp_reset", "p0-leaf3", "--mode", "restart")
    lab.apply("config_change", "p1-leaf0", "--config", "interface spine0",
              "--config", " description left-active")
    assert len(lab.active()) == 5
    pids = journal_pids(LAB)
    out = json.loads(mrclab("destroy", LAB, "--json").stdout)
    assert not out["problems"]
    assert_nothing_left(LAB, pids)
