#include "emulator/lab_spec.h"
#include "emulator/strict_yaml.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <cmath>
#include <filesystem>
#include <stdexcept>

#include "emulator/clos_generator.h"
#include "emulator/usid_plan.h"

#include <unistd.h>

namespace mrclab::emulator {
namespace {

namespace fs = std::filesystem;

// Control characters (a newline in a quoted key, an escape YAML quotes back) written as \n,
// \xHH: a message stays one line, whatever the file held.
std::string OneLine(const std::string& text) {
  std::string out;
  for (unsigned char c : text) {
    if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace

LabError::LabError(std::string file, std::string field, std::string reason)
    : Error(ErrorKind::kInput, OneLine(file) + ": " + OneLine(field) + ": " + OneLine(reason)),
      file_(OneLine(file)),
      field_(OneLine(field)),
      reason_(OneLine(reason)) {}

namespace {

constexpr size_t kMaxInterfaceName = 15;  // IFNAMSIZ - 1

bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// [a-z][a-z0-9-]{0,max_rest}
bool IsName(const std::string& s, size_t max_rest) {
  if (s.empty() || s.size() > max_rest + 1 || !IsLower(s[0])) return false;
  for (char c : s) {
    if (!IsLower(c) && !IsDigit(c) && c != '-') return false;
  }
  return true;
}

std::string InterfaceNameProblem(const std::string& s) {
  if (s.empty()) return "empty interface name";
  if (s.size() > kMaxInterfaceName) {
    return "interface name '" + s + "' is longer than 15 characters";
  }
  for (char c : s) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
    if (!ok) return "interface name '" + s + "' has characters outside [a-zA-Z0-9_.-]";
  }
  if (s == "." || s == "..") return "interface name '" + s + "' is not allowed";
  if (s == "lo") return "interface name 'lo' is reserved for the loopback";
  if (s == "sr0") return "interface name 'sr0' is reserved for the switch's SRv6 device";
  // /proc/sys/net/ipv6/conf/{all,default} are not interfaces: sysctls could not tell them apart.
  if (s == "all" || s == "default") return "interface name '" + s + "' is reserved by the kernel's sysctls";
  return "";
}

const char* KindText(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Null:
      return "nothing";
    case YAML::NodeType::Scalar:
      return "a scalar";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Map:
      return "a mapping";
    default:
      return "an undefined value";
  }
}

class Parser {
 public:
  Parser(std::string source, ParseOptions options) : source_(std::move(source)), options_(std::move(options)) {}

  LabSpec Parse(const std::string& text) {
    const YAML::Node root = LoadStrictYaml(text, source_);
    if (!root.IsMap()) Fail("(document)", std::string("expected a mapping, got ") + KindText(root));

    // A scenario given where a lab file belongs: say so, rather than that job: is unknown.
    if (!root["clos"] && !root["nodes"])
      for (const char* scenario_key : {"job", "transports"})
        if (root[scenario_key])
          Fail(scenario_key, "this is a scenario, not a lab file: run it with `mrclab drill " + source_ +
                                 "` (its lab: key names the lab)");

    LabSpec spec;
    spec.source = source_;
    auto keys = MapEntries(root, "", {"name", "clos", "routing", "link_rate", "link_delay", "mtu", "bfd_interval", "nodes", "links", "sysctls", "frr_config", "images", "runtimes"});

    if (!keys.count("name")) Fail("name", "required");
    spec.name = Scalar(keys["name"], "name");
    if (!IsName(spec.name, 15)) {
      Fail("name", "'" + spec.name + "' must match [a-z][a-z0-9-]{0,15}");
    }

    if (keys.count("routing")) {
      std::string r = Scalar(keys["routing"], "routing");
      if (r == "bgp") {
        spec.routing = Routing::kBgp;
      } else if (r == "static") {
        spec.routing = Routing::kStatic;
      } else {
        Fail("routing", "'" + r + "' must be bgp or static");
      }
    }

    if (keys.count("link_rate")) {
      std::string r = Scalar(keys["link_rate"], "link_rate");
      try {
        spec.link_rate_bps = ParseRate(r);
      } catch (const std::invalid_argument& e) {
        Fail("link_rate", e.what());
      }
    }
    if (keys.count("link_delay")) {
      std::string d = Scalar(keys["link_delay"], "link_delay");
      try {
        spec.link_delay_ns = ParseDelay(d);
      } catch (const std::invalid_argument& e) {
        Fail("link_delay", e.what());
      }
    }

    if (keys.count("bfd_interval")) {
      const std::string d = Scalar(keys["bfd_interval"], "bfd_interval");
      const size_t digits = std::min(d.find_first_not_of("0123456789"), d.size());
      const std::string unit = d.substr(digits);
      const std::optional<int> number = ParseLabInteger(d.substr(0, digits), 60000);
      const uint64_t ms = number && (unit == "ms" || unit == "s") ? *number * (unit == "s" ? 1000ull : 1ull) : 0;
      if (ms < 10 || ms > 60000)
        Fail("bfd_interval", "'" + d + "' must be whole ms or s from 10ms to 60s (BFD's transmit and receive interval)");
      spec.bfd_interval_ns = ms * 1000000;
    }

    if (keys.count("mtu")) {
      const std::string m = Scalar(keys["mtu"], "mtu");
      const std::optional<int> value = ParseLabInteger(m, kMaxLinkMtu);
      if (!value || *value < static_cast<int>(kMinLinkMtu))
        Fail("mtu", "'" + m + "' must be a whole number of bytes from " + std::to_string(kMinLinkMtu) + " (IPv6's minimum) to " +
                        std::to_string(kMaxLinkMtu));
      spec.mtu = static_cast<uint32_t>(*value);
    }

    if (keys.count("clos")) {
      spec.clos = ParseClos(keys["clos"]);
      GeneratedFabric fabric = GenerateClos(*spec.clos);
      spec.nodes = std::move(fabric.nodes);
      spec.links = std::move(fabric.links);
      for (const NodeSpec& n : spec.nodes) node_kinds_[n.name] = n.kind;
      for (size_t i = 0; i < spec.links.size(); ++i) {
        const LinkSpec& l = spec.links[i];
        std::string what = "the generated link " + l.a.node + ":" + l.a.interface + " <-> " +
                           l.b.node + ":" + l.b.interface;
        used_ports_[l.a.node + ":" + l.a.interface] = what;
        used_ports_[l.b.node + ":" + l.b.interface] = what;
      }
    }

    if (keys.count("nodes")) ParseNodes(keys["nodes"], spec);
    if (spec.nodes.empty()) Fail("nodes", "the lab has no nodes: give a clos block or nodes");
    if (keys.count("links")) ParseLinks(keys["links"], spec);
    if (keys.count("sysctls")) ParseSysctls(keys["sysctls"], spec);
    if (keys.count("frr_config")) ParseFrrConfigs(keys["frr_config"], spec);
    if (keys.count("images")) ParseImages(keys["images"], spec);
    if (keys.count("runtimes")) ParseRuntimes(keys["runtimes"], spec);
    return spec;
  }

 private:
  [[noreturn]] void Fail(const std::string& field, const std::string& reason) const {
    throw LabError(source_, field, reason);
  }

  static std::string Join(const std::string& prefix, const std::string& key) {
    return prefix.empty() ? key : prefix + "." + key;
  }

  // The entries of a mapping by key, rejecting unknown keys (LoadStrictYaml has already
  // refused non-scalar and duplicate ones).
  std::map<std::string, YAML::Node> MapEntries(const YAML::Node& map, const std::string& path,
                                               const std::set<std::string>& allowed) const {
    std::map<std::string, YAML::Node> out;
    for (const auto& kv : map) {
      std::string key = kv.first.Scalar();
      if (!allowed.empty() && !allowed.count(key)) {
        std::string known;
        for (const std::string& k : allowed) known += (known.empty() ? "" : ", ") + k;
        Fail(Join(path, key), "unknown key (known keys: " + known + ")");
      }
      out[key] = kv.second;
    }
    return out;
  }

  std::string Scalar(const YAML::Node& n, const std::string& field) const {
    if (!n.IsScalar()) Fail(field, std::string("expected a string, got ") + KindText(n));
    return n.Scalar();
  }

  int PositiveInt(const YAML::Node& n, const std::string& field) const {
    std::string s = n.IsScalar() ? n.Scalar() : "";
    std::optional<int> v = n.IsScalar() ? ParseLabInteger(s, 1000000) : std::nullopt;
    if (!v || *v <= 0) {
      Fail(field, "must be a positive integer" + (n.IsScalar() ? ", got '" + s + "'" : ""));
    }
    return *v;
  }

  ClosSpec ParseClos(const YAML::Node& n) {
    if (!n.IsMap()) Fail("clos", std::string("expected a mapping, got ") + KindText(n));
    auto keys = MapEntries(
        n, "clos", {"planes", "spines_per_plane", "leaves_per_plane", "hosts", "hosts_per_leaf"});
    auto get = [&](const std::string& key, int max) {
      std::string field = "clos." + key;
      if (!keys.count(key)) Fail(field, "required");
      const YAML::Node& v = keys[key];
      if (key == "spines_per_plane" && v.IsScalar() && ParseLabInteger(v.Scalar(), 0) == 0) {
        Fail(field, "a plane with no spines: every plane needs at least one spine");
      }
      int x = PositiveInt(v, field);
      if (x > max)
        Fail(field, std::to_string(x) + " is more than the " + std::to_string(max) +
                        " the uSID plan allows");
      return x;
    };
    ClosSpec c;
    c.planes = get("planes", kMaxPlanes);
    c.spines_per_plane = get("spines_per_plane", kMaxSwitchesPerRole);
    c.leaves_per_plane = get("leaves_per_plane", kMaxSwitchesPerRole);
    c.hosts = get("hosts", kMaxSwitchesPerRole * kMaxHostPortsPerLeaf);
    c.hosts_per_leaf = get("hosts_per_leaf", kMaxHostPortsPerLeaf);
    if (c.hosts > c.leaves_per_plane * c.hosts_per_leaf) {
      Fail("clos.hosts", std::to_string(c.hosts) + " hosts do not fit on " +
                             std::to_string(c.leaves_per_plane) + " leaves with " +
                             std::to_string(c.hosts_per_leaf) + " hosts_per_leaf");
    }
    const uint64_t links = uint64_t(c.planes) * c.spines_per_plane * c.leaves_per_plane + uint64_t(c.planes) * c.hosts;
    if (links > kMaxClosLinks)
      Fail("clos", "the fabric would have " + std::to_string(links) + " links, more than the " +
                       std::to_string(kMaxClosLinks) + " mrclab can plan (131,072 hosts on 8 planes have 2,097,152)");
    return c;
  }

  // match: {node|kind|role|plane: ...}
  NodeMatch ParseMatch(const YAML::Node& n, const std::string& path) const {
    if (!n.IsMap()) Fail(path, std::string("expected a mapping, got ") + KindText(n));
    NodeMatch match;
    auto m = MapEntries(n, path, {"node", "kind", "role", "plane"});
    if (m.count("node")) {
      match.node = Scalar(m["node"], path + ".node");
      if (!node_kinds_.count(*match.node)) Fail(path + ".node", "unknown node '" + *match.node + "'");
    }
    if (m.count("kind")) {
      const std::string kind = Scalar(m["kind"], path + ".kind");
      if (kind != "switch" && kind != "host") Fail(path + ".kind", "'" + kind + "' must be switch or host");
      match.kind = kind == "switch" ? NodeKind::kSwitch : NodeKind::kHost;
    }
    if (m.count("role")) {
      const std::string role = Scalar(m["role"], path + ".role");
      if (role != "spine" && role != "leaf") Fail(path + ".role", "'" + role + "' must be spine or leaf");
      match.role = role == "spine" ? SwitchRole::kSpine : SwitchRole::kLeaf;
    }
    if (m.count("plane")) {
      const YAML::Node& v = m["plane"];
      match.plane = v.IsScalar() ? ParseLabInteger(v.Scalar(), kMaxPlanes - 1) : std::nullopt;
      if (!match.plane) Fail(path + ".plane", "must be an integer from 0 to 14");
    }
    return match;
  }

  // sysctls: [{match: {node|kind|role|plane: ...}, set: {net.KEY: VALUE, ...}}, ...]
  void ParseSysctls(const YAML::Node& n, LabSpec& spec) {
    if (!n.IsSequence()) Fail("sysctls", std::string("expected a list of {match, set}, got ") + KindText(n));
    for (size_t i = 0; i < n.size(); ++i) {
      SysctlSpec s;
      s.field = "sysctls[" + std::to_string(i) + "]";
      if (!n[i].IsMap()) Fail(s.field, std::string("expected a mapping with match and set, got ") + KindText(n[i]));
      auto keys = MapEntries(n[i], s.field, {"match", "set"});
      if (keys.count("match")) s.match = ParseMatch(keys["match"], s.field + ".match");
      if (!keys.count("set")) Fail(s.field + ".set", "required: a mapping of net.* settings to values");
      const std::string path = s.field + ".set";
      if (!keys["set"].IsMap() || keys["set"].size() == 0)
        Fail(path, "expected a non-empty mapping of net.* settings to values");
      for (const auto& kv : keys["set"]) {
        const std::string key = kv.first.Scalar();
        const std::string field = path + "." + key;
        if (!ValidSysctlKey(key))
          Fail(field, key.rfind("net.", 0) == 0 ? "not a sysctl name (net.<a-z0-9_-> parts joined by dots)"
                                                : "only net.* settings are per network namespace; this one would "
                                                  "change the whole machine");
        const std::string value = Scalar(kv.second, field);
        if (value.size() > 256 || value.find_first_of("\n\r/") != std::string::npos)
          Fail(field, "the value must be one line of at most 256 characters without '/'");
        s.settings.emplace_back(key, value);
      }
      spec.sysctls.push_back(std::move(s));
    }
  }

  // frr_config: [{match: {node|role|plane: ...}, template: FILE.j2 | file: FILE}, ...]
  void ParseFrrConfigs(const YAML::Node& n, LabSpec& spec) {
    if (!n.IsSequence())
      Fail("frr_config", std::string("expected a list of {match, template or file}, got ") + KindText(n));
    const fs::path folder = options_.files_dir.empty() ? LabFilesDir(source_) : options_.files_dir;
    for (size_t i = 0; i < n.size(); ++i) {
      FrrConfigSpec c;
      const std::string entry = "frr_config[" + std::to_string(i) + "]";
      if (!n[i].IsMap()) Fail(entry, std::string("expected a mapping with match and template or file, got ") + KindText(n[i]));
      auto keys = MapEntries(n[i], entry, {"match", "template", "file"});
      if (keys.count("match")) c.match = ParseMatch(keys["match"], entry + ".match");
      if (c.match.kind == NodeKind::kHost)
        Fail(entry + ".match.kind", "FRR runs on switches only; hosts have no routing daemons");
      if (keys.count("template") == keys.count("file"))
        Fail(entry, "give either template (a Jinja2 template of frr.conf) or file (a plain frr.conf)");
      c.is_template = keys.count("template") > 0;
      c.field = entry + (c.is_template ? ".template" : ".file");
      const std::string given = Scalar(keys[c.is_template ? "template" : "file"], c.field);
      c.path = (folder / given).lexically_normal().string();
      std::error_code ec;
      if (options_.check_files && !fs::is_regular_file(c.path, ec))
        Fail(c.field, "'" + given + "': no such file (" + c.path + ")");
      if (options_.check_files && access(c.path.c_str(), R_OK) != 0)
        Fail(c.field, "'" + given + "': not readable (" + c.path + ")");
      spec.frr_configs.push_back(std::move(c));
    }
  }

  // images: [{match: {node|role|plane: ...}, image: TAG | archive: FILE}, ...]
  void ParseImages(const YAML::Node& n, LabSpec& spec) {
    if (!n.IsSequence()) Fail("images", std::string("expected a list of {match, image or archive}, got ") + KindText(n));
    const fs::path folder = options_.files_dir.empty() ? LabFilesDir(source_) : options_.files_dir;
    for (size_t i = 0; i < n.size(); ++i) {
      ImageSpec c;
      const std::string entry = "images[" + std::to_string(i) + "]";
      if (!n[i].IsMap()) Fail(entry, std::string("expected a mapping with match and image or archive, got ") + KindText(n[i]));
      auto keys = MapEntries(n[i], entry, {"match", "image", "archive"});
      if (keys.count("match")) c.match = ParseMatch(keys["match"], entry + ".match");
      if (c.match.kind == NodeKind::kHost)
        Fail(entry + ".match.kind", "only switches run from router images; hosts run the MRC endpoints");
      if (keys.count("image") == keys.count("archive"))
        Fail(entry, "give either image (a tag: mrclab image list) or archive (a podman save file)");
      c.is_archive = keys.count("archive") > 0;
      c.field = entry + (c.is_archive ? ".archive" : ".image");
      const std::string given = Scalar(keys[c.is_archive ? "archive" : "image"], c.field);
      if (!c.is_archive) {
        static const std::regex kTag(R"([a-z0-9][a-z0-9._/:@-]{0,254})");
        if (!std::regex_match(given, kTag))
          Fail(c.field, "'" + given + "' is not an image name (lower-case letters, digits and . _ / : @ -)");
        c.reference = given;
      } else {
        c.reference = (folder / given).lexically_normal().string();
        std::error_code ec;
        if (options_.check_files && !fs::is_regular_file(c.reference, ec))
          Fail(c.field, "'" + given + "': no such file (" + c.reference + ")");
      }
      spec.images.push_back(std::move(c));
    }
  }

  // runtimes: [{match: {node|kind: host}, runtime: vm|netns, memory: 256MiB, cpus: 1}, ...]
  void ParseRuntimes(const YAML::Node& n, LabSpec& spec) {
    if (!n.IsSequence()) Fail("runtimes", std::string("expected a list of {match, runtime, memory, cpus}, got ") + KindText(n));
    for (size_t i = 0; i < n.size(); ++i) {
      RuntimeSpec r;
      r.field = "runtimes[" + std::to_string(i) + "]";
      if (!n[i].IsMap()) Fail(r.field, std::string("expected a mapping with match and runtime, got ") + KindText(n[i]));
      auto keys = MapEntries(n[i], r.field, {"match", "runtime", "memory", "cpus"});
      if (keys.count("match")) r.match = ParseMatch(keys["match"], r.field + ".match");
      if (r.match.kind == NodeKind::kSwitch || r.match.role || r.match.plane)
        Fail(r.field + ".match", "only hosts have a runtime (switches run FRR: images: for containers)");
      if (!keys.count("runtime")) Fail(r.field + ".runtime", "missing: vm (a VM with its own kernel) or netns");
      const std::string runtime = Scalar(keys["runtime"], r.field + ".runtime");
      if (runtime != "vm" && runtime != "netns") Fail(r.field + ".runtime", "'" + runtime + "' must be vm or netns");
      r.vm = runtime == "vm";
      if (!r.vm && (keys.count("memory") || keys.count("cpus")))
        Fail(r.field, "memory and cpus are for runtime: vm");
      if (keys.count("memory")) {
        const std::string text = Scalar(keys["memory"], r.field + ".memory");
        static const std::regex kMemory(R"(([0-9]{1,6})\s*(MiB|GiB))");
        std::smatch m;
        if (!std::regex_match(text, m, kMemory)) Fail(r.field + ".memory", "'" + text + "' is not a size like 256MiB or 1GiB");
        const uint64_t mib = std::stoull(m[1]) * (m[2] == "GiB" ? 1024 : 1);
        if (mib < kMinVmMemoryMib || mib > kMaxVmMemoryMib)
          Fail(r.field + ".memory", "'" + text + "' must be from " + std::to_string(kMinVmMemoryMib) + "MiB to " +
                                        std::to_string(kMaxVmMemoryMib / 1024) + "GiB");
        r.memory_mib = static_cast<uint32_t>(mib);
      }
      if (keys.count("cpus")) {
        const YAML::Node& v = keys["cpus"];
        auto cpus = v.IsScalar() ? ParseLabInteger(v.Scalar(), kMaxVmCpus) : std::nullopt;
        if (!cpus || *cpus < 1) Fail(r.field + ".cpus", "must be an integer from 1 to " + std::to_string(kMaxVmCpus));
        r.cpus = static_cast<uint32_t>(*cpus);
      }
      spec.runtimes.push_back(std::move(r));
    }
  }

  static bool ValidSysctlKey(const std::string& key) {
    if (key.rfind("net.", 0) != 0 || key.size() > 200 || key.back() == '.') return false;
    for (size_t i = 0; i < key.size(); ++i) {
      const char c = key[i];
      if (c == '.' && key[i - 1] == '.') return false;
      if (!(IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '-' || c == '.'))
        return false;
    }
    return true;
  }

  void ParseNodes(const YAML::Node& n, LabSpec& spec) {
    if (n.IsNull()) return;
    if (!n.IsMap())
      Fail("nodes", std::string("expected a mapping of name to node, got ") + KindText(n));
    for (const auto& kv : n) {
      std::string name = kv.first.Scalar();
      std::string path = "nodes." + name;
      if (!IsName(name, 30)) Fail(path, "node name '" + name + "' must match [a-z][a-z0-9-]{0,30}");
      if (node_kinds_.count(name)) {
        Fail(path, "duplicates the generated node '" + name + "' of the clos block");
      }

      NodeSpec node;
      node.name = name;
      const YAML::Node& body = kv.second;
      if (!body.IsMap())
        Fail(path, std::string("expected a mapping with kind, got ") + KindText(body));
      auto keys = MapEntries(body, path, {"kind", "plane", "role"});
      if (!keys.count("kind")) Fail(path + ".kind", "required: switch or host");
      std::string kind = Scalar(keys["kind"], path + ".kind");
      if (kind == "switch") {
        node.kind = NodeKind::kSwitch;
      } else if (kind == "host") {
        node.kind = NodeKind::kHost;
      } else {
        Fail(path + ".kind", "'" + kind + "' must be switch or host");
      }
      if (keys.count("plane")) {
        if (node.kind == NodeKind::kHost) {
          Fail(path + ".plane", "hosts have no plane: their ports take the plane of their leaf");
        }
        const YAML::Node& v = keys["plane"];
        std::optional<int> p = v.IsScalar() ? ParseLabInteger(v.Scalar(), kMaxPlanes - 1) : std::nullopt;
        if (!p) Fail(path + ".plane", "must be an integer from 0 to 14");
        node.plane = *p;
      }
      if (keys.count("role")) {
        if (node.kind == NodeKind::kHost) Fail(path + ".role", "only switches have a role");
        std::string role = Scalar(keys["role"], path + ".role");
        if (role == "spine") {
          node.role = SwitchRole::kSpine;
        } else if (role == "leaf") {
          node.role = SwitchRole::kLeaf;
        } else {
          Fail(path + ".role", "'" + role + "' must be spine or leaf");
        }
      }
      node_kinds_[name] = node.kind;
      spec.nodes.push_back(std::move(node));
    }
  }

  EndpointSpec ParseEndpoint(const YAML::Node& n, const std::string& path) {
    std::string text = Scalar(n, path);
    size_t colon = text.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == text.size() ||
        text.find(':', colon + 1) != std::string::npos) {
      Fail(path, "'" + text + "' is not in node:interface form");
    }
    EndpointSpec e{text.substr(0, colon), text.substr(colon + 1)};
    if (!node_kinds_.count(e.node)) Fail(path, "unknown node '" + e.node + "'");
    if (std::string why = InterfaceNameProblem(e.interface); !why.empty()) Fail(path, why);
    return e;
  }

  void ParseLinks(const YAML::Node& n, LabSpec& spec) {
    if (n.IsNull()) return;
    if (!n.IsSequence()) Fail("links", std::string("expected a list, got ") + KindText(n));
    for (size_t i = 0; i < n.size(); ++i) {
      std::string path = "links[" + std::to_string(i) + "]";
      const YAML::Node& body = n[i];
      if (!body.IsMap())
        Fail(path, std::string("expected a mapping with endpoints, got ") + KindText(body));
      auto keys = MapEntries(body, path, {"endpoints"});
      std::string ep_path = path + ".endpoints";
      if (!keys.count("endpoints")) Fail(ep_path, "required");
      const YAML::Node& eps = keys["endpoints"];
      if (!eps.IsSequence() || eps.size() != 2) {
        Fail(ep_path, "expected a list of exactly two node:interface endpoints");
      }
      LinkSpec link{ParseEndpoint(eps[0], ep_path + "[0]"), ParseEndpoint(eps[1], ep_path + "[1]")};
      if (link.a.node == link.b.node)
        Fail(ep_path, "a link from node '" + link.a.node + "' to itself");
      if (node_kinds_[link.a.node] == NodeKind::kHost &&
          node_kinds_[link.b.node] == NodeKind::kHost) {
        Fail(ep_path, "host-to-host links are not supported: hosts attach to leaves");
      }
      const EndpointSpec* ends[2] = {&link.a, &link.b};
      for (int j = 0; j < 2; ++j) {
        std::string port = ends[j]->node + ":" + ends[j]->interface;
        auto it = used_ports_.find(port);
        if (it != used_ports_.end()) {
          Fail(ep_path + "[" + std::to_string(j) + "]", port + " is already used by " + it->second);
        }
        used_ports_[port] = path;
      }
      spec.links.push_back(std::move(link));
    }
  }

  std::string source_;
  std::map<std::string, NodeKind> node_kinds_;
  std::map<std::string, std::string> used_ports_;  // "node:if" -> which link uses it
  ParseOptions options_;
};

}  // namespace

std::optional<int> ParseLabInteger(const std::string& s, int max) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  for (char c : s) {
    if (!IsDigit(c)) return std::nullopt;
  }
  const int v = std::stoi(s);
  if (v > max) return std::nullopt;
  return v;
}

