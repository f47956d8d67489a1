#include "harness/drill/job_resources.h"

#include <cstdio>

#include <nlohmann/json.hpp>

#include "emulator/host_machine.h"
#include "emulator/lab_spec.h"
#include "emulator/netns/interrupt.h"
#include "harness/drill/capacity_probe.h"
#include "harness/job/collective_plan.h"
#include "harness/job/kernel_rc_plan.h"
#include "harness/job/source_ports.h"
#include "harness/job/workload.h"
#include "mrc/core/wire.h"

namespace mrclab::harness {
namespace {

// Files the drill process holds besides the job's sockets: netlink and epoll handles, the
// metrics server, the run directory's files.
constexpr uint64_t kOtherOpenFiles = 256;
// A job's buffers may take at most this share of the memory available now.
constexpr double kMaxMemoryShare = 0.8;

// The most header a data packet carries around job.mtu bytes of payload: IPv6, UDP, and MRC's
// largest data layout (BTH, MRCETH, MDETH, RETH, ImmDt, ICRC) with 3 bytes of pad.
constexpr uint32_t kPacketHeaderBytes = 40 + 8 + mrc::kBthBytes + mrc::kMrcethBytes + mrc::kMdethBytes +
                                        mrc::kRethBytes + mrc::kImmdtBytes + mrc::kIcrcBytes + 3;

std::string MiB(uint64_t bytes) { return std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB"; }

}  // namespace

uint32_t JobMtu(const Scenario& s, const emulator::ResolvedLab& lab) {
  if (s.job.mtu) return *s.job.mtu;
  uint32_t mtu = 8192;
  while (mtu > 256 && mtu + kPacketHeaderBytes > lab.mtu) mtu /= 2;
  return mtu;
}

JobConfig MakeJobConfig(const Scenario& s, const emulator::ResolvedLab& lab, const TransportSpec& t) {
  JobConfig c;
  c.label = t.name;
  c.hosts = JobHosts(s, lab, &t);
  c.ranks_per_host = s.job.ranks_per_host;
  c.transport = t.transport;
  c.stack = t.stack;
  c.ev_mode = t.ev_mode;
  c.evs_per_qp = t.evs;
  c.qps_per_peer = t.qps_per_peer;
  c.min_active = t.min_active;
  if (t.ack_timeout_seconds) c.rc_ack_timeout = mrc::Duration::Seconds(*t.ack_timeout_seconds);
  if (t.retry_count) c.rc_retry_count = static_cast<uint32_t>(*t.retry_count);
  c.collectives = s.job.collectives;
  c.compute_seconds = s.job.compute_seconds;
  c.step_timeout_seconds = s.job.step_timeout_seconds;
  c.mtu = JobMtu(s, lab);
  c.payload = s.job.payload;
  c.seed = s.seed;
  c.key_seed = s.job.key_seed;
  c.io_threads = s.job.io_threads;
  return c;
}

namespace {

// The kernel's RC needs a kernel per host (a VM) and its buffers fit in the VM's memory. (Our
// core runs on both kinds: on a VM host its datagrams go through the guest, vm_endpoint.h.)
void CheckHostKinds(const Scenario& s, const emulator::ResolvedLab& lab, const JobConfig& job, const std::string& field) {
  if (job.stack != TransportStack::kKernel) return;
  const uint64_t bytes = KernelRcBufferBytesPerHost(job);
  for (const std::string& name : job.hosts) {
    const emulator::ResolvedNode& host = *lab.FindNode(name);
    if (!host.vm)
      throw ScenarioError(s.file, field + ".stack",
                          "kernel: the kernel's RC runs on VM hosts only (job host " + name + " of lab '" + lab.name +
                              "' is a namespace: give it runtime: vm, or list VM hosts in job.hosts)");
    const uint64_t memory = uint64_t{host.vm->memory_mib} << 20;
    if (bytes > memory / 2)
      throw ScenarioError(s.file, "job.collectives",
                          "the kernel's RC job needs " + MiB(bytes) + " of buffers on VM host " + name + ", which has " +
                              MiB(memory) + " (memory_mib in its runtimes entry); use smaller sizes or more memory");
  }
}

// A job whose QPs (both ends of `qp_pairs` pairs) and buffers need more than its share of the
// `memory` available.
[[noreturn]] void RefuseQpState(const Scenario& s, const std::string& field, const JobConfig& job, size_t qp_pairs,
                                uint64_t buffer_bytes, uint64_t memory) {
  const uint64_t each = QpStateBytes(job.evs_per_qp);
  throw ScenarioError(s.file, field + ".evs",
                      "the job's " + std::to_string(2 * qp_pairs) + " QPs need about " + MiB(2 * qp_pairs * each) +
                          " of transport state (" + std::to_string(each / 1024) + " KiB each with " +
                          std::to_string(job.evs_per_qp) + " EVs)" +
                          (buffer_bytes ? ", with " + MiB(buffer_bytes) + " of buffers," : std::string(",")) +
                          " and " + MiB(memory) + " are available; use fewer EVs, fewer qps_per_peer, fewer job " +
                          "hosts, or a collective with fewer peers per rank than all_to_all");
}

}  // namespace

std::vector<TransportFootprint> CheckJobResources(const Scenario& s, const emulator::ResolvedLab& lab,
                                                  emulator::BackendKind backend) {
  int ports_per_host = 0;
  for (const auto* h : lab.Hosts()) ports_per_host = std::max(ports_per_host, static_cast<int>(h->ports.size()));
  const uint64_t files = emulator::OpenFiles().hard;
  const uint64_t memory = emulator::MemAvailableBytes();
  if (s.job.mtu && *s.job.mtu + kPacketHeaderBytes > lab.mtu)
    throw ScenarioError(s.file, "job.mtu",
                        std::to_string(*s.job.mtu) + " payload bytes make packets of up to " +
                            std::to_string(*s.job.mtu + kPacketHeaderBytes) + " bytes, more than lab " + lab.name +
                            "'s link mtu of " + std::to_string(lab.mtu) + "; use job.mtu <= " +
                            std::to_string(lab.mtu - kPacketHeaderBytes) + " or set a larger mtu: in the lab file");
  std::vector<TransportFootprint> out;
  for (size_t i = 0; i < s.transports.size(); ++i) {
    const TransportSpec& t = s.transports[i];
    const std::string field = "transports[" + std::to_string(i) + "]";
    const JobConfig job = MakeJobConfig(s, lab, t);
    CheckHostKinds(s, lab, job, field);
    // Counted before they are listed: the list of a huge all-to-all's pairs alone would not fit.
    if (const size_t pairs = CountQpPairs(job);
        memory > 0 && 2 * pairs * QpStateBytes(job.evs_per_qp) > kMaxMemoryShare * static_cast<double>(memory))
      RefuseQpState(s, field, job, pairs, 0, memory);
    const JobFootprint f = EstimateFootprint(job, ports_per_host);
    for (const auto& c : job.collectives)
      if (ChunkBytes(c.bytes, f.ranks) < 4 * static_cast<uint64_t>(t.qps_per_peer))
        throw ScenarioError(s.file, field + ".qps_per_peer",
                            std::to_string(t.qps_per_peer) + " QPs per peer split each chunk in as many pieces of " +
                                "4 bytes or more, and a " + std::to_string(c.bytes) + "-byte collective over " +
                                std::to_string(f.ranks) + " ranks has chunks of " +
                                std::to_string(ChunkBytes(c.bytes, f.ranks)) + " bytes; use fewer QPs or a larger size");
    if (f.source_ports > kSourcePortCount)
      throw ScenarioError(s.file, field + ".evs",
                          "udp EVs need " + std::to_string(f.source_ports) + " source ports (" +
                              std::to_string(f.source_ports / f.source_port_width) + " ranges of " +
                              std::to_string(f.source_port_width) +
                              ": each QP pair of a host its own), more than the " +
                              std::to_string(kSourcePortCount) +
                              " of 49152-65535; use fewer EVs, fewer peers per host, or ev_mode: srv6");
    if (backend == emulator::BackendKind::kNetns && files > 0 && f.sockets + kOtherOpenFiles > files)
      throw ScenarioError(s.file, field + ".evs",
                          "the job needs " + std::to_string(f.sockets) + " sockets, more than this machine's " +
                              "open-files limit (" + std::to_string(files) + ") allows; use fewer EVs or " +
                              "ev_mode: srv6 (one socket per host port)");
    if (memory > 0 && f.buffer_bytes > kMaxMemoryShare * static_cast<double>(memory))
      throw ScenarioError(s.file, "job.collectives",
                          "the job's buffers need " + MiB(f.buffer_bytes) + " and " + MiB(memory) +
                              " are available; use smaller sizes, fewer hosts, or payload: virtual");
    if (memory > 0 && f.buffer_bytes + f.qp_state_bytes > kMaxMemoryShare * static_cast<double>(memory))
      RefuseQpState(s, field, job, f.qp_pairs, f.buffer_bytes, memory);
    out.push_back({t.name, f});
  }
  return out;
}

nlohmann::json ToJson(const std::vector<TransportFootprint>& footprints, emulator::BackendKind backend) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& [name, f] : footprints) {
    out.push_back({{"transport", name}, {"ranks", f.ranks}, {"qp_pairs", f.qp_pairs},
                   {"source_ports", f.source_ports}, {"buffer_bytes", f.buffer_bytes},
                   {"qp_state_bytes", f.qp_state_bytes}});
    if (backend == emulator::BackendKind::kNetns) out.back()["sockets"] = f.sockets;
  }
  return out;
}

