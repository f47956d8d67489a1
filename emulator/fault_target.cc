// Link targets of faults by name: "node:interface", "nodeA--nodeB" or a link index.
#include <string>

#include "emulator/fault.h"

namespace mrclab::emulator {
namespace {

std::string NodeNames(const ResolvedLab& lab) {
  std::string names;
  for (const ResolvedNode& n : lab.nodes) names += (names.empty() ? "" : ", ") + n.name;
  return names;
}

const ResolvedNode& Node(const ResolvedLab& lab, const std::string& target, const std::string& name) {
  const ResolvedNode* node = lab.FindNode(name);
  if (!node)
    throw FaultError("link target '" + target + "': unknown node '" + name + "' in lab '" +
                     lab.name + "' (nodes: " + NodeNames(lab) + ")", ErrorKind::kInput);
  return *node;
}

}  // namespace

int ResolveLinkTarget(const ResolvedLab& lab, const std::string& target) {
  const int count = static_cast<int>(lab.links.size());
  if (!target.empty() && target.find_first_not_of("0123456789") == std::string::npos) {
    if (target.size() > 9 || std::stoi(target) >= count)
      throw FaultError("link target '" + target + "': lab '" + lab.name + "' has links 0.." +
                       std::to_string(count - 1), ErrorKind::kInput);
    return std::stoi(target);
  }
  if (auto dash = target.find("--"); dash != std::string::npos) {
    const std::string a = target.substr(0, dash), b = target.substr(dash + 2);
    Node(lab, target, a);
    Node(lab, target, b);
    std::vector<int> found;
    for (const ResolvedLink& l : lab.links)
      if ((l.a.node == a && l.b.node == b) || (l.a.node == b && l.b.node == a))
        found.push_back(l.index);
    if (found.empty())
      throw FaultError("link target '" + target + "': no link joins " + a + " and " + b, ErrorKind::kInput);
    if (found.size() > 1)
      throw FaultError("link target '" + target + "': " + std::to_string(found.size()) +
                       " links join " + a + " and " + b + "; name one as NODE:INTERFACE",
                       ErrorKind::kInput);
    return found[0];
  }
  if (auto colon = target.find(':'); colon != std::string::npos) {
    const std::string name = target.substr(0, colon), itf = target.substr(colon + 1);
    const ResolvedNode& node = Node(lab, target, name);
    std::string interfaces;
    for (const ResolvedInterface& i : node.interfaces) {
      if (i.name == itf) return i.link;
      interfaces += (interfaces.empty() ? "" : ", ") + i.name;
    }
    throw FaultError("link target '" + target + "': " + name + " has no interface '" + itf +
                     "' (its interfaces: " + interfaces + ")", ErrorKind::kInput);
  }
  throw FaultError("link target '" + target +
                   "': expected NODE:INTERFACE (p0-leaf0:spine0), NODE--NODE "
                   "(p0-leaf0--p0-spine0) or a link index", ErrorKind::kInput);
}

}  // namespace mrclab::emulator
