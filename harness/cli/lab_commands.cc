#include "harness/cli/lab_commands.h"

#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "emulator/lab_spec.h"
#include "emulator/netns/container_switch.h"
#include "emulator/netns/deploy.h"
#include "emulator/netns/frr_config.h"
#include "emulator/netns/frr_daemons.h"
#include "emulator/netns/frr_template.h"
#include "emulator/netns/interrupt.h"
#include "emulator/netns/lab_state.h"
#include "emulator/netns/namespaces.h"
#include "emulator/netns/podman.h"
#include "emulator/netns/processes.h"
#include "emulator/netns/verify.h"
#include "emulator/netns/vm_guest_agent.h"
#include "emulator/netns/vm_qemu.h"
#include "emulator/resolved_lab.h"
#include "emulator/strict_yaml.h"
#include "harness/cli/lab_graph.h"
#include "harness/drill/run_recorder.h"

namespace mrclab::harness {
namespace {

namespace nx = emulator::netns;
using emulator::NodeKind;
using nlohmann::json;

// NAME or LAB.yaml -> lab name.
std::string LabName(const std::string& name_or_file) {
  if (emulator::IsLabFilePath(name_or_file)) return emulator::ParseLabFile(name_or_file).name;
  return name_or_file;
}

std::string FormatSeconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f s", s);
  return buf;
}

// Live state of a deployed lab's daemons and BGP sessions.
json LiveState(const emulator::ResolvedLab& lab) {
  nx::LabPaths paths(lab.name);
  json daemons = json::object(), bgp = json::object();
  int established = 0;
  for (const auto* sw : lab.Switches()) {
    const std::string dir = paths.NodeDir(sw->name);
    json node = json::object();
    for (const std::string& daemon : nx::DaemonsOf(lab, paths, *sw)) {
      std::ifstream in(dir + "/" + daemon + ".pid");
      pid_t pid = 0;
      if (!(in >> pid)) continue;
      bool alive = nx::IsOurs({pid, daemon, nx::NetnsPath(sw->netns)});
      node[daemon] = {{"pid", pid}, {"alive", alive}};
    }
    daemons[sw->name] = node;
    if (lab.routing == emulator::Routing::kBgp) {
      try {
        auto states = nx::BgpPeerStates(dir + "/bgpd.vty");
        bgp[sw->name] = states;
        for (const auto& [peer, state] : states) established += state == "Established";
      } catch (const std::exception& e) {
        bgp[sw->name] = {{"error", e.what()}};
      }
    }
  }
  for (const auto* host : lab.Hosts()) {  // a VM host: its qemu
    if (!host->vm) continue;
    std::ifstream in(paths.NodeDir(host->name) + "/qemu.pid");
    pid_t pid = 0;
    if (in >> pid)
      daemons[host->name] = {{"qemu", {{"pid", pid}, {"alive", nx::IsOurs({pid, nx::kQemuComm, nx::NetnsPath(host->netns)})}}}};
  }
  return {{"daemons", daemons},
          {"bgp", bgp},
          {"bgp_established", established},
          {"bgp_expected", lab.routing == emulator::Routing::kBgp ? lab.ExpectedBgpSessions() : 0}};
}

// `live` null: a lab file's plan, not deployed (no daemons, no sessions).
void PrintInspect(const emulator::ResolvedLab& lab, const json& state, const json& live) {
  std::printf("lab %s  state %s  routing %s  planes %d  source %s\n", lab.name.c_str(),
              state.value("state", "?").c_str(),
              lab.routing == emulator::Routing::kBgp ? "bgp" : "static", lab.planes,
              state.value("source", lab.source).c_str());
  if (lab.routing == emulator::Routing::kBgp && !live.is_null())
    std::printf("bgp sessions Established: %d/%d\n", live["bgp_established"].get<int>(),
                live["bgp_expected"].get<int>());
  std::printf("\n%-12s %-6s %-5s %-6s %-11s %-24s %s\n", "NODE", "KIND", "PLANE", "uSID", "ASN",
              "NETNS", "DAEMONS (pid, * = not running)");
  const json software = state.value("switch_software", json::object());
  for (const auto& node : lab.nodes) {
    std::string daemons;
    if (software.contains(node.name)) {  // "FRR 10.3 (mrclab/frr:trixie) "
      const json& sw = software[node.name];
      const json versions = sw.value("daemons", json::object());
      daemons = "FRR " + (versions.contains("zebra") ? versions["zebra"].get<std::string>() : std::string("?")) +
                (sw.contains("image") ? " (" + sw["image"].get<std::string>() + ")" : "") + " ";
    }
    if (node.vm)  // "VM 256 MiB, 1 CPU "
      daemons = "VM " + std::to_string(node.vm->memory_mib) + " MiB, " + std::to_string(node.vm->cpus) + " CPU" +
                (node.vm->cpus == 1 ? " " : "s ");
    if (!live.is_null() && live["daemons"].contains(node.name))
      for (const auto& [name, d] : live["daemons"][node.name].items())
        daemons += name + ":" + std::to_string(d["pid"].get<int>()) +
                   (d["alive"].get<bool>() ? " " : "* ");
    std::string usid = node.kind == NodeKind::kSwitch ? emulator::UsidHex(node.usid) : "";
    if (node.kind == NodeKind::kHost)
      for (const auto& p : node.ports) usid += (usid.empty() ? "" : ",") + emulator::UsidHex(p.usid);
    std::printf("%-12s %-6s %-5s %-6s %-11s %-24s %s\n", node.name.c_str(),
                node.kind == NodeKind::kSwitch ? "switch" : "host",
                node.plane >= 0 ? std::to_string(node.plane).c_str() : "-", usid.c_str(),
                node.asn ? std::to_string(node.asn).c_str() : "-", node.netns.c_str(), daemons.c_str());
  }
  std::printf("\n%-28s %-28s %s\n", "LINK A", "LINK B", "SUBNET");
  for (const auto& link : lab.links)
    std::printf("%-28s %-28s %s\n", (link.a.node + ":" + link.a.interface).c_str(),
                (link.b.node + ":" + link.b.interface).c_str(), link.subnet.c_str());
}

// deploy --check: the lab file and everything deploy checks before it makes anything.
int CheckDeploy(const std::string& file, bool json_out) {
  const emulator::ResolvedLab lab = nx::ResolveForEmulation(emulator::ParseLabFile(file));
  nx::Preflight(lab);
  const nx::MemoryEstimate memory = nx::EstimateMemory(lab);
  const nx::SwitchImages images = nx::PrepareRouterImages(lab);
  const size_t own_configs = nx::UserFrrConfigs(lab, images.reference).size();
  nx::RefuseIfKernelCannotForwardSrv6();
  std::string image_summary;  // "2 switches from localhost/mrclab/frr:trixie (FRR 10.3)"
  for (const auto& [reference, probe] : images.frr) {
    size_t n = 0;
    for (const auto& [node, ref] : images.reference) n += ref == reference;
    image_summary += "; " + std::to_string(n) + " switches from " + reference + " (FRR " + probe.frr_version + ")";
  }
  if (json_out) {
    std::cout << json{{"lab", lab.name}, {"switches", lab.Switches().size()}, {"hosts", lab.Hosts().size()},
                      {"links", lab.links.size()}, {"planes", lab.planes}, {"memory_needed_bytes", memory.needed},
                      {"memory_available_bytes", memory.available}, {"static_route_next_hops", memory.static_next_hops},
                      {"own_frr_configs", own_configs},
                      {"container_switches", images.reference.size()}}.dump(2)
              << "\n";
  } else {
    std::printf("lab %s is valid and can be deployed here: %zu switches, %zu hosts, %zu links, %d plane(s); "
                "needs ~%llu MiB of %llu MiB available%s\n",
                lab.name.c_str(), lab.Switches().size(), lab.Hosts().size(), lab.links.size(), lab.planes,
                static_cast<unsigned long long>(memory.needed >> 20),
                static_cast<unsigned long long>(memory.available >> 20),
                ((own_configs ? "; " + std::to_string(own_configs) + " switches' own FRR configuration rendered and "
                                                                           "accepted by FRR's parser"
                              : std::string()) +
                 image_summary)
                    .c_str());
  }
  return emulator::kExitOk;
}

// deploy --frr-config NODE / --frr-variables NODE: what a switch's FRR runs (its own
// configuration, rendered, or the generated one), or what its template sees. Makes nothing.
int PrintFrrConfig(const std::string& file, const std::string& node_name, bool variables) {
  const emulator::ResolvedLab lab = emulator::Resolve(emulator::ParseLabFile(file));
  const emulator::ResolvedNode* node = lab.FindNode(node_name);
  if (!node || node->kind != emulator::NodeKind::kSwitch) {
    std::string names;
    for (const emulator::ResolvedNode* n : lab.Switches()) names += (names.empty() ? "" : ", ") + n->name;
    throw emulator::InputError(std::string(variables ? "--frr-variables " : "--frr-config ") + node_name +
                               ": not a switch of lab '" + lab.name + "' (switches: " + names + ")");
  }
  if (variables) {
    std::cout << nx::FrrTemplateVariables(lab, *node) << "\n";
    return emulator::kExitOk;
  }
  if (!node->frr_config) {
    std::cout << nx::GeneratedFrrConfig(lab, *node);
    return emulator::kExitOk;
  }
  emulator::ResolvedLab one = lab;  // render and check this switch's only, with the FRR it runs
  for (emulator::ResolvedNode& n : one.nodes)
    if (n.name != node_name) {
      n.frr_config.reset();
      n.image.reset();
    }
  std::cout << nx::UserFrrConfigs(one, nx::PrepareRouterImages(one).reference).at(node_name);
  return emulator::kExitOk;
}

int Deploy(const std::string& file, int timeout_s, bool json_out, bool quiet, bool keep_failed = false) {
  const std::string text = emulator::ReadInputFile(file);
  emulator::ResolvedLab lab = nx::ResolveForEmulation(emulator::ParseLabText(text, file));
  nx::DeployOptions options;
  options.timeout = std::chrono::seconds(timeout_s);
  options.progress = !quiet && !json_out;
  options.lab_text = text;
  options.keep_failed = keep_failed;
  nx::DeployReport report = nx::Deploy(lab, options);
  if (json_out) {
    json out = report.ToJson();
    out["lab"] = lab.name;
    std::cout << out.dump(2) << "\n";
  } else {
    std::printf("lab %s ready in %s: %zu switches, %zu hosts, %zu links; %d BGP sessions, %d host "
                "pairs, %d spine uSID paths verified\n",
                lab.name.c_str(), FormatSeconds(report.total_s).c_str(), lab.Switches().size(),
                lab.Hosts().size(), lab.links.size(), report.bgp_sessions, report.host_pairs,
                report.spine_paths);
  }
  return 0;
}

int Destroy(const std::string& name_or_file, bool json_out) {
  const std::string name = LabName(name_or_file);
  nx::DestroyReport r = nx::Destroy(name);
  if (json_out) {
    std::cout << json{{"lab", name}, {"processes_stopped", r.processes}, {"killed", r.killed},
                      {"namespaces_removed", r.namespaces}, {"containers_removed", r.containers}, {"seconds", r.seconds},
                      {"problems", r.problems}}.dump(2)
              << "\n";
  } else {
    std::printf("lab %s destroyed in %s: %d processes stopped (%d needed SIGKILL), %d namespaces "
                "removed%s\n",
                name.c_str(), FormatSeconds(r.seconds).c_str(), r.processes, r.killed, r.namespaces,
                r.containers ? (", " + std::to_string(r.containers) + " containers removed").c_str() : "");
    for (const auto& p : r.problems) std::fprintf(stderr, "mrclab: warning: %s\n", p.c_str());
  }
  return r.problems.empty() ? 0 : 1;
}

// A lab file's plan, without deploying it: as a simulated drill records it in its run's lab.json,
// without the nodes' routes (what a deployed lab installs; O(hosts x switches) in static labs:
// 0.5 GB of JSON at 1,024 hosts). `inspect NAME` of a deployed lab shows them.
int InspectFile(const std::string& file, bool json_out) {
  const emulator::ResolvedLab lab = emulator::Resolve(emulator::ParseLabFile(file), {.routes = false});
  const json state = {{"state", "not deployed (the file's plan)"}, {"source", file}};
  // Above what a run's lab.json lists, the summary (planes and their nodes' names) and counts.
  const size_t items = lab.nodes.size() + lab.links.size();
  const bool listed = items <= RunRecorder::kMaxListedLabItems;
  if (json_out) {
    json plan = listed ? lab.ToJson() : lab.SummaryJson();
    if (!listed)
      plan["not_listed"] = {{"nodes", lab.nodes.size()},
                            {"links", lab.links.size()},
                            {"why", "more than " + std::to_string(RunRecorder::kMaxListedLabItems) + " nodes and links"}};
    std::cout << json{{"lab", lab.name}, {"state", state["state"]}, {"source", file}, {"plan", plan}}.dump(2) << "\n";
  } else if (listed) {
    PrintInspect(lab, state, nullptr);
  } else {
    std::printf("lab %s  state %s  planes %d  source %s\n%zu nodes (%zu switches, %zu hosts) and %zu links: more "
                "than %zu, not listed (--json: the planes and their nodes' names)\n",
                lab.name.c_str(), state["state"].get<std::string>().c_str(), lab.planes, file.c_str(),
                lab.nodes.size(), lab.Switches().size(), lab.Hosts().size(), lab.links.size(),
                RunRecorder::kMaxListedLabItems);
  }
  return 0;
}

int Inspect(const std::string& name, bool json_out) {
  if (emulator::IsLabFilePath(name)) return InspectFile(name, json_out);
  emulator::ResolvedLab lab = nx::LoadDeployedLab(name);
  json state = nx::ReadLabJson(name);
  json live = LiveState(lab);
  if (json_out) {
    json out = {{"lab", name},
                {"state", state.value("state", "?")},
                {"source", state.value("source", lab.source)},
                {"created", state.value("created", 0)},
                {"deploy", state.value("deploy", json::object())},
                {"switch_software", state.value("switch_software", json::object())},
                {"plan", lab.ToJson()},
                {"live", live}};
    std::cout << out.dump(2) << "\n";
  } else {
    PrintInspect(lab, state, live);
  }
  return 0;
}

int List(bool json_out) {
  json labs = json::array();
  for (const std::string& name : nx::ListLabs()) {
    json entry = {{"lab", name}};
    try {
      json state = nx::ReadLabJson(name);
      entry["state"] = state.value("state", "?");
      entry["created"] = state.value("created", 0);
      entry["nodes"] = state["plan"]["nodes"].size();
      entry["links"] = state["plan"]["links"].size();
    } catch (const std::exception&) {
      entry["state"] = "unknown (no lab.json: run mrclab destroy " + name + ")";
    }
    labs.push_back(entry);
  }
  if (json_out) {
    std::cout << labs.dump(2) << "\n";
    return 0;
  }
  if (labs.empty()) std::printf("no labs deployed\n");
  for (const auto& l : labs)
    std::printf("%-20s %-10s %s nodes, %s links\n", l["lab"].get<std::string>().c_str(),
                l["state"].get<std::string>().c_str(), l.value("nodes", json(0)).dump().c_str(),
                l.value("links", json(0)).dump().c_str());
  return 0;
}

// Standard input for a VM host's command (the agent takes it whole, up to 64 KiB).
std::string ReadStdin() {
  constexpr size_t kMax = 64 * 1024;
  std::string text;
  char chunk[65536];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, stdin)) > 0) {
    text.append(chunk, n);
    if (text.size() > kMax) throw std::invalid_argument("exec -i: standard input over 64 KiB is not passed to a VM host");
  }
  return text;
}

