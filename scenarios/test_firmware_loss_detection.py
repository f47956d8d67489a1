"""Suite: a firmware change that makes one spine drop 1% of packets is detected.

While training runs over MRC with uSID EVs (EV i crosses spine (i // planes) % spines of plane
i % planes), every link of one spine drops 1% of packets in both directions. MRC's per-EV loss
counters must point at that spine: while the fault lasts, its EVs lose more than twice the
fraction of packets that the other spines' EVs of the same plane lose. The same check is how an SRE would find a bad switch from endpoint telemetry.

    PYTHONPATH=build/python python3 -m pytest -p mrclab.pytest_plugin scenarios/test_firmware_loss_detection.py
"""
import collections
import time

import pytest

SPINE, PLANE = "p0-spine1", 0
# Unshaped links: congestion drops would blur the picture this suite is about.
MRCLAB_LABS = ["labs/clos2-fast.yaml"]


WINDOW_SECONDS = 5


def counters_by_spine(job, planes, spines_per_plane):
    """(losses, packets sent) per spine of PLANE, summed over every EV of every QP."""
    losses, sent = collections.Counter(), collections.Counter()
    for ev in job.ev_states():
        if ev["plane"] == PLANE:
            spine = (ev["ev"] // planes) % spines_per_plane
            losses[spine] += ev["losses"]
            sent[spine] += ev["tx_data"]
    return losses, sent


def loss_fraction(job, planes, spines_per_plane):
    """Losses per packet sent, per spine, over one window of traffic."""
    l0, s0 = counters_by_spine(job, planes, spines_per_plane)
    time.sleep(WINDOW_SECONDS)
    l1, s1 = counters_by_spine(job, planes, spines_per_plane)
    return {s: (l1[s] - l0[s]) / max(1, s1[s] - s0[s]) for s in range(spines_per_plane)}


@pytest.mark.drill
def test_one_percent_loss_on_a_spine_is_pinned_on_it(lab):
    planes = len({n.plane for n in lab.switches})
    spines_per_plane = sum(1 for n in lab.switches if n.role == "spine" and n.plane == PLANE)
    bad = int(SPINE.rsplit("spine", 1)[1])
    links = [l.target for l in lab.links if SPINE in (l.a[0], l.b[0])]
    with lab.job(collectives=[("all_reduce", "1MiB")], compute_seconds=0.01) as job:
        job.start()
        assert job.wait_for_steps(3, timeout=60)
        before = loss_fraction(job, planes, spines_per_plane)  # reordering counts a little
        faults = [lab.fault.loss(link, rate=0.01) for link in links]
        try:
            during = loss_fraction(job, planes, spines_per_plane)
        finally:
            for f in faults:
                f.revert()
        result = job.stop()
    others = max(v for s, v in during.items() if s != bad)
    print(f"loss fraction per spine of plane {PLANE}: before {before}, during {during}")
    assert during[bad] - before[bad] > 0.005, f"no rise on {SPINE}: before {before}, during {during}"
    assert during[bad] > 2 * others, f"{SPINE} does not stand out: before {before}, during {during}"
    assert result["state"] == "completed" and result["bytes_lost"] == 0
