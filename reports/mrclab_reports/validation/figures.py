"""The figures validate compares, read from one drill run (a rundir.Run).

Every figure has a key (what it is: transport, name), a unit, and a direction: +1 when a higher
value is worse (step time, recovery, retransmissions), -1 when lower is worse (steps/min), 0 for
a pass/fail figure (rode through, an SLO's pass), compared by pass rate instead.

A value of inf means "never": a fault the job did not recover from, a fault routing never saw
while the other lab's routing did (routing detect/restore are figures only where some run saw
BGP or BFD sessions change), sessions not back a minute after the revert. A restore the drill
ended too early to see is left out.
"""
import math
import re
from dataclasses import dataclass

from mrclab_reports import analysis

UP_STATES = ("Established", "Up", "up")  # bgpd's and bfdd's words
_LINK_END = re.compile(r"([a-z][a-z0-9-]*):([A-Za-z0-9_.-]+)")
RESTORE_SECONDS = 60.0  # routing events this long after a revert still count as its restoration


@dataclass(frozen=True)
class Key:
    transport: str          # "" for a figure of the whole run
    name: str
    unit: str               # "s", "count", "steps/min", "pass"
    direction: int          # +1 higher is worse, -1 lower is worse, 0 pass/fail
    missing_is_never: bool = False  # a run without this figure counts as inf (never happened)

    @property
    def label(self):
        return f"{self.transport}: {self.name}" if self.transport else self.name


def _transport_span(t):
    return (t.start or 0.0, (t.end or 0.0) + 1.0)


def _routing_times(run, fault):
    """(detect, restore) seconds of one fault from the lab observer's BGP/BFD events of the
    sessions it touches (on its links' ends, on its switches; all for a fault without either):
    detect, the first session leaving Established/up after the first apply; restore, the last of
    those sessions back up (and staying up) after the last revert. None where no session went
    down, or where the drill ended before every session was back; inf where one was still down a
    minute after the revert."""
    applied, reverted = fault.windows[0][0], fault.windows[-1][1]
    ends = set(_LINK_END.findall(fault.description))
    nodes = analysis.fault_targets(fault, run.lab).nodes
    changes = [e for e in run.events if e["type"] in ("bgp", "bfd")
               and (not (ends or nodes) or (e.get("node"), e.get("peer")) in ends or e.get("node") in nodes)]
    session = lambda e: (e["type"], e.get("node"), e.get("peer"))  # noqa: E731
    downs = [e for e in changes if e.get("from") in UP_STATES and applied <= e["t"] <= (reverted or math.inf)]
    if not downs:
        return None, None
    detect = min(e["t"] for e in downs) - applied
    if reverted is None:
        return detect, None
    # Watched until a minute after the revert, the next fault (the next transport's), or the end.
    horizon = min([w[0] for t in run.transports for f in t.faults for w in f.windows if w[0] > reverted] +
                  [reverted + RESTORE_SECONDS, max([e["t"] for e in run.events] + [run.finished or 0.0])])
    back = []
    for key in {session(e) for e in downs}:
        after = [e for e in changes if session(e) == key and reverted <= e["t"] <= horizon]
        if not after or after[-1].get("to") not in UP_STATES:
            return detect, math.inf if horizon >= reverted + RESTORE_SECONDS else None
        back.append(after[-1]["t"])
    return detect, max(back) - reverted


def of_run(run):
    """{Key: value} of one run. Values are floats (inf: never) or bools for pass/fail figures."""
    out = {}
    for t in run.transports:
        n = t.name

        def put(name, unit, direction, value, never=False):
            if value is not None:
                out[Key(n, name, unit, direction, never)] = value

        put("rode through", "pass", 0, bool(t.rode_through))
        put("baseline step p50", "s", +1, t.step_time.get("baseline_p50"))
        put("step time p50", "s", +1, t.step_time.get("p50"))
        put("step time p99", "s", +1, t.step_time.get("p99"))
        put("steps/min", "steps/min", -1, t.steps_per_minute)
        put("retransmissions", "count", +1, t.job.get("retransmissions"))
        put("bytes lost", "count", +1, t.job.get("bytes_lost") or 0)
        lo, hi = _transport_span(t)
        put("EV state changes", "count", +1,
            sum(1 for e in run.events if e["type"] == "ev_state" and lo <= e["t"] <= hi) if t.start is not None else None)
        recoveries = [math.inf if f.recovery_seconds is None else f.recovery_seconds for f in t.faults if f.windows]
        put("worst recovery", "s", +1, max(recoveries) if recoveries else None, True)
        for f in t.faults:
            if not f.windows:
                continue
            what = f"#{f.index} {f.kind}"
            put(f"recovery {what}", "s", +1, math.inf if f.recovery_seconds is None else f.recovery_seconds, True)
            detect, restore = _routing_times(run, f)
            put(f"routing detect {what}", "s", +1, detect, True)
            put(f"routing restore {what}", "s", +1, restore)
    for s in run.slos:
        transport = s.get("transport") or ""
        name = f"SLO {s.get('slo')}"
        out[Key(transport, name, "pass", 0)] = bool(s.get("pass"))
        if isinstance(s.get("value"), (int, float)):
            out[Key(transport, f"{name} value", "", +1)] = float(s["value"])
    return out