// Enters the node's namespaces (and a private mount namespace with this netns's /sys, as
// `ip netns exec` does) and execs the command. vtysh is pointed at the node's daemons. A VM
// host's command runs through its guest agent.
int Exec(const std::string& name, const std::string& node_name, std::vector<std::string> cmd, bool pass_stdin) {
  emulator::ResolvedLab lab = nx::LoadDeployedLab(name);
  const emulator::ResolvedNode* node = lab.FindNode(node_name);
  if (!node) {
    std::string names;
    for (const auto& n : lab.nodes) names += (names.empty() ? "" : ", ") + n.name;
    throw std::invalid_argument("unknown node '" + node_name + "' in lab '" + name +
                                "' (nodes: " + names + ")");
  }
  if (cmd.empty()) cmd = {"/bin/bash"};
  nx::LabPaths paths(name);
  if (cmd[0] == "vtysh") {
    cmd.insert(cmd.begin() + 1, {"--vty_socket", paths.NodeDir(node_name)});
  }
  if (node->vm) {
    // A VM host: through its guest agent (no terminal: the command's output when it ends; its
    // standard input only with -i, so that a backgrounded exec does not wait for this one's).
    if (cmd == std::vector<std::string>{"/bin/bash"})
      throw std::invalid_argument(node_name + " is a VM host: give a command (mrclab exec " + name + " " + node_name +
                                  " -- CMD); there is no interactive shell through its agent");
    const nx::GuestResult r = nx::GuestAgent(paths.NodeDir(node_name))
                                  .Exec(cmd, std::chrono::hours(1), pass_stdin ? ReadStdin() : "");
    std::fwrite(r.out.data(), 1, r.out.size(), stdout);
    std::fwrite(r.err.data(), 1, r.err.size(), stderr);
    return r.timed_out ? 124 : r.status;
  }
  if (node->image) {
    // A switch from a router image: in its container, with the image's tools (its vtysh).
    std::vector<std::string> exec = {"exec"};
    if (isatty(STDIN_FILENO)) exec.push_back("--interactive");
    if (isatty(STDIN_FILENO) && isatty(STDOUT_FILENO)) exec.push_back("--tty");
    exec.push_back(nx::ContainerName(name, node_name));
    exec.insert(exec.end(), cmd.begin(), cmd.end());
    std::vector<std::string> podman = nx::Podman(exec);
    std::vector<char*> argv;
    for (auto& a : podman) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    throw std::runtime_error("cannot run " + podman[0] + ": " + std::strerror(errno));
  }
  nx::Fd net = nx::OpenNetns(node->netns);
  nx::Fd uts = nx::OpenPath(paths.UtsPath(node_name));
  if (setns(net.get(), CLONE_NEWNET) != 0 || setns(uts.get(), CLONE_NEWUTS) != 0)
    throw std::runtime_error(std::string("cannot enter the namespaces of ") + node_name + ": " +
                             std::strerror(errno));
  if (unshare(CLONE_NEWNS) == 0) {
    mount("", "/", "none", MS_SLAVE | MS_REC, nullptr);
    umount2("/sys", MNT_DETACH);
    mount(node->netns.c_str(), "/sys", "sysfs", 0, nullptr);
  }
  std::vector<char*> argv;
  for (auto& a : cmd) argv.push_back(a.data());
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  throw std::runtime_error("cannot run " + cmd[0] + ": " + std::strerror(errno));
}

