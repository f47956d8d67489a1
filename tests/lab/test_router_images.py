"""Switches from router images (`images:` in a lab file): the images build from Debian's archive
(bookworm's FRR 8.4, trixie's FRR 10.3) and are cached; a lab whose switches run three FRRs
(this machine's 8.4, and 8.4 and 10.3 from images) deploys, verifies, records every daemon's
version, and rides through a drill whose faults hit its container switches (switch down, bgpd
restart, configuration changes on both FRR versions); it is destroyed without a trace, also
after its deployer was SIGKILLed; one's own image archive (podman save) loads and is used; a missing image and a configuration the image's FRR refuses
fail the deploy naming the lab file's field, and leave nothing behind (no container, namespace
or link)."""
import json
import re
import signal
import subprocess

import pytest

from conftest import (CONTAINERS, MRCLAB, assert_nothing_left, judged_drill, killed_at_exit, lab_containers, lab_file,
                      mrclab, podman, post_mortem, short_scenario, wait_for)

NAME = "t-img"
# The spines from trixie (FRR 10.3), plane 1's leaves from bookworm (FRR 8.4), plane 0's leaves
# on this machine's FRR 8.4.
IMAGES = ("images:\n"
          "  - {match: {role: spine}, image: mrclab/frr:trixie}\n"
          "  - {match: {plane: 1, role: leaf}, image: mrclab/frr:bookworm}\n")


@pytest.fixture(scope="module")
def images():
    """Both images, built from Debian's archive unless this machine has them already."""
    for suite in ("bookworm", "trixie"):
        mrclab("image", "build", suite, timeout=900)
    return {i["suite"]: i for i in json.loads(mrclab("image", "list", "--json").stdout) if i["suite"]}


def mixed_lab(tmp_path, extra=""):
    path = lab_file(tmp_path, NAME)
    path.write_text(path.read_text() + IMAGES + extra)
    return path


def test_images_build_from_debians_archive_once(images):
    assert images["bookworm"]["frr_package"].startswith("8.4"), images
    assert images["trixie"]["frr_package"].startswith("10.3"), images
    for suite, image in images.items():
        assert image["reference"] == f"localhost/mrclab/frr:{suite}"
        assert re.fullmatch(r"[0-9a-f]{64}", image["rootfs_sha256"]), image
        assert image["size_bytes"] > 50_000_000, image
        packages = (CONTAINERS / "packages" / f"{suite}.txt").read_text()
        assert re.search(r"^frr \S+$", packages, re.M), packages[:200]
    again = json.loads(mrclab("image", "build", "trixie", "--json").stdout)
    assert again["cached"] and again["id"] == images["trixie"]["id"], again
    unknown = mrclab("image", "build", "sid-of-nowhere", check=False)
    assert unknown.returncode == 2 and "unknown suite 'sid-of-nowhere'" in unknown.stderr, unknown.stderr


DRILL_FAULTS = """faults:
  - {at: 0.5s, kind: switch_down, target: p1-spine0, duration: 2s}
  - {at: 3s, kind: bgp_reset, target: p0-spine1, mode: restart, duration: 1s}
  - {at: 5s, kind: config_change, target: p0-spine0, config: ["interface leaf1", "shutdown"], duration: 1s}
  - {at: 7s, kind: config_change, target: p1-leaf0, config: ["interface spine0", "shutdown"], duration: 1s}
slos:
  - {slo: no_interruption}
  - {slo: bytes_lost, max: 0}
"""


