#include "emulator/clos_generator.h"

namespace mrclab::emulator {

std::string ClosSpineName(int plane, int index) {
  return "p" + std::to_string(plane) + "-spine" + std::to_string(index);
}

std::string ClosLeafName(int plane, int index) {
  return "p" + std::to_string(plane) + "-leaf" + std::to_string(index);
}

std::string ClosHostName(int host) { return "host" + std::to_string(host); }

GeneratedFabric GenerateClos(const ClosSpec& clos) {
  GeneratedFabric out;
  for (int p = 0; p < clos.planes; ++p) {
    for (int i = 0; i < clos.spines_per_plane; ++i) {
      out.nodes.push_back({ClosSpineName(p, i), NodeKind::kSwitch, p, SwitchRole::kSpine});
    }
    for (int j = 0; j < clos.leaves_per_plane; ++j) {
      out.nodes.push_back({ClosLeafName(p, j), NodeKind::kSwitch, p, SwitchRole::kLeaf});
    }
  }
  for (int h = 0; h < clos.hosts; ++h) {
    out.nodes.push_back({ClosHostName(h), NodeKind::kHost, std::nullopt, std::nullopt});
  }

  for (int p = 0; p < clos.planes; ++p) {
    for (int j = 0; j < clos.leaves_per_plane; ++j) {
      for (int i = 0; i < clos.spines_per_plane; ++i) {
        out.links.push_back({{ClosLeafName(p, j), "spine" + std::to_string(i)},
                             {ClosSpineName(p, i), "leaf" + std::to_string(j)}});
      }
    }
  }
  if (clos.hosts > 0 && clos.hosts_per_leaf > 0) {
    for (int p = 0; p < clos.planes; ++p) {
      for (int h = 0; h < clos.hosts; ++h) {
        out.links.push_back({{ClosLeafName(p, h / clos.hosts_per_leaf), ClosHostName(h)},
                             {ClosHostName(h), "eth" + std::to_string(p)}});
      }
    }
  }
  return out;
}

}  // namespace mrclab::emulator