LabSpec ParseLabText(const std::string& yaml_text, const std::string& source_name, const ParseOptions& options) {
  return Parser(source_name, options).Parse(yaml_text);
}

std::string LabFilesDir(const std::string& source_name) {
  if (source_name.empty() || source_name[0] == '<') return fs::current_path().string();
  return fs::absolute(source_name).parent_path().lexically_normal().string();
}

LabSpec ParseLabFile(const std::string& path) { return ParseLabText(ReadInputFile(path), path); }

bool IsLabFilePath(const std::string& text) {
  return text.find('/') != std::string::npos || text.ends_with(".yaml") || text.ends_with(".yml");
}

uint64_t ParseDelay(const std::string& text) {
  const std::string bad = "delay '" + text + "' must be a positive number with a unit of ns, us or ms, e.g. 1us";
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    throw std::invalid_argument(bad);
  }
  if (used == 0 || !IsDigit(text[0])) throw std::invalid_argument(bad);
  const std::string unit = text.substr(used);
  const double scale = unit == "ns" ? 1 : unit == "us" ? 1e3 : unit == "ms" ? 1e6 : 0;
  if (scale == 0) throw std::invalid_argument(bad);
  const double ns = value * scale;
  if (!(ns >= 1) || ns > 1e9) throw std::invalid_argument("delay '" + text + "' must be between 1ns and 1000ms");
  return static_cast<uint64_t>(std::llround(ns));
}

