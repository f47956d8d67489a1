#include "harness/cli/lab_graph.h"

#include <sstream>

namespace mrclab::harness {

using emulator::NodeKind;
using emulator::SwitchRole;

std::string LabDot(const emulator::ResolvedLab& lab) {
  std::ostringstream dot;
  dot << "graph \"" << lab.name << "\" {\n"
      << "  rankdir=TB; node [fontname=\"Helvetica\" fontsize=10]; edge [fontsize=7];\n";
  for (int plane = 0; plane < lab.planes; ++plane) {
    dot << "  subgraph cluster_p" << plane << " {\n    label=\"plane " << plane << "\";\n";
    for (const SwitchRole role : {SwitchRole::kSpine, SwitchRole::kLeaf}) {
      dot << "    { rank=same;";
      for (const auto* sw : lab.Switches())
        if (sw->plane == plane && sw->role == role)
          dot << " \"" << sw->name << "\" [shape=box style=filled fillcolor="
              << (role == SwitchRole::kSpine ? "lightblue" : "lightyellow") << " label=\""
              << sw->name << "\\nuSID " << emulator::UsidHex(sw->usid) << "\"];";
      dot << " }\n";
    }
    dot << "  }\n";
  }
  dot << "  { rank=sink;";
  for (const auto* host : lab.Hosts()) dot << " \"" << host->name << "\" [shape=ellipse];";
  dot << " }\n";
  for (const auto& link : lab.links)
    dot << "  \"" << link.a.node << "\" -- \"" << link.b.node << "\" [taillabel=\""
        << link.a.interface << "\" headlabel=\"" << link.b.interface << "\""
        << (link.fabric ? "" : " color=gray") << "];\n";
  dot << "}\n";
  return dot.str();
}

}  // namespace mrclab::harness
