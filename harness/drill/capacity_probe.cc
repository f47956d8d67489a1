#include "harness/drill/capacity_probe.h"

#include <unistd.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "emulator/errors.h"
#include "emulator/host_machine.h"
#include "emulator/lab_spec.h"
#include "emulator/netns/deploy.h"
#include "emulator/netns/lab_state.h"
#include "emulator/wall_clock.h"
#include "harness/job/perf_plan.h"

namespace mrclab::harness {
namespace {

namespace fs = std::filesystem;
namespace nx = emulator::netns;

constexpr const char* kProbeLab = "mrclab-capacity";
constexpr const char* kProbeLabText =
    "name: mrclab-capacity\n"
    "clos: {planes: 1, spines_per_plane: 1, leaves_per_plane: 2, hosts: 2, hosts_per_leaf: 1}\n"
    "routing: static\n"
    "link_rate: 100Gbit\n"
    "mtu: 9216\n";
// The best of a few short rounds: a busy moment of a shared machine lowers one round, not the figure.
constexpr int kProbeRounds = 3;
constexpr double kProbeRoundSeconds = 1;
constexpr int kProbeEvs = 8;

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

nlohmann::json ReadCache() {
  std::ifstream in(CapacityCachePath());
  if (!in) return nlohmann::json::object();
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    if (j.is_object() && j.contains("entries") && j["entries"].is_array()) return j;
  } catch (const std::exception&) {
    // A damaged cache is measured again.
  }
  return nlohmann::json::object();
}

// Removes the probe's lab, also one left by a probe that was killed.
void RemoveProbeLab() {
  if (fs::exists(fs::path(nx::StateRoot()) / kProbeLab)) nx::Destroy(kProbeLab);
}

}  // namespace

std::string MachineKey() {
  utsname u{};
  uname(&u);
  return std::string(u.nodename) + " / " + u.release + " / " + CpuModel() + " x" +
         std::to_string(emulator::OnlineCpus());
}

std::string CapacityCachePath() {
  const char* dir = std::getenv("MRCLAB_CACHE_DIR");
  return std::string(dir && *dir ? dir : "/var/cache/mrclab") + "/capacity.json";
}

MachineCapacity MeasureCapacity(uint32_t mtu, bool progress) {
  if (geteuid() != 0) throw emulator::InputError("measuring this machine's capacity needs root (it deploys a small lab)");
  if (progress)
    std::fprintf(stderr, "capacity: measuring this machine at mtu %u (a small lab, %d x %.0f s of MRC)...\n", mtu,
                 kProbeRounds, kProbeRoundSeconds);
  RemoveProbeLab();
  const emulator::ResolvedLab lab = emulator::Resolve(emulator::ParseLabText(kProbeLabText, "capacity probe"));
  nx::DeployOptions options;
  options.progress = false;
  options.lab_text = kProbeLabText;
  nx::Deploy(lab, options);
  double best_gbps = 0;
  try {
    const auto hosts = lab.Hosts();
    mrc::PerfConfig config = PerfConfigBetween(lab, hosts.front()->name, hosts.back()->name, mrc::TransportMode::kMrc,
                                               mrc::EvMode::kSrv6, kProbeEvs);
    config.mtu = mtu;
    config.duration_seconds = kProbeRoundSeconds;
    for (int round = 0; round < kProbeRounds; ++round) {
      const mrc::PerfResult result = mrc::RunPerf(config);
      if (!result.ok) throw std::runtime_error("capacity probe: MRC between the probe lab's hosts failed: " + result.error);
      best_gbps = std::max(best_gbps, result.goodput_gbps);
    }
  } catch (...) {
    RemoveProbeLab();
    throw;
  }
  RemoveProbeLab();
  if (best_gbps <= 0) throw std::runtime_error("capacity probe: MRC moved no data between the probe lab's hosts");
  MachineCapacity c;
  c.mtu = mtu;
  c.gbps = best_gbps;
  c.path_links = 4;
  c.packet_hops_per_second = best_gbps * 1e9 / (8.0 * mtu) * c.path_links;
  c.measured_at = emulator::UnixNow();
  c.machine = MachineKey();
  return c;
}

std::optional<MachineCapacity> CachedCapacity(uint32_t mtu) {
  const std::string key = MachineKey();
  for (const auto& e : ReadCache().value("entries", nlohmann::json::array())) {
    try {
      MachineCapacity c = CapacityFromJson(e);
      if (c.machine == key && c.mtu == mtu) return c;
    } catch (const std::exception&) {
      // An entry of another format: ignored.
    }
  }
  return std::nullopt;
}

MachineCapacity CapacityFor(uint32_t mtu, bool refresh, bool progress) {
  if (!refresh)
    if (auto cached = CachedCapacity(mtu)) return *cached;
  MachineCapacity c = MeasureCapacity(mtu, progress);
  nlohmann::json cache = ReadCache();
  nlohmann::json entries = nlohmann::json::array();
  for (const auto& e : cache.value("entries", nlohmann::json::array()))
    if (!(e.value("machine", "") == c.machine && e.value("mtu", 0u) == mtu)) entries.push_back(e);
  entries.push_back(ToJson(c));
  const fs::path path = CapacityCachePath();
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  const fs::path tmp = path.string() + ".tmp";
  std::ofstream(tmp) << nlohmann::json{{"entries", entries}}.dump(2) << "\n";
  fs::rename(tmp, path, ec);
  if (ec && progress) std::fprintf(stderr, "capacity: cannot cache in %s: %s\n", path.c_str(), ec.message().c_str());
  return c;
}

}  // namespace mrclab::harness
