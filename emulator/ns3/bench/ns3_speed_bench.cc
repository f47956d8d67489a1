// mrclab_ns3_speed_bench: how much faster mrclab's lean fabric model (SimFabric) simulates a
// lab than stock ns-3 does, on the same traffic, in one process.
//
//   mrclab_ns3_speed_bench [--lab FILE] [--sim-ms 10] [--frame-bytes 1500] [--load 1.0]
//                          [--stock-qdisc fifo|default] [--scheduler ns3::PriorityQueueScheduler] [--json]
//
// Contract:
//   - Both models are built from one lab (default labs/clos4.yaml) and run one after the other
//     (ours first), each in its own ns-3 simulation of --sim-ms simulated milliseconds with the
//     same scheduler. They are offered the same frames at the same instants (speed_bench.h):
//     all-to-all inside each plane, every host port sending --frame-bytes frames at --load
//     times its link rate. Links run at the lab's link_rate (else 100 Gbit/s), 1 us delay.
//   - A packet-hop is a packet whose serialisation on a link end has finished: ours
//     SimFabric::PacketHops(), stock the "PhyTxEnd" trace of every PointToPointNetDevice.
//     Events are Simulator::GetEventCount(). Wall time is Simulator::Run() alone; building
//     the network and its routes is reported as setup.
//   - Prints a table (or, with --json, one JSON object) with each model's packet-hops per wall
//     second and the ratio ours / stock. Non-zero exit status on a bad lab or argument.
//
// What is the same: topology, link rates and delays, frame sizes on the wire, the offered
// schedule, buffer bytes per port (with --stock-qdisc fifo), no ECN marking, the scheduler.
// What differs, by design (the cost being measured):
//   - stock ns-3 carries real ns3::Packets (byte buffers, serialised headers, tags) through
//     UDP sockets, IPv4 (headers added and parsed at every hop, TTL, an Ipv4GlobalRouting
//     lookup per hop), the traffic-control layer (a queue disc per device) and a
//     PointToPointNetDevice with its own queue and PPP header.
//   - ours carries a SimPacket (addresses, ports, sizes) through SimPort output queues and
//     UsidSwitch FIB lookups: no IP stack, no sockets, no queue discs.
//   - ECMP: stock picks a next hop at random per packet (RandomEcmpRouting); ours hashes the
//     5-tuple per switch, each (port, peer) pair being its own flow. Queueing, drops and so the
//     exact packet-hop counts therefore differ a little; compare packet-hops per second.
//   - Addresses: stock IPv4 /30 per link; ours the lab's IPv6 link addresses.
// Stock's cost per hop grows with the lab: Ipv4GlobalRouting::LookupGlobal scans every route of
// the node (one per link subnet and equal-cost next hop); on clos4 that scan was about half of
// stock's profile (perf, Debian's ns-3 3.37).
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "emulator/lab_spec.h"
#include "emulator/ns3/bench/speed_bench.h"
#include "emulator/ns3/model/sim_packet.h"

namespace {

using mrclab::emulator::ResolvedLab;
using mrclab::emulator::bench::BenchConfig;
using mrclab::emulator::bench::RunResult;
using mrclab::emulator::bench::TrafficPlan;

struct Options {
  std::string lab_path = MRCLAB_SOURCE_DIR "/labs/clos4.yaml";
  double sim_ms = 10;
  bool json = false;
  BenchConfig config;
};

void AddOptions(CLI::App& app, Options& options) {
  app.add_option("--lab", options.lab_path, "lab file")->capture_default_str();
  app.add_option("--sim-ms", options.sim_ms, "simulated milliseconds per model")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--frame-bytes", options.config.frame_bytes,
                 "bytes on the wire per packet, headers included")
      ->capture_default_str()
      ->check(CLI::Range(mrclab::emulator::sim::kFrameOverheadBytes + 1, 65535u));
  app.add_option("--load", options.config.load,
                 "offered rate of each host port, as a share of its link rate")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--stock-qdisc", options.config.stock_qdisc,
                 "stock ns-3 queues: fifo (our buffer bytes) or default (FqCoDel)")
      ->capture_default_str()
      ->check(CLI::IsMember({"fifo", "default"}));
  app.add_option("--scheduler", options.config.scheduler, "ns-3 scheduler TypeId (both models)")
      ->capture_default_str();
  app.add_flag("--json", options.json, "print one JSON object instead of the table");
}

