"""A lab's own FRR configuration (`frr_config:` in a lab file): the shipped template of the
generated configuration renders to exactly what mrclab generates; a template using the plan's
variables (and a plain file) deploys, verifies and is what the daemons run, also after a restart;
a broken template and a configuration FRR refuses (at parse time, only when the daemons run it,
or for daemons a static lab does not run) fail the deploy naming the lab file's field, the file,
the line and the message, and leave nothing behind; the shipped clos2-bgp-policy lab deploys and
its routes carry its policy."""
import json

from conftest import ROOT, assert_nothing_left, lab_file, mrclab

GENERATED = ROOT / "labs" / "templates" / "frr-generated.conf.j2"
NAME = "t-frr"


def with_frr_config(tmp_path, entries, base="clos2.yaml"):
    """A copy of a shipped lab with a frr_config block (entries: YAML lines)."""
    path = lab_file(tmp_path, NAME, base=base)
    path.write_text(path.read_text() + "frr_config:\n" + "".join(f"  - {e}\n" for e in entries))
    return path


def test_the_generated_template_renders_to_what_mrclab_generates(tmp_path):
    for base in ("clos2.yaml", "clos2-static.yaml"):
        plain = lab_file(tmp_path, NAME, base=base)
        (tmp_path / base).mkdir()
        templated = with_frr_config(tmp_path / base, [f"{{template: {GENERATED}}}"], base=base)
        variables = json.loads(mrclab("deploy", templated, "--frr-variables", "p0-spine0").stdout)
        assert variables["node"]["role"] == "spine" and variables["lab"]["name"] == NAME
        for node in ("p0-spine0", "p0-leaf0", "p1-leaf1", "p1-spine1"):
            generated = mrclab("deploy", plain, "--frr-config", node).stdout
            rendered = mrclab("deploy", templated, "--frr-config", node).stdout
            assert rendered == generated, f"{base} {node}:\n{rendered}\n---\n{generated}"
            assert f"hostname {node}" in generated


PER_ROLE = """\
{{ generated }}
{% for interface in node.interfaces %}
interface {{ interface.name }}
 description to {{ interface.peer_node }}:{{ interface.peer_interface }} (plane {{ node.plane }})
exit
{% endfor %}
router bgp {{ node.asn }}
 neighbor fabric description {{ node.role }} of plane {{ node.plane }}
exit
"""


def test_a_template_with_the_plan_variables_and_a_plain_file_deploy(tmp_path):
    (tmp_path / "spine.conf.j2").write_text(PER_ROLE)
    (tmp_path / "plain").mkdir()
    plain = lab_file(tmp_path / "plain", NAME)
    generated = mrclab("deploy", plain, "--frr-config", "p1-leaf0").stdout
    variables = json.loads(mrclab("deploy", plain, "--frr-variables", "p0-leaf0").stdout)
    spines_per_plane = sum(1 for i in variables["node"]["interfaces"] if i["fabric"])  # a leaf links to each
    (tmp_path / "p1-leaf0.conf").write_text(generated + "interface lo\n description from a plain file\nexit\n")
    lab = with_frr_config(tmp_path, ["{match: {role: spine}, template: spine.conf.j2}",
                                     "{match: {node: p1-leaf0}, file: p1-leaf0.conf}"])
    check = json.loads(mrclab("deploy", lab, "--check", "--json").stdout)
    assert check["own_frr_configs"] == 1 + check["planes"] * spines_per_plane, check
    proc = mrclab("deploy", lab, "-q", timeout=300)
    try:
        assert "ready" in proc.stdout
        running = mrclab("exec", NAME, "p0-spine0", "--", "vtysh", "-c", "show running-config").stdout
        assert "neighbor fabric description spine of plane 0" in running
        assert " description to p0-leaf0:" in running
        leaf = mrclab("exec", NAME, "p1-leaf0", "--", "vtysh", "-c", "show running-config").stdout
        assert "description from a plain file" in leaf
        other = mrclab("exec", NAME, "p0-leaf1", "--", "vtysh", "-c", "show running-config").stdout
        assert "description" not in other  # generated: no entry matches it
        # A restarted bgpd (stopped by the fault, started by its revert, which waits for its
        # sessions) comes back with it.
        mrclab("fault", "apply", NAME, "bgp_reset", "p0-spine0", "--mode", "restart")
        mrclab("fault", "revert", NAME, "--all")
        running = mrclab("exec", NAME, "p0-spine0", "--", "vtysh", "-d", "bgpd", "-c", "show running-config").stdout
        assert "neighbor fabric description spine of plane 0" in running
    finally:
        mrclab("destroy", NAME)
    assert_nothing_left(NAME)