def test_a_lab_of_three_frrs_deploys_and_rides_through_faults_on_its_containers(tmp_path, images):
    lab = mixed_lab(tmp_path)
    check = json.loads(mrclab("deploy", lab, "--check", "--json").stdout)
    assert check["container_switches"] == 8, check
    mrclab("deploy", lab, "-q", timeout=300)
    try:
        info = json.loads(mrclab("inspect", NAME, "--json").stdout)
        software = info["switch_software"]
        spine = software["p0-spine0"]
        assert spine["runs"] == "container" and spine["image"] == "mrclab/frr:trixie", spine
        assert set(spine["daemons"].values()) == {"10.3"} and "mgmtd" in spine["daemons"], spine
        assert software["p1-leaf0"]["daemons"]["zebra"].startswith("8.4"), software["p1-leaf0"]
        assert software["p1-leaf0"]["runs"] == "container" and "mgmtd" not in software["p1-leaf0"]["daemons"]
        assert software["p0-leaf0"]["runs"] == "namespace", software["p0-leaf0"]
        assert info["live"]["bgp_established"] == info["live"]["bgp_expected"]
        # exec runs the image's own vtysh in the container.
        assert "FRRouting 10.3" in mrclab("exec", NAME, "p0-spine0", "--", "vtysh", "-c", "show version").stdout

        scenario = tmp_path / "faults.yaml"
        scenario.write_text(short_scenario("images", lab=NAME).replace("tail_steps: 2", "tail_steps: 40")
                            + DRILL_FAULTS)

        def run(attempt):
            proc = mrclab("drill", scenario, "--out", tmp_path / f"runs{attempt}", "--json", check=False, timeout=300)
            assert proc.returncode in (0, 3), post_mortem(proc.stderr)
            return proc, json.loads(proc.stdout)

        proc, result = judged_drill(run)
        # Never a fail on the fabric. Inconclusive only with the fidelity guard's reasons: three
        # FRR versions in containers can keep both CPUs busy through a fault window here.
        fidelity = result["emulation_fidelity"]
        assert result["verdict"] in ("pass", "inconclusive"), (result["slos"], fidelity, proc.stderr[-2000:])
        assert (result["verdict"] == "pass") == (fidelity["status"] == "ok"), (fidelity, result["not_tested"])
        assert fidelity["status"] == "ok" or fidelity["reasons"], fidelity
        windows = [w for f in result["faults"] for w in f["windows"]]
        assert len(windows) == 4 and all(w.get("revert") is not None for w in windows), result["faults"]
        frr = result["versions"]["frr"]
        assert "10.3 on 4 switches (mrclab/frr:trixie)" in frr and "(this machine)" in frr, frr
        assert result["versions"]["frr_daemons"]["p1-spine0"]["daemons"]["bgpd"] == "10.3"
        # Every fault was reverted: the interfaces the configuration changes shut are up again.
        running = mrclab("exec", NAME, "p0-spine0", "--", "vtysh", "-c", "show running-config").stdout
        assert "shutdown" not in running, running
    finally:
        mrclab("destroy", NAME, check=False)
    assert_nothing_left(NAME)


def test_destroy_after_the_deployer_was_sigkilled_removes_its_containers(tmp_path, images):
    lab = mixed_lab(tmp_path)
    with killed_at_exit(subprocess.Popen([MRCLAB, "deploy", str(lab), "--quiet"])) as deployer:
        wait_for(lambda: len(lab_containers(NAME)) >= 4, timeout=120, what="containers to start")
        deployer.send_signal(signal.SIGKILL)
        deployer.wait()
    destroyed = json.loads(mrclab("destroy", NAME, "--json").stdout)
    assert destroyed["containers_removed"] >= 4, destroyed
    assert_nothing_left(NAME)


def test_an_image_archive_of_ones_own_loads_and_is_used(tmp_path, images):
    archive = tmp_path / "my-router.tar"
    saved = podman("save", "--format", "oci-archive", "-o", str(archive), "localhost/mrclab/frr:trixie")
    assert saved.returncode == 0, saved.stderr
    loaded = json.loads(mrclab("image", "load", archive, "--json").stdout)
    assert loaded["frr_version"] == "10.3", loaded
    lab = lab_file(tmp_path, NAME)
    lab.write_text(lab.read_text() + "images:\n  - {match: {node: p0-leaf0}, archive: my-router.tar}\n")
    check = mrclab("deploy", lab, "--check").stdout
    assert "1 switches from" in check and "(FRR 10.3)" in check, check
    bad = tmp_path / "not-an-image.tar"
    bad.write_text("nothing\n")
    proc = mrclab("image", "load", bad, check=False)
    assert proc.returncode == 2 and f"{bad}: podman cannot load it" in proc.stderr, proc.stderr


def deploy_fails(lab):
    proc = mrclab("deploy", lab, "-q", check=False, timeout=300)
    if proc.returncode == 0:
        mrclab("destroy", NAME)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert_nothing_left(NAME)
    return proc.stderr.strip().splitlines()[-1]


def test_a_missing_image_fails_before_anything_is_made(tmp_path):
    lab = lab_file(tmp_path, NAME)
    lab.write_text(lab.read_text() + "images:\n  - {match: {role: spine}, image: mrclab/frr:nosuch}\n")
    last = deploy_fails(lab)
    assert f"{lab}: images[0].image: no image 'mrclab/frr:nosuch' in mrclab's image store" in last, last
    assert "mrclab image" in last, last


def test_a_configuration_the_images_frr_refuses_fails_and_rolls_back(tmp_path, images):
    # Refused by the parser of the image's FRR (its vtysh --dryrun) before anything is made...
    (tmp_path / "bad.conf.j2").write_text("{{ generated }}router bgp {{ node.asn }}\n neighbr fabric bfd\n")
    lab = mixed_lab(tmp_path, "frr_config:\n  - {match: {node: p0-spine1}, template: bad.conf.j2}\n")
    last = deploy_fails(lab)
    assert "frr_config[0].template: p0-spine1:" in last and "vtysh --dryrun of mrclab/frr:trixie" in last, last
    assert "'neighbr fabric bfd': % Unknown command" in last, last
    # ...and a second BGP instance only the running bgpd refuses, in its container: rolled back.
    (tmp_path / "bad.conf.j2").write_text("{{ generated }}router bgp 65123\n")
    last = deploy_fails(lab)
    assert "frr_config[0].template: p0-spine1:" in last and "FRR of mrclab/frr:trixie refused it" in last, last
