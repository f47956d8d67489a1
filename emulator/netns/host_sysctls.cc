#include "emulator/netns/host_sysctls.h"

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "emulator/netns/lab_state.h"

namespace mrclab::emulator::netns {
namespace {

const char* kKeys[] = {"net/ipv6/neigh/default/gc_thresh1", "net/ipv6/neigh/default/gc_thresh2",
                       "net/ipv6/neigh/default/gc_thresh3"};

std::string SavedPath() { return StateRoot() + "/host-sysctls.json"; }

long ReadValue(const std::string& key) {
  std::ifstream in("/proc/sys/" + key);
  long v = 0;
  in >> v;
  return v;
}

void WriteValue(const std::string& key, long value) {
  std::ofstream out("/proc/sys/" + key);
  out << value;
}

}  // namespace

void RaiseHostLimitsForLab(const ResolvedLab& lab) {
  // Per link: each end learns the other's global and link-local address; plus headroom.
  const long needed = static_cast<long>(lab.links.size() * 4 + lab.nodes.size() * 4);
  const long wanted[] = {needed, needed * 2, needed * 4};
  bool raise = false;
  for (int i = 0; i < 3; ++i) raise |= ReadValue(kKeys[i]) < wanted[i];
  if (!raise) return;
  if (!std::filesystem::exists(SavedPath())) {
    nlohmann::json saved;
    for (const char* key : kKeys) saved[key] = ReadValue(key);
    std::ofstream(SavedPath()) << saved.dump() << "\n";
  }
  for (int i = 0; i < 3; ++i)
    if (ReadValue(kKeys[i]) < wanted[i]) WriteValue(kKeys[i], wanted[i]);
}

void RestoreHostLimitsIfNoLab() {
  if (!ListLabs().empty() || !std::filesystem::exists(SavedPath())) return;
  std::ifstream in(SavedPath());
  auto saved = nlohmann::json::parse(in, nullptr, false);
  if (saved.is_object())
    for (auto& [key, value] : saved.items()) WriteValue(key, value.get<long>());
  std::filesystem::remove(SavedPath());
}

}  // namespace mrclab::emulator::netns