int Graph(const std::string& name_or_file) {
  emulator::ResolvedLab lab =
      emulator::PathExists(name_or_file) ? emulator::Resolve(emulator::ParseLabFile(name_or_file))
                               : nx::LoadDeployedLab(name_or_file);
  std::cout << LabDot(lab);
  return 0;
}

// The main job until drills exist: deploy the default lab, show it, destroy it.
int Demo(const std::string& file) {
  int status = Deploy(file, 120, false, false);
  const std::string name = emulator::ParseLabFile(file).name;
  try {
    Inspect(name, false);
  } catch (...) {
    Destroy(name, false);
    throw;
  }
  return std::max(status, Destroy(name, false));
}

}  // namespace

void AddLabCommands(CLI::App& app, LabArgs& args, int& exit_status) {
  auto run = [&exit_status](std::function<int()> fn) {
    return [&exit_status, fn] { exit_status = fn(); };
  };
  LabArgs* a = &args;

  {
    auto* cmd = app.add_subcommand("deploy", "Boot a lab file as a verified, running fabric");
    cmd->add_option("lab", a->target, "Lab file (labs/*.yaml)")->required();  // read by ReadInputFile
    cmd->add_option("--timeout", a->timeout_s,
                    "Seconds to wait for convergence and verification once the daemons run their configuration (0: check once)")
        ->check(CLI::Range(0, 3600))->capture_default_str();
    cmd->add_flag("--json", a->json, "Print the deploy report as JSON");
    cmd->add_flag("-q,--quiet", a->quiet, "No progress on stderr");
    cmd->add_flag("--keep-failed", a->keep_failed,
                  "On failure, leave the lab in place for inspection instead of rolling back");
    cmd->add_flag("--check", a->check,
                  "Validate the lab file and what deploy checks first (root, FRR, name free, memory, the lab's "
                  "own FRR configurations rendered and parsed by FRR); make nothing");
    cmd->add_option("--frr-config", a->frr_config_node,
                    "Print the FRR configuration this switch would run (its own from frr_config, rendered; or the "
                    "generated one, a start for a template) and make nothing")
        ->type_name("NODE");
    cmd->add_option("--frr-variables", a->frr_variables_node,
                    "Print, as JSON, the variables this switch's FRR template sees (node, lab, generated) and "
                    "make nothing")
        ->type_name("NODE");
    cmd->footer(
        "Ready means verified: every BGP session Established (bgp mode), every host reaching\n"
        "every other host on every plane, and one uSID path per spine shown to cross it.\n"
        "A failed or interrupted deploy rolls back everything it made.\n"
        "Exit status: 0 ready, 1 not ready before --timeout (or a daemon died), 2 bad lab file or\n"
        "  environment (not root, FRR missing, already deployed, too large), 130 interrupted.\n"
        "A lab file's frr_config gives switches their own FRR configuration (a Jinja2 template or a\n"
        "  plain frr.conf; labs/README.md); --frr-config NODE prints what a switch would run.\n"
        "Example: mrclab deploy labs/clos2.yaml");
    cmd->callback(run([a] {
      if (!a->frr_config_node.empty()) return PrintFrrConfig(a->target, a->frr_config_node, false);
      if (!a->frr_variables_node.empty()) return PrintFrrConfig(a->target, a->frr_variables_node, true);
      return a->check ? CheckDeploy(a->target, a->json) : Deploy(a->target, a->timeout_s, a->json, a->quiet, a->keep_failed);
    }));
  }
  {
    auto* cmd = app.add_subcommand("destroy", "Remove every trace of a lab (works after a crash)");
    cmd->add_option("lab", a->target, "Lab name or lab file")->required();
    cmd->add_flag("--json", a->json, "Print what was removed as JSON");
    cmd->callback(run([a] { return Destroy(a->target, a->json); }));
  }
  {
    auto* cmd = app.add_subcommand("inspect", "Show a deployed lab: nodes, links, addresses, "
                                              "uSIDs, daemons, BGP state (or a lab file's plan)");
    cmd->add_option("lab", a->target,
                    "Lab name, or a lab file (labs/*.yaml): its plan (nodes, links, addresses, uSIDs; not the "
                    "routes a deployed lab installs) without deploying it, also for labs only the simulation "
                    "can hold")
        ->required();
    cmd->add_flag("--json", a->json, "Everything, machine-readable");
    cmd->callback(run([a] { return Inspect(a->target, a->json); }));
  }
  {
    auto* cmd = app.add_subcommand("exec", "Run a command inside a node's namespaces");
    cmd->add_option("lab", a->target, "Lab name")->required();
    cmd->add_option("node", a->node, "Node name (e.g. p0-leaf1, host3)")->required();
    cmd->add_option("command", a->command, "Command and arguments, after --");
    cmd->add_flag("-i,--stdin", a->pass_stdin,
                  "VM hosts: give the command this standard input (read to its end first, at most 64 KiB); "
                  "other nodes' commands always have it");
    cmd->footer("Examples:\n  mrclab exec clos2 p0-leaf0 -- vtysh -c 'show bgp summary json'\n"
                "  mrclab exec clos2 host0 -- ip -6 route\n"
                "  echo hi | mrclab exec vmlab host0 -i -- cat      (host0 a VM host: runs through its guest agent,\n"
                "                                                   output when the command ends, exit status kept)");
    cmd->callback(run([a] { return Exec(a->target, a->node, a->command, a->pass_stdin); }));
  }
  {
    auto* cmd = app.add_subcommand("graph", "Print a lab as Graphviz dot (pipe to: dot -Tsvg)");
    cmd->add_option("lab", a->target, "Deployed lab name or lab file")->required();
    cmd->callback(run([a] { return Graph(a->target); }));
  }
  {
    auto* cmd = app.add_subcommand("list", "List deployed labs");
    cmd->add_flag("--json", a->json, "Machine-readable");
    cmd->callback(run([a] { return List(a->json); }));
  }
  {
    auto* cmd = app.add_subcommand("demo", "Main job: deploy the default lab, show it, destroy it");
    a->demo_lab = "labs/clos2.yaml";
    cmd->add_option("lab", a->demo_lab, "Lab file")->capture_default_str();
    cmd->callback(run([a] { return Demo(a->demo_lab); }));
  }
}

}  // namespace mrclab::harness
