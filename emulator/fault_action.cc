// FaultAction as data: names of kinds and directions, JSON, descriptions, validation against
// a lab, and which FRR daemon owns a configuration line. Touches no kernel state.
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "emulator/fault.h"

#include <algorithm>

namespace mrclab::emulator {
namespace {

using nlohmann::json;

using T = FaultTarget;
constexpr FaultKindInfo kKinds[] = {
    {FaultKind::kLinkDown, "link_down", T::kLink, false, true, true, "both ends of the link down (routing sees it)"},
    {FaultKind::kFlap, "flap", T::kLink, false, true, true, "link_down windows: count x (down, up)"},
    {FaultKind::kBlackhole, "blackhole", T::kLink, false, true, true, "carrier kept, receiving end(s) drop everything"},
    {FaultKind::kLoss, "loss", T::kLink, false, true, true, "receiving end(s) drop a random fraction"},
    {FaultKind::kRate, "rate", T::kLink, false, true, true, "the link's rate replaced"},
    {FaultKind::kSwitchDown, "switch_down", T::kSwitch, false, true, true, "every link of the switch down, daemons stopped"},
    {FaultKind::kPlaneDown, "plane_down", T::kPlane, false, true, true, "every host port of the plane down"},
    {FaultKind::kBgpReset, "bgp_reset", T::kSwitch, false, true, false, "`clear bgp *`, or bgpd restarted"},
    {FaultKind::kConfigChange, "config_change", T::kSwitch, false, true, false, "lines entered into one FRR daemon"},
    {FaultKind::kEvDeny, "ev_deny", T::kHostPair, true, true, true, "the job's MRC endpoints stop using some EVs"},
    {FaultKind::kPortDisable, "port_disable", T::kHostPort, true, true, true, "the job's endpoints stop using a NIC port"},
};

// Targets come from the table (for the fabric kinds a FaultAction carries).
bool OnLink(FaultKind k) { return Info(k).target == FaultTarget::kLink; }
bool OnSwitch(FaultKind k) { return Info(k).target == FaultTarget::kSwitch; }
bool Directed(FaultKind k) { return k == FaultKind::kBlackhole || k == FaultKind::kLoss; }

std::string LinkText(const ResolvedLab& lab, int link) {
  if (link < 0 || link >= static_cast<int>(lab.links.size())) return "link #" + std::to_string(link);
  const ResolvedLink& l = lab.links[link];
  return l.a.node + ":" + l.a.interface + " <-> " + l.b.node + ":" + l.b.interface;
}

std::string DirectionText(const ResolvedLab& lab, const FaultAction& a) {
  if (a.direction == Direction::kBoth || a.link < 0 || a.link >= static_cast<int>(lab.links.size()))
    return a.direction == Direction::kBoth ? "both directions" : std::string(ToString(a.direction));
  const ResolvedLink& l = lab.links[a.link];
  return a.direction == Direction::kAToB ? l.a.node + " -> " + l.b.node + " only"
                                         : l.b.node + " -> " + l.a.node + " only";
}

std::string Percent(double rate) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g%%", std::round(rate * 10000) / 100);
  return buf;
}

std::string Number(double value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", value);
  return buf;
}

std::string JoinLines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) {
    size_t first = l.find_first_not_of(' ');
    out += (out.empty() ? "" : "; ") + (first == std::string::npos ? l : l.substr(first));
  }
  return out;
}

std::vector<std::string> Words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

[[noreturn]] void Bad(const std::string& field, const std::string& reason) {
  throw FaultError("fault action: " + field + ": " + reason, ErrorKind::kInput);
}

template <typename T>
T Field(const json& doc, const char* name, const char* expected) {
  const json& v = doc.at(name);
  try {
    return v.get<T>();
  } catch (const json::exception&) {
    Bad(name, v.dump() + " is not " + expected);
  }
}

std::vector<std::string> Lines(const json& doc, const char* name) {
  if (!doc.contains(name)) return {};
  const json& v = doc.at(name);
  if (!v.is_array()) Bad(name, "must be a list of strings");
  std::vector<std::string> out;
  for (const json& line : v) {
    if (!line.is_string()) Bad(name, line.dump() + " is not a string");
    out.push_back(line.get<std::string>());
  }
  return out;
}

