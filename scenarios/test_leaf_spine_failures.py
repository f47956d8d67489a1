"""Suite: every single leaf-spine link failure in plane 0 is ridden through.

For each leaf-spine link of plane 0, while data-parallel training (ring all-reduce over MRC,
32 uSID EVs per QP) runs on every host: the link goes down for 1.5 s, comes back, and the job
must keep stepping, never be interrupted, and lose no byte.

    PYTHONPATH=build/python python3 -m pytest -p mrclab.pytest_plugin scenarios/test_leaf_spine_failures.py
"""
import time

import pytest

DOWN_SECONDS = 1.5


def plane0_fabric_links(lab_file="labs/clos2.yaml"):
    # The links of the shipped default lab, by name; a lab of another shape gets its own list
    # from lab.links inside the test.
    return [f"p0-leaf{leaf}:spine{spine}" for leaf in range(4) for spine in range(2)]


@pytest.mark.drill
@pytest.mark.parametrize("link", plane0_fabric_links())
def test_single_link_failure_is_ridden_through(lab, link):
    with lab.job(collectives=[("all_reduce", "512KiB")], compute_seconds=0.02) as job:
        job.start()
        assert job.wait_for_steps(3, timeout=60)
        before = len(job.steps)
        with lab.fault.link_down(link):
            time.sleep(DOWN_SECONDS)  # the fault lasts this long; the job is what is under test
        assert job.wait_for_steps(before + 5, timeout=60), f"training stalled after {link} failed"
        result = job.stop()
    assert result["state"] == "completed", result["reason"]
    assert result["bytes_lost"] == 0
