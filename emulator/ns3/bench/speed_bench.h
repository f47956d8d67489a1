// Shared parts of mrclab_ns3_speed_bench (ns3_speed_bench.cc): the bench's settings, the
// offered traffic that both models carry, the pacer that offers it, and what a run reports.
//
// Contract:
//   - TrafficPlan is an all-to-all pattern over a lab's host ports: every host port sends
//     fixed-size frames to the ports of every other host in its plane, one frame per departure,
//     taking its peers in turn. Host port i's peers start with the host after i's (in lab
//     order, wrapping), so at the k-th departure the ports of a plane send to a shifted
//     permutation of their peers (no synchronised incast).
//   - Departure k of port i is at offset(i) + k * interval, rounded to the nanosecond, where
//     interval = frame_bytes * 8 / (link rate * load) and offset(i) = i * interval / ports
//     staggers the ports. Departures at or after BenchConfig::stop are not offered. The times
//     are a pure function of the plan, so both models are offered the same frames at the same
//     instants.
//   - A Pacer offers one port's departures on the ns-3 scheduler of the current run (one
//     pending event per port): Start() before Simulator::Run(), and keep the Pacer alive until
//     Run() has returned.
//   - Each Run* function runs one model in its own ns-3 simulation (SetScheduler first,
//     Simulator::Destroy() last), so they can run one after the other in one process.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "emulator/ns3/helper/sim_scheduler.h"
#include "emulator/resolved_lab.h"
#include "ns3/nstime.h"

namespace mrclab::emulator::bench {

struct BenchConfig {
  ns3::Time stop = ns3::MilliSeconds(10);  // simulated time of each run
  uint32_t frame_bytes = 1500;  // bytes on the wire per packet, headers included
  double load = 1.0;            // offered rate of each host port as a share of its link rate
  uint64_t link_rate_bps = 0;   // every link's rate (the lab's link_rate, else 100 Gbit/s)
  ns3::Time link_delay = ns3::MicroSeconds(1);
  uint64_t switch_buffer_bytes = 1 << 20;  // output buffer of a switch port
  uint64_t host_buffer_bytes = 1 << 18;    // transmit buffer of a host port
  std::string scheduler{sim::kSimScheduler};  // both models run on it
  std::string stock_qdisc = "fifo";  // "fifo" (buffers as ours) or "default" (ns-3's FqCoDel)
};

// Rate of every link when the lab sets none (SimFabric's LinkRate default).
inline constexpr uint64_t kDefaultLinkRateBps = 100'000'000'000;

// One host port: the host's port on its link in `plane`.
struct HostPort {
  std::string host;
  int plane = 0;
  std::string address;  // IPv6 link address, without prefix length
};

class TrafficPlan {
 public:
  // Throws std::invalid_argument if the config's rate, load or frame size is not positive.
  TrafficPlan(const ResolvedLab& lab, const BenchConfig& config);

  const std::vector<HostPort>& Ports() const { return ports_; }
  // Indices into Ports() of the port's peers, in the order the port sends to them.
  const std::vector<int>& PeersOf(int port) const { return peers_.at(port); }
  // Time of departure k of `port` (see the contract).
  ns3::Time Departure(int port, uint64_t k) const;
  ns3::Time Stop() const { return stop_; }

 private:
  std::vector<HostPort> ports_;
  std::vector<std::vector<int>> peers_;
  double interval_ns_ = 0;
  ns3::Time stop_;
};

// Offers one host port's departures: calls send(peer_slot) at each, peer_slot being the index
// into TrafficPlan::PeersOf(port) of the destination (slots taken in turn).
class Pacer {
 public:
  using SendFn = std::function<void(int peer_slot)>;

  Pacer(const TrafficPlan& plan, int port, SendFn send);
  Pacer(const Pacer&) = delete;
  Pacer& operator=(const Pacer&) = delete;

  // Schedules the first departure (none if it is not before the plan's stop time).
  void Start();
  // Packets offered so far.
  uint64_t Offered() const { return offered_; }

 private:
  void ScheduleDeparture();
  void Depart();

  const TrafficPlan& plan_;
  int port_;
  int peers_;
  SendFn send_;
  uint64_t offered_ = 0;
};

// What one model's run measured.
struct RunResult {
  std::string model;
  double simulated_ms = 0;
  uint64_t offered = 0;      // packets the pacers offered
  uint64_t delivered = 0;    // packets that reached their destination host
  uint64_t dropped = 0;      // packets dropped on the way (queues full, no route); the rest of
                             // the offered ones were still queued or on a wire at the end
  uint64_t packet_hops = 0;  // packets serialised on any link end (end of serialisation)
  uint64_t events = 0;       // ns-3 events executed (Simulator::GetEventCount)
  double setup_seconds = 0;  // building the network and its routes (not in wall_seconds)
  double wall_seconds = 0;   // Simulator::Run() only

  double HopsPerSecond() const { return wall_seconds > 0 ? packet_hops / wall_seconds : 0; }
};

// Installs the configured scheduler on the current simulation (before anything is scheduled).
void UseScheduler(const BenchConfig& config);
// Runs the simulator until `stop`; returns the wall-clock seconds Simulator::Run() took.
double RunTimed(ns3::Time stop);

// The two models (sim_fabric_run.cc, stock_ns3_run.cc).
RunResult RunSimFabric(const ResolvedLab& lab, const TrafficPlan& plan, const BenchConfig& config);
RunResult RunStockNs3(const ResolvedLab& lab, const TrafficPlan& plan, const BenchConfig& config);

}  // namespace mrclab::emulator::bench
