"""Bad input and a hostile environment: one clear line naming file, field and reason; exit 2;
nothing deployed, nothing left."""
import os
import subprocess

import pytest

from conftest import assert_nothing_left, mrclab

CLOS = "clos: {planes: 2, spines_per_plane: 2, leaves_per_plane: 2, hosts: 4, hosts_per_leaf: 2}\n"


def write(tmp_path, text, name="bad.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, field, reason", [
    ("name: t-bad\n" + CLOS + "links: [{endpoints: [p0-leaf0:x1, nosuch:eth1]}]\n",
     "links[0].endpoints[1]", "unknown node"),
    ("name: t-bad\nnodes: {a: {kind: switch}, b: {kind: switch}, a: {kind: host}}\n"
     "links: [{endpoints: [a:eth1, b:eth1]}]\n", "nodes", "duplicate"),
    ("name: t-bad\n" + CLOS + "nodes: {p0-leaf0: {kind: switch}}\n", "nodes.p0-leaf0", "duplicate"),
    ("name: t-bad\nclos: {planes: 2, spines_per_plane: 0, leaves_per_plane: 2, hosts: 4, "
     "hosts_per_leaf: 2}\n", "clos.spines_per_plane", ""),
    ("name: t-bad\nclos: {planes: 15, spines_per_plane: 64, leaves_per_plane: 64, hosts: 64, "
     "hosts_per_leaf: 1}\n", "", "too large for this machine"),
    ("name: t-bad\n" + CLOS + "routing: ospf\n", "routing", ""),
    ("name: t-bad\n" + CLOS + "link_rate: fast\n", "link_rate", ""),
    ("name: t-bad\n" + CLOS + "link_delay: 1us\n", "link_delay", "simulation only"),
    ("name: t-bad\n" + CLOS + "colour: blue\n", "colour", "unknown"),
    ("name: [unclosed\n", "line", ""),
])
def test_bad_lab_is_refused_with_file_field_and_reason(tmp_path, text, field, reason):
    path = write(tmp_path, text)
    out = mrclab("deploy", path, "--quiet", check=False)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("mrclab: error: ")
    assert str(path) in lines[0]
    assert field in lines[0] and reason in lines[0], lines[0]
    assert_nothing_left("t-bad")


def test_frr_missing_is_refused_before_anything_is_made(tmp_path):
    env = dict(os.environ, MRCLAB_FRR_DIR=str(tmp_path / "no-frr-here"))
    out = mrclab("deploy", "labs/clos2.yaml", "--quiet", check=False, env=env)
    assert out.returncode == 2
    assert "FRRouting is not installed" in out.stderr and "apt" not in out.stdout
    assert_nothing_left("clos2")


def test_not_root_is_refused(tmp_path):
    out = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                          str(mrclab.__globals__["MRCLAB"]), "deploy", "labs/clos2.yaml"],
                         capture_output=True, text=True)
    assert out.returncode == 2
    assert "needs root" in out.stderr


def test_unknown_node_for_exec_and_unknown_lab(deployed):
    name = deployed("t-exec")
    out = mrclab("exec", name, "p9-spine7", "--", "true", check=False)
    assert out.returncode == 2 and "unknown node 'p9-spine7'" in out.stderr
    out = mrclab("inspect", "no-such-lab", check=False)
    assert out.returncode == 2 and "not deployed" in out.stderr
    out = mrclab("destroy", "no-such-lab", check=False)
    assert out.returncode == 2 and "not deployed" in out.stderr


def test_deploying_a_lab_twice_is_refused(deployed, tmp_path):
    name = deployed("t-twice")
    from conftest import lab_file
    out = mrclab("deploy", lab_file(tmp_path, name), "--quiet", check=False)
    assert out.returncode == 2 and "already deployed" in out.stderr
    assert mrclab("inspect", name, "--json").returncode == 0
