"""Suite: a rolling reboot of every spine of plane 1 during training.

One spine at a time goes down (every link down, FRR stopped), stays down 2 s, and comes back
(daemons restarted, every BGP session Established again) before the next one goes. Training
over MRC must ride through the whole roll, and afterwards every session of the plane is up.

    PYTHONPATH=build/python python3 -m pytest -p mrclab.pytest_plugin scenarios/test_rolling_spine_reboot.py
"""
import time

import pytest

PLANE = 1


@pytest.mark.drill
def test_rolling_reboot_of_one_plane(lab):
    spines = [n.name for n in lab.switches if n.role == "spine" and n.plane == PLANE]
    assert spines
    with lab.job(collectives=[("all_reduce", "512KiB")], compute_seconds=0.02) as job:
        job.start()
        assert job.wait_for_steps(3, timeout=60)
        for spine in spines:
            before = len(job.steps)
            with lab.fault.switch_down(spine):
                time.sleep(2)  # the reboot's downtime
            assert job.wait_for_steps(before + 3, timeout=60), f"training stalled during the reboot of {spine}"
        result = job.stop()
    assert result["state"] == "completed", result["reason"]
    assert result["bytes_lost"] == 0
    for spine in spines:
        peers = lab.vtysh(spine, "show bgp summary json")["ipv6Unicast"]["peers"]
        assert all(p["state"] == "Established" for p in peers.values()), spine