void CheckLines(const std::vector<std::string>& lines, const std::string& field) {
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string where = field + "[" + std::to_string(i) + "]";
    const std::vector<std::string> words = Words(lines[i]);
    if (words.empty()) Bad(where, "an empty line");
    if (lines[i].find_first_of("\n\r", 0) != std::string::npos || lines[i].find('\0') != std::string::npos)
      Bad(where, "a line may not contain a line break");
    const std::string& w = words[0];
    if (w == "end" || w == "configure" || w == "conf" || w == "enable")
      Bad(where, "'" + lines[i] + "': mrclab enters and leaves configure mode itself; give only "
                 "configuration lines");
    if (w == "write" || w == "copy" || w == "do")
      Bad(where, "'" + lines[i] + "' is not a configuration line (and could overwrite the deployed "
                 "configuration files that revert restores)");
  }
}

}  // namespace

std::span<const FaultKindInfo> FaultKinds() { return kKinds; }

const FaultKindInfo& Info(FaultKind kind) {
  for (const auto& info : kKinds)
    if (info.kind == kind) return info;
  throw std::logic_error("fault kind missing from the table");
}

std::string_view ToString(FaultKind kind) { return Info(kind).name; }

std::optional<FaultKind> ParseFaultKind(std::string_view text) {
  for (const auto& info : kKinds)
    if (info.name == text) return info.kind;
  return std::nullopt;
}

std::string FaultKindNames() {
  std::string out;
  for (const auto& info : kKinds) out += (out.empty() ? "" : ", ") + std::string(info.name);
  return out;
}

bool Supports(BackendKind backend, FaultKind kind) {
  const FaultKindInfo& info = Info(kind);
  return backend == BackendKind::kNetns ? info.netns : info.ns3;
}

std::string_view ToString(BackendKind b) { return b == BackendKind::kNs3 ? "ns3" : "netns"; }

std::optional<BackendKind> ParseBackend(std::string_view text) {
  if (text == "netns") return BackendKind::kNetns;
  if (text == "ns3") return BackendKind::kNs3;
  return std::nullopt;
}

// The kinds a FaultAction carries (a backend applies them to the fabric).
bool FabricAction(FaultKind k) { return !Info(k).controller && k != FaultKind::kFlap; }

std::string_view ToString(Direction direction) {
  switch (direction) {
    case Direction::kAToB: return "a-b";
    case Direction::kBToA: return "b-a";
    default: return "both";
  }
}

std::optional<Direction> ParseDirection(std::string_view text) {
  if (text == "both") return Direction::kBoth;
  if (text == "a-b") return Direction::kAToB;
  if (text == "b-a") return Direction::kBToA;
  return std::nullopt;
}

std::string ConfigDaemon(const std::string& line) {
  std::vector<std::string> w = Words(line);
  if (!w.empty() && w[0] == "no") w.erase(w.begin());
  auto word = [&](size_t i) { return i < w.size() ? w[i] : std::string(); };
  static const std::set<std::string> kBgpLists = {
      "as-path", "community-list", "extcommunity-list", "large-community-list", "prefix-list",
      "access-list"};
  if ((word(0) == "router" && word(1) == "bgp") || word(0) == "bgp" || word(0) == "route-map" ||
      word(0) == "access-list")
    return "bgpd";
  if ((word(0) == "ip" || word(0) == "ipv6") && kBgpLists.count(word(1))) return "bgpd";
  if ((word(0) == "ip" || word(0) == "ipv6") && word(1) == "route") return "staticd";
  if (word(0) == "bfd") return "bfdd";
  return "zebra";
}

