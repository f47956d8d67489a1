// Graphviz (dot) drawing of a resolved lab: one cluster per plane, spines above leaves, hosts
// below, each link labelled with its interface names.
#pragma once

#include <string>

#include "emulator/resolved_lab.h"

namespace mrclab::harness {

std::string LabDot(const emulator::ResolvedLab& lab);

}  // namespace mrclab::harness
