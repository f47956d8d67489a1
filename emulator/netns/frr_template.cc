#include "emulator/netns/frr_template.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <stdexcept>

#include "emulator/lab_spec.h"
#include "emulator/netns/frr_config.h"
#include "emulator/netns/frr_daemons.h"
#include "emulator/netns/frr_tools.h"
#include "emulator/netns/interrupt.h"
#include "emulator/netns/podman.h"
#include "emulator/netns/processes.h"

namespace mrclab::emulator::netns {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string Renderer() { return std::string(MRCLAB_SOURCE_DIR) + "/emulator/netns/frr_template.py"; }

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream out;
  out << in.rdbuf();
  if (!in) throw std::runtime_error("cannot read " + path);
  return out.str();
}

// The last non-empty line of a tool's output.
std::string LastLine(const std::string& output) {
  std::istringstream in(output);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t") != std::string::npos) last = line;
  return last.empty() ? "(no output)" : last;
}

// vtysh's complaint "line 5: % Unknown command[25]:  neighbr fabric bfd" as "line 5 'neighbr
// fabric bfd': % Unknown command"; other output as it is (one line).
std::string FrrComplaint(const std::string& output) {
  static const std::regex kLine(R"(line (\d+): (%[^:\[]*)(?:\[\d+\])?:\s*(.*))");
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, kLine)) {
      std::string what = m[2].str();
      while (!what.empty() && what.back() == ' ') what.pop_back();
      return "line " + m[1].str() + " '" + m[3].str() + "': " + what;
    }
  }
  return LastLine(output);
}

// A private folder for one deploy's rendering, removed when done.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "mrclab-frr-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create a folder under /tmp");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

json Variables(const ResolvedLab& lab, const ResolvedNode& node, const json& node_plan) {
  return {{"node", node_plan},
          {"lab",
           {{"name", lab.name},
            {"routing", lab.routing == Routing::kBgp ? "bgp" : "static"},
            {"bfd_interval_ms", lab.bfd_interval_ns / 1000000},
            {"mtu", lab.mtu}}},
          {"generated", GeneratedFrrConfig(lab, node)}};
}

// Each node's part of the plan (lab.ToJson()["nodes"]), by name.
std::map<std::string, json> NodePlans(const ResolvedLab& lab) {
  std::map<std::string, json> plans;
  json plan = lab.ToJson();
  for (json& n : plan.at("nodes")) {
    const std::string name = n.at("name");
    plans[name] = std::move(n);
  }
  return plans;
}

// How the configuration of a switch is named in errors: its file, and what rendered it.
std::string Origin(const ResolvedNode& node) {
  if (!node.frr_config) return node.name + ": the generated configuration (mrclab deploy --frr-config " + node.name + ")";
  const auto& c = *node.frr_config;
  return node.name + ": " + (c.is_template ? "the configuration rendered from " : "") + c.path;
}

// The lab file's field a switch's configuration comes from: its frr_config entry, or (generated
// configuration on a router image) its images entry.
std::string Field(const ResolvedNode& node) {
  return node.frr_config ? node.frr_config->field : node.image ? node.image->field : "frr_config";
}

}  // namespace

std::string FrrTemplateProblem(const ResolvedLab& lab) {
  bool templates = false;
  for (const ResolvedNode& n : lab.nodes) templates |= n.frr_config && n.frr_config->is_template;
  if (access(kVtysh, X_OK) != 0) return std::string(kVtysh) + " is missing; install the Debian package frr";
  if (!templates) return "";
  if (access(kPython, X_OK) != 0) return std::string(kPython) + " is missing; install the Debian package python3";
  std::string output;
  if (RunAndWait({kPython, "-c", "import jinja2"}, &output) != 0)
    return "Jinja2 is missing for FRR templates; install the Debian package python3-jinja2, or run .ci/setup";
  return "";
}

std::string FrrTemplateVariables(const ResolvedLab& lab, const ResolvedNode& node) {
  return Variables(lab, node, NodePlans(lab).at(node.name)).dump(2);
}

