"""`mrclab perf` between two hosts of a real lab: MRC over SRv6 uSID paths and over UDP
source-port EVs, and the RC baseline; every byte verified at the receiver."""
import json

import pytest

from conftest import mrclab


@pytest.mark.parametrize("transport, ev_mode", [("mrc", "srv6"), ("mrc", "udp"), ("rc", "udp")])
def test_perf_moves_verified_bytes(deployed, transport, ev_mode):
    name = deployed(f"t-perf-{transport}-{ev_mode}", base="clos2.yaml",
                    **{"link_rate: 1Gbit": ""})
    size = 8 << 20
    out = mrclab("perf", name, "host0", "host5", "--transport", transport, "--ev-mode", ev_mode,
                 "--evs", "8", "--size", size, "--msg", 1 << 20, "--json", timeout=120)
    result = json.loads(out.stdout)
    assert result["ok"], result.get("error")
    assert result["bytes_verified"] == size and result["verify_failures"] == 0
    sending = [ev for ev in result["evs"] if ev["tx_data"] > 0]
    # Losses taken back (the copy declared lost arrived: reordering) are a part of the losses.
    assert all(0 <= ev["spurious_losses"] <= ev["losses"] for ev in result["evs"])
    if transport == "mrc":
        assert {ev["plane"] for ev in sending} == {0, 1}, "MRC sprays over both planes"
    else:
        assert len(sending) == 1, "RC uses one path"


def test_perf_rejects_a_switch_as_endpoint(deployed):
    name = deployed("t-perf-bad")
    out = mrclab("perf", name, "host0", "p0-spine0", check=False)
    assert out.returncode == 2 and "is a switch" in out.stderr