std::string FaultAction::Describe(const ResolvedLab& lab) const {
  const std::string name(ToString(kind));
  switch (kind) {
    case FaultKind::kLinkDown:
      return name + " " + LinkText(lab, link);
    case FaultKind::kBlackhole:
      return name + " " + LinkText(lab, link) + " (" + DirectionText(lab, *this) + ")";
    case FaultKind::kLoss:
      return name + " " + Percent(loss_rate) + " " + LinkText(lab, link) + " (" +
             DirectionText(lab, *this) + ")";
    case FaultKind::kRate:
      return name + " " + FormatRate(rate_bps) + " " + LinkText(lab, link) + " (lab: " +
             (lab.link_rate_bps ? FormatRate(*lab.link_rate_bps) : std::string("unshaped")) + ")";
    case FaultKind::kSwitchDown:
      return name + " " + node + " (all its links down; in a lab also its FRR daemons stopped)";
    case FaultKind::kPlaneDown:
      return name + " " + std::to_string(plane) + " (every host port of plane " +
             std::to_string(plane) + " down)";
    case FaultKind::kBgpReset:
      return name + " " + node + (bgp_mode == "restart" ? " (bgpd restarted)" : " (clear bgp *)");
    case FaultKind::kConfigChange:
      return name + " " + node + " " + (config_lines.empty() ? "?" : ConfigDaemon(config_lines[0])) +
             ": " + JoinLines(config_lines) + " (revert: " +
             (revert_lines.empty() ? "" : JoinLines(revert_lines) + ", then ") +
             "reload of the configuration saved at apply" +
             ")";
    default:
      break;
  }
  return name;
}

json FaultAction::ToJson() const {
  json doc = {{"kind", ToString(kind)}};
  if (OnLink(kind)) doc["link"] = link;
  if (OnSwitch(kind)) doc["node"] = node;
  if (kind == FaultKind::kPlaneDown) doc["plane"] = plane;
  if (Directed(kind)) doc["direction"] = ToString(direction);
  if (kind == FaultKind::kLoss) doc["loss_rate"] = loss_rate;
  if (kind == FaultKind::kRate) doc["rate_bps"] = rate_bps;
  if (kind == FaultKind::kBgpReset) doc["bgp_mode"] = bgp_mode;
  if (kind == FaultKind::kConfigChange) {
    doc["config_lines"] = config_lines;
    doc["revert_lines"] = revert_lines;
  }
  return doc;
}

FaultAction FaultAction::FromJson(const json& doc) {
  if (!doc.is_object()) Bad("-", "expected an object, got " + doc.dump());
  static const std::set<std::string> kKnown = {"kind",     "link",      "node",     "plane",
                                               "direction", "loss_rate", "rate_bps", "bgp_mode",
                                               "config_lines", "revert_lines"};
  for (const auto& [key, value] : doc.items())
    if (!kKnown.count(key)) Bad(key, "unknown field");
  if (!doc.contains("kind")) Bad("kind", "missing");
  FaultAction a;
  const std::string kind = Field<std::string>(doc, "kind", "a string");
  auto parsed = ParseFaultKind(kind);
  if (!parsed || !FabricAction(*parsed))
    Bad("kind", "'" + kind + "' is not one of link_down, blackhole, loss, rate, switch_down, "
                "plane_down, bgp_reset, config_change");
  a.kind = *parsed;
  if (doc.contains("link")) a.link = Field<int>(doc, "link", "a link index");
  if (doc.contains("node")) a.node = Field<std::string>(doc, "node", "a node name");
  if (doc.contains("plane")) a.plane = Field<int>(doc, "plane", "a plane number");
  if (doc.contains("direction")) {
    const std::string d = Field<std::string>(doc, "direction", "a string");
    auto dir = ParseDirection(d);
    if (!dir) Bad("direction", "'" + d + "' is not both, a-b or b-a");
    a.direction = *dir;
  }
  if (doc.contains("loss_rate")) a.loss_rate = Field<double>(doc, "loss_rate", "a number");
  if (doc.contains("rate_bps")) {
    if (!doc["rate_bps"].is_number_unsigned() && !doc["rate_bps"].is_number_integer())
      Bad("rate_bps", doc["rate_bps"].dump() + " is not a whole number of bits per second");
    if (doc["rate_bps"].is_number_integer() && doc["rate_bps"].get<int64_t>() < 0)
      Bad("rate_bps", doc["rate_bps"].dump() + " is negative");
    a.rate_bps = doc["rate_bps"].get<uint64_t>();
  }
  if (doc.contains("bgp_mode")) a.bgp_mode = Field<std::string>(doc, "bgp_mode", "a string");
  a.config_lines = Lines(doc, "config_lines");
  a.revert_lines = Lines(doc, "revert_lines");
  return a;
}