std::vector<TransportDemand> CheckCapacity(const Scenario& s, const emulator::ResolvedLab& lab,
                                           const MachineCapacity& capacity) {
  std::vector<TransportDemand> out;
  for (const TransportSpec& t : s.transports) {
    // The kernel's RC on VM hosts is bound by the VMs' emulated CPUs, which the model does not know.
    if (t.stack == TransportStack::kKernel) continue;
    const JobConfig job = MakeJobConfig(s, lab, t);
    const JobDemand d = EstimateDemand(job, lab, capacity);
    if (auto why = DoesNotFit(job, d, capacity)) throw ScenarioError(s.file, "job.collectives", *why);
    out.push_back({t.name, d});
  }
  return out;
}

nlohmann::json CapacityJson(const MachineCapacity& capacity, const std::vector<TransportDemand>& demands) {
  nlohmann::json per = nlohmann::json::object();
  for (const auto& [name, d] : demands) per[name] = ToJson(d);
  return {{"machine", ToJson(capacity)}, {"transports", per}};
}

std::string DescribeDemand(const TransportDemand& t) {
  const JobDemand& d = t.demand;
  char buf[320];
  if (d.fabric_seconds <= 0)
    std::snprintf(buf, sizeof(buf), "%s: %llu packets per step, at least %.3f s of this machine's forwarding (links "
                  "not shaped: this machine sets the step time)", t.transport.c_str(),
                  static_cast<unsigned long long>(d.packets_per_step), d.machine_seconds);
  else
    std::snprintf(buf, sizeof(buf), "%s: %llu packets per step: %.3f s at link_rate, at least %.3f s on this machine "
                  "(scale factor %.1f: %s)", t.transport.c_str(), static_cast<unsigned long long>(d.packets_per_step),
                  d.fabric_seconds, d.machine_seconds, d.scale_factor,
                  d.scale_factor > 1 ? "this machine, not link_rate, sets the transfer time" : "link_rate does");
  std::string out = buf;
  if (d.faithful_link_rate_bps > 0)
    out += "; at a link_rate of " + emulator::FormatRate(d.faithful_link_rate_bps) + " or less the links would set it";
  return out;
}

MachineCheck CheckMachineCapacity(const Scenario& s, const emulator::ResolvedLab& lab, bool progress) {
  MachineCheck out;
  try {
    const MachineCapacity machine = CapacityFor(JobMtu(s, lab), false, progress);
    const std::vector<TransportDemand> demands = CheckCapacity(s, lab, machine);
    out.json = CapacityJson(machine, demands);
    char line[200];
    std::snprintf(line, sizeof(line), "capacity: this machine forwards %.2fM packet-hops/s at mtu %u (`mrclab capacity`)",
                  machine.packet_hops_per_second / 1e6, machine.mtu);
    out.lines.push_back(line);
    for (const auto& d : demands) out.lines.push_back("  " + DescribeDemand(d));
  } catch (const emulator::LabError&) {
    throw;
  } catch (const emulator::netns::Interrupted&) {
    throw;
  } catch (const std::runtime_error& e) {
    out.json = {{"not_measured", e.what()}};
    out.lines.push_back(std::string("capacity: not measured: ") + e.what());
  }
  return out;
}

}  // namespace mrclab::harness
