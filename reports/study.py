#!/usr/bin/python3
"""Entry point of `mrclab study NAME ...` (see studies/README.md and mrclab_reports/studies/)."""
import argparse
import signal
import sys
import tempfile
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
try:
    import matplotlib  # noqa: F401
except ImportError as e:
    print(f"mrclab study: error: Python module {e.name} is missing: install Debian's python3-matplotlib "
          "(bash .ci/setup does)", file=sys.stderr)
    sys.exit(2)
from mrclab_reports.studies import collisions, evs, ride_through, spraying  # noqa: E402
from mrclab_reports.studies.runner import BadArguments, StudyError, check_writable  # noqa: E402

STUDIES = {ride_through.NAME: ride_through, spraying.NAME: spraying, collisions.NAME: collisions, evs.NAME: evs}

HELP = """\
Runs a study: simulated drills (ns-3 backend) over a generated fabric, from scratch, and writes
its table and plot: OUT/NAME.md (the table, the exact command, seed, scale and wall time),
OUT/NAME.png and OUT/NAME.json (every cell). OUT is reports/studies/ unless --out says otherwise.
Progress (one line per finished drill) goes to stderr; the drills' own run directories are kept
under --work (default: a temporary directory, removed afterwards).

Studies:
  ride-through   one failure per row (link flap, blackholed optic, 1% gray loss, spine, leaf,
                 a plane) on an 8-plane fabric; MRC (srv6 and udp EVs) against RC (one QP and
                 several QPs per peer): interrupted or not, step time p99/p50, recovery time
  spraying       RC with each chunk split over k = 1, 2, 4, 8 QPs per peer (single path per QP)
                 against MRC spraying, fault-free and with leaf-spine links degraded or down:
                 collective time, busiest link over mean, peak queue (Addanki et al.'s claim)
  collisions     fault-free: RC with 1, 2, 4, 8 QPs per peer over ECMP against MRC spraying
                 (udp and srv6 EVs): collective time, bus bandwidth, hottest link over mean
  evs            EVs per QP (8 ... 256) and min_active against a flap, a blackhole, a spine and
                 a plane failure: which EV counts and floors still ride through, at what cost

  mrclab study ride-through                       # 1,024 hosts, 8 planes (about 30 minutes)
  mrclab study ride-through --hosts 256 --seeds 3 # smaller, three seeds per failure
  mrclab study ride-through --smoke --out /tmp/s  # a 32-host fabric in seconds (what CI runs)
  mrclab study evs --evs-list 16,64 --min-active 1,50%
  mrclab study ride-through --help                # its own options

Exit status: 0 written, 1 a drill could not run (the message names it), 2 bad arguments,
130 interrupted.
"""


def main():
    parser = argparse.ArgumentParser(prog="mrclab study", description=HELP,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="study", metavar="STUDY", required=True)
    for name, module in STUDIES.items():
        p = sub.add_parser(name, help=module.TITLE, description=module.__doc__)
        module.add_arguments(p)
        p.add_argument("--seed", type=int, default=1, help="the drills' seed (default 1)")
        p.add_argument("--jobs", type=int, default=2, help="drills run at once (default 2: one per core here)")
        p.add_argument("--out", type=Path, default=HERE / "studies", help="where the table and plot go")
        p.add_argument("--work", type=Path, help="keep the generated lab, scenarios and run directories here")
        p.add_argument("--smoke", action="store_true", help="the smallest fabric the study makes sense on")
        p.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    a = parser.parse_args()
    module = STUDIES[a.study]
    if a.smoke:
        module.smoke(a)
    try:
        check_writable("--out", a.out)
        if a.work:
            check_writable("--work", a.work)
            a.work.mkdir(parents=True, exist_ok=True)
            written = module.run(a, a.work, a.out, a.jobs, a.quiet)
        else:
            with tempfile.TemporaryDirectory(prefix=f"mrclab-study-{a.study}-") as work:
                written = module.run(a, Path(work), a.out, a.jobs, a.quiet)
    except StudyError as e:
        print(f"mrclab study: error: {e}", file=sys.stderr)
        return 2 if isinstance(e, BadArguments) else 1
    except KeyboardInterrupt:
        print("mrclab study: interrupted", file=sys.stderr)
        return 130
    for path in written:
        print(path)
    return 0


def _interrupt(signum, frame):
    raise KeyboardInterrupt


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, _interrupt)  # as Ctrl-C: stop the drills, remove the work directory
    sys.exit(main())
