#include "harness/job/kernel_rc_plan.h"

#include <cmath>
#include <set>
#include <stdexcept>

#include "harness/job/ev_plan.h"
#include "harness/job/workload.h"
#include "mrc/core/qp_presets.h"

namespace mrclab::harness {
namespace {

using nlohmann::json;

// The address of `host` on the lane's plane and of `peer` on the same plane.
std::pair<std::string, std::string> LaneAddresses(const emulator::ResolvedNode& host,
                                                  const emulator::ResolvedNode& peer, int lane) {
  const std::vector<emulator::SharedPort> shared = emulator::SharedPorts(host, peer);
  if (shared.empty()) throw std::invalid_argument("hosts " + host.name + " and " + peer.name + " share no plane");
  const auto [mine, theirs] = shared[lane % shared.size()];
  return {mine->address, theirs->address};
}

int Ranks(const JobConfig& config) { return static_cast<int>(config.hosts.size()) * config.ranks_per_host; }

std::vector<CollectiveKind> Kinds(const JobConfig& config) {
  std::vector<CollectiveKind> kinds;
  for (const CollectiveSpec& c : config.collectives) kinds.push_back(c.kind);
  return kinds;
}

// The size of a landing slot and a send region: the largest chunk (whole words, 4 at least).
uint64_t SlotBytes(const JobConfig& config) {
  uint64_t bytes = 4;
  for (const CollectiveSpec& c : config.collectives) bytes = std::max(bytes, ChunkBytes(c.bytes, Ranks(config)));
  return bytes;
}

}  // namespace

uint64_t KernelRcBufferBytesPerHost(const JobConfig& config) {
  const int ranks = Ranks(config);
  return static_cast<uint64_t>(config.ranks_per_host) * (StepPlan(Kinds(config), ranks).slots() + ranks - 1) *
         SlotBytes(config);
}

int AckTimeoutExponent(mrc::Duration timeout) {
  for (int e = 1; e < 31; ++e)
    if (4096.0 * std::ldexp(1.0, e) >= static_cast<double>(timeout.nanoseconds())) return e;
  return 31;
}

std::vector<json> PlanKernelRc(const emulator::ResolvedLab& lab, const JobConfig& config) {
  const int per_host = config.ranks_per_host;
  const int n = Ranks(config);
  const StepPlan plan(Kinds(config), n);  // throws for fewer than 2 ranks
  std::vector<const emulator::ResolvedNode*> nodes;
  for (const std::string& h : config.hosts) nodes.push_back(&LabHost(lab, h));
  const auto host_of = [&](int rank) { return nodes[rank / per_host]; };
  const int lanes = config.qps_per_peer;

  json collectives = json::array();
  for (const CollectiveSpec& c : config.collectives) {
    const uint64_t chunk = ChunkBytes(c.bytes, n);
    json pieces = json::array();
    for (int l = 0; l < lanes; ++l) {
      const Piece p = PieceOf(chunk / 4, lanes, l);
      pieces.push_back({p.offset, p.bytes});
    }
    collectives.push_back({{"kind", ToString(c.kind)}, {"chunk_bytes", chunk}, {"pieces", pieces}});
  }
  const mrc::Duration ack = config.rc_ack_timeout.value_or(mrc::RealtimeQpConfig(mrc::TransportMode::kRc, {0}, 1024).rc_ack_timeout);
  std::vector<json> out;
  for (size_t h = 0; h < nodes.size(); ++h) {
    json ranks = json::array(), qps = json::array();
    for (int r = static_cast<int>(h) * per_host; r < static_cast<int>(h + 1) * per_host; ++r) {
      json phases = json::array();
      std::set<int> peers;
      for (size_t c = 0; c < plan.collectives(); ++c) {
        json list = json::array();
        for (size_t k = 0; k < plan.phases(c); ++k) {
          const Phase p = plan.At(r, c, k);
          json sends = json::array(), recvs = json::array();
          for (const SendOp& s : p.sends) {
            sends.push_back({s.peer, s.remote_slot});
            peers.insert(s.peer);
          }
          for (const RecvOp& v : p.recvs) {
            recvs.push_back({v.peer, v.slot});
            peers.insert(v.peer);
          }
          list.push_back({{"sends", sends}, {"recvs", recvs}});
        }
        phases.push_back(list);
      }
      ranks.push_back({{"rank", r}, {"phases", phases}});
      for (int peer : peers)
        for (int lane = 0; lane < lanes; ++lane) {
          const auto [local, remote] = LaneAddresses(*host_of(r), *host_of(peer), lane);
          std::string name = host_of(r)->name + "/" + std::to_string(r) + "->" + host_of(peer)->name + "/" +
                             std::to_string(peer);
          if (lanes > 1) name += "#" + std::to_string(lane);
          qps.push_back({{"rank", r}, {"peer", peer}, {"lane", lane}, {"local", local}, {"remote", remote},
                         {"active", r < peer}, {"name", name}});
        }
    }
    out.push_back({{"op", "open"}, {"host", nodes[h]->name}, {"seed", config.seed},
                   {"compute_s", config.compute_seconds}, {"ack_timeout", AckTimeoutExponent(ack)},
                   {"retry_count", config.rc_retry_count.value_or(7)}, {"port", kKernelRcPort},
                   {"slot_bytes", SlotBytes(config)}, {"slots", plan.slots()}, {"collectives", collectives},
                   {"ranks", ranks}, {"qps", qps}});
  }
  return out;
}

}  // namespace mrclab::harness
