"""The fabric, job and failures the studies share: options, the lab file, the scenario text, the
failure rows, one result cell (a transport over one or more seeds' drills), and what a run's
links.csv says about the fabric's links."""
import csv
import json
import re
from pathlib import Path

from mrclab_reports.studies.runner import BadArguments

FABRIC_END = re.compile(r"^p\d+-(leaf\d+:spine\d+|spine\d+:leaf\d+)$")  # leaf-spine link ends


def add_arguments(p, failures=True):
    p.add_argument("--hosts", type=int, default=1024, help="hosts in the fabric (default 1024)")
    p.add_argument("--hosts-per-leaf", type=int, default=32, help="hosts per leaf (default 32)")
    p.add_argument("--spines", type=int, default=None,
                   help="spines per plane (default: hosts per leaf, a non-blocking fabric)")
    p.add_argument("--planes", type=int, default=8, help="planes (default 8, as the paper's fabric)")
    p.add_argument("--job-hosts", type=int, default=64, help="hosts the job trains on, spread over every leaf (%(default)s)")
    p.add_argument("--size", default="4MiB", help="the job's ring all-reduce per step (4MiB)")
    p.add_argument("--compute", default="1ms", help="the job's compute phase per step (1ms)")
    if failures:
        p.add_argument("--links", type=int, default=None,
                       help="leaf-spine links a link failure hits, in one plane (8, or all of a plane that has fewer)")
        p.add_argument("--failed-spines", type=int, default=None,
                       help="spines of one plane the spine failure takes down (4, or all of a plane that has fewer)")
    p.add_argument("--seeds", type=int, default=1,
                   help="run every row with this many seeds (seed, seed+1, ...); a cell then counts the runs "
                        "that rode through (1)")


def add_split_arguments(p):
    """The options of the studies that set RC split over k QPs per peer against MRC spraying
    (collisions, spraying), fault-free collectives on one job host per leaf."""
    # One job host per leaf (at the default 1,024 hosts, 32 per leaf): every rank pair crosses the
    # spines, where ECMP decides.
    p.set_defaults(job_hosts=32)
    p.add_argument("--qps-list", default="1,2,4,8",
                   help="QPs per peer of the RC columns, each chunk split over them (1,2,4,8)")
    p.add_argument("--evs", type=int, default=32, help="EVs per MRC QP (32)")
    p.add_argument("--collectives", default="all_reduce,all_to_all",
                   help="the rows' collectives, of --size each (all_reduce,all_to_all)")


def int_list(text, option, high):
    """'1,2,4,8' -> [1, 2, 4, 8], each 1 to high (BadArguments naming the option otherwise)."""
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        raise BadArguments(f"{option} {text}: expected numbers separated by commas") from None
    if not values or any(v < 1 or v > high for v in values):
        raise BadArguments(f"{option} {text}: every value must be 1 to {high}")
    return values


def collectives(text):
    """'all_reduce,all_to_all' -> ['all_reduce', 'all_to_all'] (BadArguments for an unknown one)."""
    kinds = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")
    out = [c.strip() for c in text.split(",") if c.strip()]
    if not out or any(c not in kinds for c in out):
        raise BadArguments(f"--collectives {text}: expected all_reduce, all_gather, reduce_scatter or all_to_all")
    return out


def rc_columns(a):
    """{name: transport line}: RC over ECMP with each chunk split over k QPs per peer, k in --qps-list."""
    return {f"rc-{q}qp": f"{{name: rc-{q}qp, transport: rc, ev_mode: udp, qps_per_peer: {q}}}"
            for q in int_list(a.qps_list, "--qps-list", 64)}


def smoke(a):
    """32 hosts on 8 planes of 4 leaves and 4 spines, a job on 16 of them."""
    a.hosts, a.hosts_per_leaf, a.spines, a.job_hosts, a.size = 32, 8, 4, 16, "1MiB"
    if hasattr(a, "links"):
        a.links = 4


def check(a):
    """Fills in defaults and refuses what makes no fabric or job (BadArguments: exit 2)."""
    a.spines = a.spines or a.hosts_per_leaf
    for option, value in (("--planes", a.planes), ("--hosts", a.hosts), ("--hosts-per-leaf", a.hosts_per_leaf),
                          ("--spines", a.spines), ("--seeds", a.seeds)):
        if value < 1:
            raise BadArguments(f"{option} {value}: must be at least 1")
    if a.hosts % a.hosts_per_leaf:
        raise BadArguments(f"--hosts {a.hosts} is not a multiple of --hosts-per-leaf {a.hosts_per_leaf}")
    if not 2 <= a.job_hosts <= a.hosts:
        raise BadArguments(f"--job-hosts {a.job_hosts}: must be 2 to --hosts ({a.hosts})")
    if hasattr(a, "failed_spines"):
        a.links = counted(a.links, 8, "--links", plane_links(a), "leaf-spine links")
        a.failed_spines = counted(a.failed_spines, 4, "--failed-spines", a.spines, "spines")


