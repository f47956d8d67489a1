// Turns a `clos:` block into the nodes and links of a multi-plane two-tier Clos fabric.
//
// Contract: the output is a pure function of the ClosSpec (0-based everywhere).
//   nodes  for each plane P: spines "p<P>-spine<i>", then leaves "p<P>-leaf<i>"; then hosts
//          "host<h>". Switches carry their plane and role explicitly.
//   links  for each plane, for each leaf j, for each spine i: a = leaf j interface "spine<i>",
//          b = spine i interface "leaf<j>"; then for each plane P, for each host h:
//          a = leaf floor(h / hosts_per_leaf) of plane P interface "host<h>",
//          b = host h interface "eth<P>". Planes never meet.
// The caller validates the ClosSpec (positive numbers, enough leaf ports for the hosts);
// GenerateClos does not check it beyond requiring hosts_per_leaf > 0 when hosts > 0.
#pragma once

#include <string>
#include <vector>

#include "emulator/lab_spec.h"

namespace mrclab::emulator {

struct GeneratedFabric {
  std::vector<NodeSpec> nodes;
  std::vector<LinkSpec> links;
};

GeneratedFabric GenerateClos(const ClosSpec& clos);

std::string ClosSpineName(int plane, int index);  // "p1-spine0"
std::string ClosLeafName(int plane, int index);   // "p0-leaf3"
std::string ClosHostName(int host);               // "host7"

}  // namespace mrclab::emulator
