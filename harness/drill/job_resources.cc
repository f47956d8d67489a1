#include "harness/drill/job_resources.h"

#include <nlohmann/json.hpp>

#include "emulator/host_machine.h"
#include "harness/job/workload.h"

namespace mrclab::harness {
namespace {

// Files the drill process holds besides the job's sockets: netlink and epoll handles, the
// metrics server, the run directory's files.
constexpr uint64_t kOtherOpenFiles = 256;
// A job's buffers may take at most this share of the memory available now.
constexpr double kMaxMemoryShare = 0.8;

std::string MiB(uint64_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB"; }

}  // namespace

JobConfig MakeJobConfig(const Scenario& s, const emulator::ResolvedLab& lab, const TransportSpec& t) {
  JobConfig c;
  c.label = t.name;
  std::vector<std::string> lab_hosts;
  for (const auto* h : lab.Hosts()) lab_hosts.push_back(h->name);
  c.hosts = JobHosts(s, lab_hosts);
  c.ranks_per_host = s.job.ranks_per_host;
  c.transport = t.transport;
  c.ev_mode = t.ev_mode;
  c.evs_per_qp = t.evs;
  c.collectives = s.job.collectives;
  c.compute_seconds = s.job.compute_seconds;
  c.step_timeout_seconds = s.job.step_timeout_seconds;
  c.mtu = s.job.mtu;
  c.payload = s.job.payload;
  c.seed = s.seed;
  c.io_threads = s.job.io_threads;
  return c;
}

std::vector<TransportFootprint> CheckJobResources(const Scenario& s, const emulator::ResolvedLab& lab,
                                                  emulator::BackendKind backend) {
  int ports_per_host = 0;
  for (const auto* h : lab.Hosts()) ports_per_host = std::max(ports_per_host, static_cast<int>(h->ports.size()));
  const uint64_t files = emulator::OpenFiles().hard;
  const uint64_t memory = emulator::MemAvailableBytes();
  std::vector<TransportFootprint> out;
  for (size_t i = 0; i < s.transports.size(); ++i) {
    const TransportSpec& t = s.transports[i];
    const std::string field = "transports[" + std::to_string(i) + "]";
    const JobFootprint f = EstimateFootprint(MakeJobConfig(s, lab, t), ports_per_host);
    if (f.source_ports > kMaxSourcePorts)
      throw ScenarioError(s.file, field + ".evs",
                          "udp EVs need " + std::to_string(f.source_ports) + " source ports (" +
                              std::to_string(f.qp_pairs) + " QP pairs x " + std::to_string(t.evs) +
                              " EVs), more than the " + std::to_string(kMaxSourcePorts) +
                              " of 49152-65535; use fewer EVs, fewer hosts, or ev_mode: srv6");
    if (backend == emulator::BackendKind::kNetns && files > 0 && f.sockets + kOtherOpenFiles > files)
      throw ScenarioError(s.file, field + ".evs",
                          "the job needs " + std::to_string(f.sockets) + " sockets, more than this machine's " +
                              "open-files limit (" + std::to_string(files) + ") allows; use fewer EVs or " +
                              "ev_mode: srv6 (one socket per host port)");
    if (memory > 0 && f.buffer_bytes > kMaxMemoryShare * static_cast<double>(memory))
      throw ScenarioError(s.file, "job.collectives",
                          "the job's buffers need " + MiB(f.buffer_bytes) + " and " + MiB(memory) +
                              " are available; use smaller sizes, fewer hosts, or payload: virtual");
    out.push_back({t.name, f});
  }
  return out;
}

nlohmann::json ToJson(const std::vector<TransportFootprint>& footprints) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [name, f] : footprints)
    out.push_back({{"transport", name}, {"ranks", f.ranks}, {"qp_pairs", f.qp_pairs},
                   {"source_ports", f.source_ports}, {"sockets", f.sockets}, {"buffer_bytes", f.buffer_bytes}});
  return out;
}

}  // namespace mrclab::harness