std::map<std::string, std::string> UserFrrConfigs(const ResolvedLab& lab,
                                                  const std::map<std::string, std::string>& images) {
  std::map<std::string, std::string> configs;
  std::vector<const ResolvedNode*> own;
  for (const ResolvedNode& n : lab.nodes)
    if (n.frr_config) own.push_back(&n);
  if (own.empty()) return configs;
  if (const std::string problem = FrrTemplateProblem(lab); !problem.empty()) throw InputError(problem);

  TempDir tmp;
  json request = {{"templates", json::array()}};
  const std::map<std::string, json> plans = NodePlans(lab);
  for (const ResolvedNode* n : own) {
    if (!n->frr_config->is_template) {
      configs[n->name] = ReadWhole(n->frr_config->path);
      continue;
    }
    request["templates"].push_back({{"node", n->name},
                                    {"template", n->frr_config->path},
                                    {"field", n->frr_config->field},
                                    {"variables", Variables(lab, *n, plans.at(n->name))}});
  }
  if (!request["templates"].empty()) {
    WriteFileWhole(tmp.path() + "/request.json", request.dump());
    std::string output;
    if (RunAndWait({kPython, Renderer(), tmp.path() + "/request.json", tmp.path()}, &output) != 0) {
      // "PATH line N: message (rendering frr_config[i].template for NODE)": name the entry's field.
      const std::string line = LastLine(output);
      std::string field = "frr_config";
      for (const ResolvedNode* n : own)
        if (line.find("(rendering " + n->frr_config->field + " ") != std::string::npos) field = n->frr_config->field;
      throw LabError(lab.source, field, line);
    }
    for (const json& t : request["templates"])
      configs[t["node"]] = ReadWhole(tmp.path() + "/" + t["node"].get<std::string>() + ".conf");
  }

  // vtysh -f silently skips what belongs to a daemon that does not run: refuse it here instead.
  if (lab.routing == Routing::kStatic)
    for (const ResolvedNode* n : own) {
      std::istringstream lines(configs[n->name]);
      std::string line;
      for (int number = 1; std::getline(lines, line); ++number)
        if (line.rfind("router bgp", 0) == 0 || line == "bfd")
          throw LabError(lab.source, n->frr_config->field,
                         Origin(*n) + ": line " + std::to_string(number) + " '" + line + "' needs " +
                             (line == "bfd" ? "bfdd" : "bgpd") +
                             ", which a lab with routing: static does not run (zebra and staticd only); use "
                             "routing: bgp");
    }

  // FRR's own parser, with no daemon running: every command must be one FRR knows: the FRR the
  // switch runs (its router image's, in a throwaway container, or this machine's).
  WriteVtyshConf(tmp.path());
  for (const ResolvedNode* n : own) {
    const std::string file = tmp.path() + "/" + n->name + ".check.conf";
    WriteFileWhole(file, configs[n->name]);
    const std::vector<std::string> check = {"--config_dir", tmp.path(), "--dryrun", "--inputfile", file};
    std::vector<std::string> argv = {kVtysh};
    std::string frr = "FRR's vtysh --dryrun";
    if (auto image = images.find(n->name); image != images.end()) {
      argv = Podman({"run", "--rm", "--network", "none", "--volume", tmp.path() + ":" + tmp.path() + ":ro",
                     "--entrypoint", kVtysh, image->second});
      frr = "vtysh --dryrun of " + image->second;
    }
    argv.insert(argv.end(), check.begin(), check.end());
    std::string output;
    if (RunAndWait(argv, &output) != 0)
      throw LabError(lab.source, n->frr_config->field,
                     Origin(*n) + ": " + FrrComplaint(output) + " (" + frr + "; `mrclab deploy " + lab.source +
                         " --frr-config " + n->name + "` prints it)");
  }
  return configs;
}

namespace {

// vtysh -f on the switch's daemons (all, or those named).
std::vector<std::string> EnterCommand(const FrrTools& tools, const std::string& node_dir,
                                      const std::vector<std::string>& daemons) {
  WriteVtyshConf(node_dir);
  std::vector<std::string> args = {"--config_dir", node_dir, "--vty_socket", node_dir};
  for (const std::string& d : daemons) args.insert(args.end(), {"-d", d});
  args.insert(args.end(), {"--inputfile", node_dir + "/frr.conf"});
  return tools.Command(kVtysh, args);
}

// "" when vtysh took every command, else FRR's complaint.
std::string Complaint(const CommandResult& entered) {
  return entered.status != 0 || entered.output.find("% ") != std::string::npos ? FrrComplaint(entered.output) : "";
}

}  // namespace

void ApplyFrrConfigs(const ResolvedLab& lab, const LabPaths& paths, const std::map<std::string, std::string>& configs,
                     const std::map<std::string, std::vector<std::string>>& daemons_of, int parallel,
                     const std::function<void(size_t done)>& on_progress) {
  std::vector<const ResolvedNode*> nodes;
  for (const auto& [name, text] : configs) {
    WriteFileWhole(paths.NodeDir(name) + "/frr.conf", text);
    nodes.push_back(lab.FindNode(name));
  }
  // A few rounds of `parallel` switches each, with a look for Ctrl-C between them.
  const size_t round = 4 * static_cast<size_t>(std::max(parallel, 1));
  for (size_t first = 0; first < nodes.size(); first += round) {
    ThrowIfInterrupted();
    const std::vector<const ResolvedNode*> these(nodes.begin() + first,
                                                 nodes.begin() + std::min(nodes.size(), first + round));
    std::vector<std::vector<std::string>> commands;
    for (const ResolvedNode* node : these)
      commands.push_back(EnterCommand(ToolsOf(lab.name, *node), paths.NodeDir(node->name), {}));
    const std::vector<CommandResult> entered = RunAllAndWait(commands, parallel);
    ThrowIfInterrupted();  // Ctrl-C reaches vtysh too: what it left undone is no refusal
    for (size_t i = 0; i < these.size(); ++i) {
      const std::string complaint = Complaint(entered[i]);
      if (complaint.empty()) continue;
      const ResolvedNode& node = *these[i];
      std::string names;
      for (const std::string& d : daemons_of.at(node.name)) names += (names.empty() ? "" : ", ") + d;
      throw LabError(lab.source, Field(node),
                     Origin(node) + ": FRR" + (node.image ? " of " + node.image->reference : "") + " refused it: " +
                         complaint + " (vtysh exit " + std::to_string(entered[i].status) +
                         "; the daemons the switch runs: " + names + ")");
    }
    on_progress(first + these.size());
  }
}

void EnterFrrConfig(const FrrTools& tools, const std::string& node_dir, const std::vector<std::string>& daemons) {
  if (daemons.empty() || !fs::exists(node_dir + "/frr.conf")) return;
  CommandResult entered;
  entered.status = RunAndWait(EnterCommand(tools, node_dir, daemons), &entered.output);
  if (const std::string complaint = Complaint(entered); !complaint.empty())
    throw std::runtime_error("FRR refused the switch's configuration " + node_dir + "/frr.conf again: " + complaint);
}

}  // namespace mrclab::emulator::netns