uint64_t ParseRate(const std::string& text) {
  size_t i = 0;
  unsigned __int128 whole = 0, frac = 0, frac_scale = 1;
  size_t digits = 0;
  while (i < text.size() && IsDigit(text[i])) {
    if (++digits > 20) throw std::invalid_argument("rate '" + text + "' is too large");
    whole = whole * 10 + static_cast<unsigned>(text[i++] - '0');
  }
  if (i < text.size() && text[i] == '.') {
    ++i;
    size_t frac_digits = 0;
    while (i < text.size() && IsDigit(text[i])) {
      if (++frac_digits > 12)
        throw std::invalid_argument("rate '" + text + "' has too many decimals");
      frac = frac * 10 + static_cast<unsigned>(text[i++] - '0');
      frac_scale *= 10;
    }
    if (frac_digits == 0) digits = 0;
  }
  if (digits == 0) {
    throw std::invalid_argument("rate '" + text + "' must be a number with a unit, e.g. 1Gbit");
  }
  std::string unit;
  for (; i < text.size(); ++i)
    unit += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  unsigned __int128 mult;
  if (unit == "bit") {
    mult = 1;
  } else if (unit == "kbit") {
    mult = 1000;
  } else if (unit == "mbit") {
    mult = 1000000;
  } else if (unit == "gbit") {
    mult = 1000000000;
  } else if (unit == "tbit") {
    mult = 1000000000000ULL;
  } else {
    throw std::invalid_argument("rate '" + text +
                                "' needs a unit of bit, kbit, Mbit, Gbit or Tbit");
  }
  unsigned __int128 frac_bits = frac * mult;
  if (frac_bits % frac_scale != 0) {
    throw std::invalid_argument("rate '" + text + "' is not a whole number of bits per second");
  }
  unsigned __int128 bps = whole * mult + frac_bits / frac_scale;
  if (bps == 0) throw std::invalid_argument("rate '" + text + "' must be positive");
  if (bps < kMinLinkRateBps)
    throw std::invalid_argument("rate '" + text + "' is below 100kbit, the slowest link mrclab runs "
                                "(tc cannot shape much below it, and BGP and BFD need it)");
  if (bps > static_cast<unsigned __int128>(UINT64_MAX)) {
    throw std::invalid_argument("rate '" + text + "' is too large");
  }
  return static_cast<uint64_t>(bps);
}

std::string FormatRate(uint64_t rate_bps) {
  static const std::pair<uint64_t, const char*> kUnits[] = {
      {1000000000000ULL, "Tbit"}, {1000000000ULL, "Gbit"}, {1000000ULL, "Mbit"}, {1000ULL, "kbit"}};
  for (const auto& [unit, name] : kUnits)
    if (rate_bps >= unit && rate_bps % unit == 0) return std::to_string(rate_bps / unit) + name;
  return std::to_string(rate_bps) + "bit";
}

}  // namespace mrclab::emulator