namespace {

// The kernel means of faults act on both ends of a link in this machine's namespaces, and a VM
// host's end is in its guest. Blackhole and loss are made on the leaf's side of a VM host's link
// (faults.cc: DropPoints); link down (also of switch_down and plane_down) takes the leaf's tap
// down and the guest NIC's carrier through qemu (fault_kernel.h); rate is refused.
void RefuseRateOnVmHostLink(const ResolvedLab& lab, const FaultAction& a) {
  if (a.kind != FaultKind::kRate || a.link < 0 || a.link >= static_cast<int>(lab.links.size())) return;
  const ResolvedLink& l = lab.links[a.link];
  if (const ResolvedNode* vm = lab.VmHostOn(l))
    Bad("link", "link " + std::to_string(l.index) + " (" + l.a.node + ":" + l.a.interface + ") ends on VM host " +
                    vm->name + ": rate is not made on a VM host's links yet (its end is in the guest); shape a "
                    "fabric link");
}

}  // namespace

std::string RateFaultProblem(const ResolvedLab& lab, uint64_t rate_bps) {
  if (!lab.link_rate_bps || rate_bps < *lab.link_rate_bps) return "";
  return FormatRate(rate_bps) + " is not below the link_rate of lab '" + lab.name + "' (" +
         FormatRate(*lab.link_rate_bps) + "): a rate fault slows a link";
}

void ValidateFault(const ResolvedLab& lab, const FaultAction& a) {
  const std::string kind(ToString(a.kind));
  if (!FabricAction(a.kind)) Bad("kind", kind + " is not a fabric fault (it is planned or applied by the drill)");
  if (OnLink(a.kind) && (a.link < 0 || a.link >= static_cast<int>(lab.links.size())))
    Bad("link", std::to_string(a.link) + " is not a link of lab '" + lab.name + "' (it has " +
                    std::to_string(lab.links.size()) + " links, 0.." +
                    std::to_string(static_cast<int>(lab.links.size()) - 1) + ")");
  if (OnSwitch(a.kind)) {
    if (a.node.empty()) Bad("node", kind + " needs a switch name");
    const ResolvedNode* n = lab.FindNode(a.node);
    if (!n) Bad("node", "unknown node '" + a.node + "' in lab '" + lab.name + "'");
    if (n->kind != NodeKind::kSwitch)
      Bad("node", "'" + a.node + "' is a host, not a switch: " + kind + " applies to switches");
  }
  switch (a.kind) {
    case FaultKind::kLoss:
      if (!std::isfinite(a.loss_rate) || a.loss_rate < 0 || a.loss_rate > 1)
        Bad("loss_rate", Number(a.loss_rate) + " is outside 0..1 (a probability)");
      break;
    case FaultKind::kRate:
      if (a.rate_bps == 0) Bad("rate_bps", "must be positive (link_down takes a link down)");
      if (a.rate_bps < 8000) Bad("rate_bps", std::to_string(a.rate_bps) + " bit/s is below tc's "
                                             "useful minimum of 8kbit");
      break;
    case FaultKind::kPlaneDown: {
      if (a.plane < 0 || a.plane >= lab.planes)
        Bad("plane", std::to_string(a.plane) + " is not a plane of lab '" + lab.name + "' (planes 0.." +
                         std::to_string(lab.planes - 1) + ")");
      bool ports = false;
      for (const ResolvedLink& l : lab.links) ports = ports || (!l.fabric && l.plane == a.plane);
      if (!ports) Bad("plane", "plane " + std::to_string(a.plane) + " has no host ports");
      break;
    }
    case FaultKind::kBgpReset:
      if (lab.routing != Routing::kBgp)
        Bad("kind", "lab '" + lab.name + "' runs no BGP (routing: static)");
      if (a.bgp_mode != "clear" && a.bgp_mode != "restart")
        Bad("bgp_mode", "'" + a.bgp_mode + "' is not clear or restart");
      break;
    case FaultKind::kConfigChange: {
      if (a.config_lines.empty()) Bad("config_lines", "config_change needs at least one line");
      CheckLines(a.config_lines, "config_lines");
      CheckLines(a.revert_lines, "revert_lines");
      const std::string daemon = ConfigDaemon(a.config_lines[0]);
      if (lab.routing == Routing::kStatic && (daemon == "bgpd" || daemon == "bfdd"))
        Bad("config_lines[0]", "'" + a.config_lines[0] + "' belongs to " + daemon + ", which lab '" +
                                   lab.name + "' does not run (routing: static)");
      break;
    }
    default:
      break;
  }
  RefuseRateOnVmHostLink(lab, a);
}

}  // namespace mrclab::emulator