def counted(value, default, option, plane_has, what):
    """How many of a plane's `what` a fault takes: `value` as given, 1 to what one plane has
    (BadArguments naming the option otherwise); not given, `default` or all of a smaller plane's."""
    if value is None:
        return min(default, plane_has)
    if not 1 <= value <= plane_has:
        raise BadArguments(f"{option} {value}: must be 1 to the {plane_has} {what} of one plane")
    return value


def leaves(a):
    return a.hosts // a.hosts_per_leaf


def plane_links(a):
    """Leaf-spine links of one plane."""
    return leaves(a) * a.spines


LINK_GBIT = 100  # every link of the study's fabric
_RATE_UNITS = {"bit": 1, "kbit": 1e3, "Mbit": 1e6, "Gbit": 1e9, "Tbit": 1e12}


def slower_rate(text, option):
    """A rate in lab syntax that slows the fabric's links (BadArguments naming the option otherwise)."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(bit|kbit|Mbit|Gbit|Tbit)", text)
    if not m:
        raise BadArguments(f"{option} {text}: expected a rate such as 25Gbit (bit, kbit, Mbit, Gbit, Tbit)")
    if not 0 < float(m[1]) * _RATE_UNITS[m[2]] < LINK_GBIT * 1e9:
        raise BadArguments(f"{option} {text}: must be above 0 and below the fabric's {LINK_GBIT}Gbit links")
    return text


def lab_text(a):
    """A two-tier Clos: a.planes planes of leaves(a) leaves and a.spines spines, static routing
    (the MRC paper's static SRv6), 100 Gbit/s jumbo links."""
    return (f"name: study-fabric\n"
            f"clos: {{planes: {a.planes}, spines_per_plane: {a.spines}, leaves_per_plane: {leaves(a)}, "
            f"hosts: {a.hosts}, hosts_per_leaf: {a.hosts_per_leaf}}}\n"
            f"routing: static\nlink_rate: {LINK_GBIT}Gbit\nmtu: 9000\n")


def scale(a):
    switches = a.planes * (leaves(a) + a.spines)
    return (f"{a.hosts:,} hosts, {a.planes} planes of {leaves(a)} leaves and {a.spines} spines ({switches:,} "
            f"switches, 100 Gbit/s links, static SRv6); the job on {a.job_hosts} hosts spread over every leaf: "
            f"a {a.size} ring all-reduce and {a.compute} of compute per step, 4 KiB packets, virtual payload, "
            "µs timers")


def setup(a):
    """The fabric and job options as recorded in NAME.json."""
    return {"seed": a.seed, "hosts": a.hosts, "planes": a.planes, "hosts_per_leaf": a.hosts_per_leaf,
            "spines_per_plane": a.spines, "job_hosts": a.job_hosts, "collective": f"all_reduce {a.size}",
            "compute": a.compute, "scale": scale(a)}


def yaml_list(items):
    return "".join(f"  - {item}\n" for item in items)


def scenario(a, lab_path, seed, faults, transports, collective="all_reduce"):
    faults_yaml = f"faults:\n{yaml_list(faults)}" if faults else "faults: []\n"
    return (f"name: study\nlab: {lab_path}\nbackend: ns3\nseed: {seed}\n"
            f"job:\n  hosts: {a.job_hosts}\n  collectives: [{{kind: {collective}, size: {a.size}}}]\n"
            f"  compute: {a.compute}\n  step_timeout: 200ms\n  mtu: 4096\n  timers: fabric\n  payload: virtual\n"
            "  warmup_steps: 2\n  baseline_steps: 5\n  tail_steps: 5\n"
            f"transports:\n{yaml_list(transports)}{faults_yaml}"
            "slos:\n  - {slo: bytes_lost, max: 0}\nmax_duration: 60s\n")


def failures(a):
    """(key, title, fault line): one failure each, 20 ms after the baseline steps, each in its own
    plane (plane k mod planes)."""
    links, spines = a.links, a.failed_spines  # as check() counted them
    p = [k % a.planes for k in range(6)]
    link = "{{select: leaf_spine_link, plane: {}, count: %d}}" % links
    return [
        ("flap", f"link flap ({links} links of plane {p[0]}, 3 x 20 ms down)",
         f"{{at: 20ms, kind: flap, target: {link.format(p[0])}, count: 3, down: 20ms, up: 30ms}}"),
        ("blackhole", f"blackholed optic ({links} links of plane {p[1]}, 100 ms)",
         f"{{at: 20ms, kind: blackhole, target: {link.format(p[1])}, duration: 100ms}}"),
        ("loss", f"gray 1% loss ({links} links of plane {p[2]}, 100 ms)",
         f"{{at: 20ms, kind: loss, target: {link.format(p[2])}, rate: 1%, duration: 100ms}}"),
        ("spine", f"spine failure ({spines} spine(s) of plane {p[3]}, 100 ms)",
         f"{{at: 20ms, kind: switch_down, target: {{select: spine, plane: {p[3]}, count: {spines}}}, duration: 100ms}}"),
        ("leaf", f"leaf failure (1 leaf of plane {p[4]}, 100 ms)",
         f"{{at: 20ms, kind: switch_down, target: {{select: leaf, plane: {p[4]}, count: 1}}, duration: 100ms}}"),
        ("plane", f"plane down (plane {p[5]}, 100 ms)",
         f"{{at: 20ms, kind: plane_down, target: '{p[5]}', duration: 100ms}}"),
    ]


def cell(results, column):
    """Transport `column` over every seed's result.json."""
    runs = [next(t for t in r["transports"] if t["name"] == column) for r in results]
    ratios = [t["step_time"]["p99"] / t["step_time"]["baseline_p50"] for t in runs
              if t["job"]["state"] == "completed" and t["step_time"]["baseline_p50"]]
    recoveries = [f["recovery_seconds"] for t in runs for f in t["faults"] if f["recovery_seconds"] is not None]
    return {"runs": len(runs), "rode_through": sum(bool(t["rode_through"]) for t in runs),
            "baseline_p50": max(t["step_time"]["baseline_p50"] for t in runs),
            "p99_over_p50": max(ratios) if ratios else None,
            "recovery_seconds": max(recoveries) if recoveries else None,
            "interrupted_by": sorted({t["job"]["reason"] for t in runs if t["job"]["state"] != "completed"}),
            "bytes_lost": sum(t["job"]["bytes_lost"] for t in runs),
            "not_tested": sum(bool(r.get("not_tested")) for r in results)}


def cell_text(c):
    """'rode through, p99/p50 1.02, recovery 0.4 ms' or '**interrupted**, step 16: ...'."""
    if c["not_tested"]:
        return f"NOT TESTED in {c['not_tested']} run(s)"
    head = ("rode through" if c["rode_through"] == c["runs"] else
            "interrupted" if c["rode_through"] == 0 else f"rode through {c['rode_through']}/{c['runs']}")
    if c["runs"] > 1 and c["rode_through"] in (0, c["runs"]):
        head += f" ({c['runs']}/{c['runs']})"
    parts = [f"**{head}**" if c["rode_through"] < c["runs"] else head]
    if c["p99_over_p50"] is not None:
        parts.append(f"p99/p50 {c['p99_over_p50']:.2f}")
    if c["recovery_seconds"] is not None:
        parts.append(f"recovery {c['recovery_seconds'] * 1e3:.1f} ms")
    parts += c["interrupted_by"]
    if c["bytes_lost"]:
        parts.append(f"{c['bytes_lost']} bytes lost")
    return ", ".join(parts)


def fabric_links(run_dir):
    """(busiest leaf-spine link end's packets over the mean of them all, the most bytes any
    leaf-spine port queued) over a run, from its links.csv (None, 0 without samples)."""
    first, last, peak = {}, {}, 0
    with open(Path(run_dir) / "links.csv") as f:
        for row in csv.DictReader(f):
            if FABRIC_END.match(row["end"]):
                first.setdefault(row["end"], int(row["tx_packets"]))
                last[row["end"]] = int(row["tx_packets"])
                peak = max(peak, int(row.get("queue_peak_bytes") or 0))
    load = [last[e] - first[e] for e in last]
    # links.csv lists only the ends that carried something: the mean is over all of the lab's.
    ends = max(len(load), 2 * _fabric_link_count(run_dir))
    mean = sum(load) / ends if load else 0
    return (max(load) / mean if mean else None), peak


def _fabric_link_count(run_dir):
    """Leaf-spine links of the run's lab (lab.json), 0 if it has no plan."""
    try:
        lab = json.loads((Path(run_dir) / "lab.json").read_text())
    except (OSError, ValueError):
        return 0
    if "not_listed" in lab:
        return int(lab["not_listed"].get("fabric_links", 0))
    return sum(1 for link in lab.get("links", []) if link.get("fabric"))