double Ratio(const RunResult& ours, const RunResult& stock) {
  return stock.HopsPerSecond() > 0 ? ours.HopsPerSecond() / stock.HopsPerSecond() : 0;
}

nlohmann::json ToJson(const RunResult& run) {
  return {{"model", run.model},
          {"simulated_ms", run.simulated_ms},
          {"offered", run.offered},
          {"delivered", run.delivered},
          {"dropped", run.dropped},
          {"packet_hops", run.packet_hops},
          {"events", run.events},
          {"setup_s", run.setup_seconds},
          {"wall_s", run.wall_seconds},
          {"packet_hops_per_s", run.HopsPerSecond()}};
}

nlohmann::json ReportJson(const ResolvedLab& lab, const Options& options,
                          const RunResult& ours, const RunResult& stock) {
  return {{"lab", lab.name},
          {"lab_file", options.lab_path},
          {"hosts", lab.Hosts().size()},
          {"planes", lab.planes},
          {"links", lab.links.size()},
          {"link_rate_bps", options.config.link_rate_bps},
          {"frame_bytes", options.config.frame_bytes},
          {"load", options.config.load},
          {"scheduler", options.config.scheduler},
          {"stock", ToJson(stock)},
          {"ours", ToJson(ours)},
          {"ratio_ours_over_stock", Ratio(ours, stock)}};
}

void PrintRow(const RunResult& run) {
  std::printf("%-20s %7.2f %9llu %9llu %8llu %12llu %12llu %8.3f %8.3f %14.0f\n",
              run.model.c_str(), run.simulated_ms, static_cast<unsigned long long>(run.offered),
              static_cast<unsigned long long>(run.delivered),
              static_cast<unsigned long long>(run.dropped),
              static_cast<unsigned long long>(run.packet_hops),
              static_cast<unsigned long long>(run.events), run.setup_seconds, run.wall_seconds,
              run.HopsPerSecond());
}

void PrintTable(const ResolvedLab& lab, const Options& options, const RunResult& ours,
                const RunResult& stock) {
  const BenchConfig& c = options.config;
  std::printf("lab %s: %zu hosts, %d planes, %zu links at %.3g Gbit/s; all-to-all, %u-byte "
              "frames at %.0f%% of line rate, %s\n",
              lab.name.c_str(), lab.Hosts().size(), lab.planes, lab.links.size(),
              c.link_rate_bps / 1e9, c.frame_bytes, c.load * 100, c.scheduler.c_str());
  std::printf("%-20s %7s %9s %9s %8s %12s %12s %8s %8s %14s\n", "model", "sim ms", "offered",
              "delivered", "dropped", "packet-hops", "events", "setup s", "wall s",
              "packet-hops/s");
  PrintRow(stock);
  PrintRow(ours);
  std::printf("ours/stock: %.1fx packet-hops per wall second\n", Ratio(ours, stock));
}

}  // namespace

int main(int argc, char* argv[]) {
  Options options;
  CLI::App app{"SimFabric vs stock ns-3: packet-hops per wall second on the same traffic"};
  AddOptions(app, options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;  // --help: 0; a bad argument: 1, as the contract above says
  }

  try {
    const ResolvedLab lab =
        mrclab::emulator::Resolve(mrclab::emulator::ParseLabFile(options.lab_path), {.routes = false});
    options.config.stop = ns3::NanoSeconds(static_cast<int64_t>(options.sim_ms * 1e6));
    options.config.link_rate_bps =
        lab.link_rate_bps.value_or(mrclab::emulator::bench::kDefaultLinkRateBps);
    const TrafficPlan plan(lab, options.config);
    const RunResult ours = mrclab::emulator::bench::RunSimFabric(lab, plan, options.config);
    const RunResult stock = mrclab::emulator::bench::RunStockNs3(lab, plan, options.config);
    if (options.json) {
      std::cout << ReportJson(lab, options, ours, stock).dump(2) << "\n";
    } else {
      PrintTable(lab, options, ours, stock);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mrclab_ns3_speed_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