def deploy_fails(lab):
    proc = mrclab("deploy", lab, "-q", check=False, timeout=300)
    if proc.returncode == 0:
        mrclab("destroy", NAME)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert_nothing_left(NAME)
    return proc.stderr.strip().splitlines()[-1]


def test_a_broken_template_fails_with_its_file_and_line(tmp_path):
    (tmp_path / "t.conf.j2").write_text("{{ generated }}\n!\nrouter bgp {{ node.asnn }}\n")
    lab = with_frr_config(tmp_path, ["{match: {role: leaf}, template: t.conf.j2}"])
    last = deploy_fails(lab)
    assert f"{lab}: frr_config[0].template: {tmp_path / 't.conf.j2'} line 3: " in last, last
    assert "asnn" in last, last
    (tmp_path / "t.conf.j2").write_text("{{ generated }}\n{% for x in node.interfaces %}\n")
    last = deploy_fails(lab)
    assert "t.conf.j2 line 2" in last and "endfor" in last, last
    # deploy --check finds it too, and makes nothing.
    proc = mrclab("deploy", lab, "--check", check=False)
    assert proc.returncode == 2 and "t.conf.j2 line 2" in proc.stderr


def test_a_configuration_frr_refuses_fails_and_rolls_back(tmp_path):
    # FRR's parser refuses a command before anything is made...
    (tmp_path / "bad.conf.j2").write_text("{{ generated }}router bgp {{ node.asn }}\n neighbr fabric bfd\n")
    lab = with_frr_config(tmp_path, ["{match: {node: p0-spine1}, template: bad.conf.j2}"])
    last = deploy_fails(lab)
    assert "frr_config[0].template: p0-spine1: the configuration rendered from" in last, last
    assert "'neighbr fabric bfd': % Unknown command" in last, last
    # ...and a second BGP instance only the running bgpd refuses: the deploy rolls back.
    (tmp_path / "bad.conf.j2").write_text("{{ generated }}router bgp 65123\n")
    last = deploy_fails(lab)
    assert "frr_config[0].template: p0-spine1:" in last and "FRR refused it" in last, last
    # A lab with static routing runs no bgpd: its BGP lines would be skipped silently; refused.
    (tmp_path / "static").mkdir()
    (tmp_path / "static" / "bad.conf.j2").write_text("{{ generated }}router bgp {{ node.asn }}\n")
    lab = with_frr_config(tmp_path / "static", ["{match: {node: p0-spine1}, template: bad.conf.j2}"],
                          base="clos2-static.yaml")
    last = deploy_fails(lab)
    assert "'router bgp 42" in last and "needs bgpd, which a lab with routing: static does not run" in last, last


def test_the_shipped_bgp_policy_lab_tags_routes_with_its_plane(tmp_path):
    # labs/clos2-bgp-policy.yaml under a test name, its template named by its absolute path.
    text = (ROOT / "labs" / "clos2-bgp-policy.yaml").read_text()
    lab = tmp_path / f"{NAME}.yaml"
    lab.write_text(text.replace("name: clos2-bgp-policy", f"name: {NAME}")
                   .replace("template: templates/", f"template: {ROOT / 'labs' / 'templates'}/"))
    locator = json.loads(mrclab("deploy", lab, "--frr-variables", "p0-spine0").stdout)["node"]["locator"]
    mrclab("deploy", lab, "-q", timeout=300)
    try:
        # p0-leaf0 learns p0-spine0's locator through the policy: tagged with plane 0's community.
        route = mrclab("exec", NAME, "p0-leaf0", "--", "vtysh", "-c", f"show bgp ipv6 unicast {locator} json").stdout
        communities = {p.get("community", {}).get("string") for p in json.loads(route)["paths"]}
        assert "65000:0" in communities, route
        running = mrclab("exec", NAME, "p1-spine1", "--", "vtysh", "-c", "show running-config").stdout
        assert "set community 65000:1 additive" in running and "description p1-leaf0:spine1" in running
    finally:
        mrclab("destroy", NAME)
    assert_nothing_left(NAME)
