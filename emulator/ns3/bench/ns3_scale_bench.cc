// mrclab_ns3_scale_bench: what one training step costs to simulate at cluster scale: wall time
// and peak memory for one ring all-reduce over every host of a generated multi-plane two-tier
// Clos, with the unchanged MRC core on every host (SimJob, the drills' workload).
//
//   mrclab_ns3_scale_bench --hosts 1024                      (8 planes, 32 hosts per leaf)
//   mrclab_ns3_scale_bench --hosts 8192 --hosts-per-leaf 64
//   mrclab_ns3_scale_bench --hosts 131072 --hosts-per-leaf 256 --spines-per-plane 256 --stop-after fabric
//
// Contract:
//   - The lab is `clos: {planes, spines_per_plane, leaves_per_plane = ceil(hosts /
//     hosts_per_leaf), hosts, hosts_per_leaf}`, routing static (the MRC paper's static SRv6),
//     --link-rate on every link; spines_per_plane defaults to hosts_per_leaf / 2.
//   - The job: one rank per host, one ring all-reduce of --size-mib MiB per rank, no compute
//     phase, MRC with --evs srv6 EVs per QP, fabric (µs) timers, --mtu payload bytes per
//     packet, virtual payload (job_types.h: shared zero input, landing slots only).
//   - Phases, run in order, each reported with its wall seconds and the process's peak RSS
//     (getrusage) when it ended: lab (generate and resolve the plan), fabric (SimFabric: ports,
//     switches, the FIB of every switch), job (a Context per host, QPs, EV plans), step
//     (simulate until every rank finished step 0). --stop-after ends the run after a phase.
//   - The simulation runs on --scheduler (default: sim_scheduler.h's, as drills do).
//   - While the step runs, a progress line on stderr every --progress-seconds of wall time
//     (default 60: simulated time, packet-hops, and packet-hops per wall second over the whole
//     step and since the line before, which shows a slow minute of a shared machine as such).
//   - The heap is on transparent huge pages (huge_page_malloc.h; MRCLAB_HUGE_PAGES=0: not).
//   - Prints a table, or one JSON object with --json. Exit status 1 if the step did not
//     complete (a watchdog of 10 simulated seconds) or on a bad argument, 0 otherwise.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "emulator/lab_spec.h"
#include "emulator/ns3/helper/huge_page_malloc.h"
#include "emulator/ns3/helper/sim_job.h"
#include "emulator/ns3/helper/sim_scheduler.h"
#include "emulator/ns3/model/sim_fabric.h"
#include "emulator/resolved_lab.h"
#include "mrc/core/qp_presets.h"
#include "ns3/simulator.h"

namespace {

using namespace mrclab;
using Clock = std::chrono::steady_clock;

struct Options {
  int hosts = 1024, planes = 8, hosts_per_leaf = 32, spines_per_plane = 0;
  int size_mib = 16, mtu = 4096, evs = 16;
  std::string link_rate = "100Gbit";
  std::string stop_after = "step";
  std::string scheduler{emulator::sim::kSimScheduler};
  int progress_seconds = 60;  // a progress line on stderr this often while the step runs
  bool json = false;
};

struct Phase {
  std::string name;
  double wall_seconds = 0;
  double peak_rss_mib = 0;
};

double PeakRssMib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // KiB on Linux
}

std::string LabText(const Options& o) {
  const int leaves = (o.hosts + o.hosts_per_leaf - 1) / o.hosts_per_leaf;
  return "name: scale\nclos: {planes: " + std::to_string(o.planes) +
         ", spines_per_plane: " + std::to_string(o.spines_per_plane) + ", leaves_per_plane: " +
         std::to_string(leaves) + ", hosts: " + std::to_string(o.hosts) +
         ", hosts_per_leaf: " + std::to_string(o.hosts_per_leaf) + "}\nrouting: static\nlink_rate: " + o.link_rate +
         "\n";
}

class PhaseTimer {
 public:
  explicit PhaseTimer(bool progress) : progress_(progress) {}
  // Runs `work` as phase `name`; false once the run should stop after it.
  void Run(const std::string& name, const std::function<void()>& work) {
    if (progress_) std::fprintf(stderr, "scale bench: %s ...\n", name.c_str());
    const auto start = Clock::now();
    work();
    phases_.push_back({name, std::chrono::duration<double>(Clock::now() - start).count(), PeakRssMib()});
  }
  const std::vector<Phase>& phases() const { return phases_; }

 private:
  bool progress_;
  std::vector<Phase> phases_;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"One ring all-reduce step of MRC on a generated multi-plane Clos in ns-3: wall time and peak "
               "memory per phase (lab, fabric, job, step)"};
  app.add_option("--hosts", o.hosts, "Hosts (one rank each)")->check(CLI::Range(2, 1 << 21));
  app.add_option("--planes", o.planes, "Planes (one NIC port per plane)")->check(CLI::Range(1, 15));
  app.add_option("--hosts-per-leaf", o.hosts_per_leaf, "Host ports per leaf")->check(CLI::Range(1, 1024));
  app.add_option("--spines-per-plane", o.spines_per_plane, "Spines per plane (default hosts-per-leaf / 2)")
      ->check(CLI::Range(1, 1279));
  app.add_option("--size-mib", o.size_mib, "All-reduce size per rank, MiB")->check(CLI::Range(1, 1024));
  app.add_option("--mtu", o.mtu, "Payload bytes per packet")->check(CLI::Range(256, 8192));
  app.add_option("--evs", o.evs, "srv6 EVs per QP")->check(CLI::Range(1, 256));
  app.add_option("--link-rate", o.link_rate, "Rate of every link (lab syntax: 100Gbit, 400Gbit, ...)");
  app.add_option("--stop-after", o.stop_after, "Last phase to run")->check(CLI::IsMember({"lab", "fabric", "job", "step"}));
  app.add_option("--scheduler", o.scheduler, "ns-3 scheduler TypeId")->capture_default_str();
  app.add_option("--progress-seconds", o.progress_seconds, "Wall seconds between progress lines while the step runs")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  app.add_flag("--json", o.json, "One JSON object instead of the table");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 1;  // --help: 0; a bad argument: 1, as the contract above says
  }
  emulator::sim::ReexecWithHugePageMalloc();  // unless MRCLAB_HUGE_PAGES=0
  if (o.spines_per_plane == 0) o.spines_per_plane = std::max(1, o.hosts_per_leaf / 2);

  try {
    emulator::sim::UseSimScheduler(o.scheduler);
    PhaseTimer timer(!o.json);
    emulator::ResolvedLab lab;
    ns3::Ptr<emulator::sim::SimFabric> fabric;
    std::unique_ptr<emulator::sim::SimJob> job;
    double step_seconds = 0;
    uint64_t retransmissions = 0;
    bool completed = false;
    const std::vector<std::string> order = {"lab", "fabric", "job", "step"};
    auto wanted = [&](const std::string& phase) {
      return std::find(order.begin(), order.end(), phase) <= std::find(order.begin(), order.end(), o.stop_after);
    };

    timer.Run("lab", [&] { lab = emulator::Resolve(emulator::ParseLabText(LabText(o), "<scale bench>"), {.routes = false}); });
    if (wanted("fabric"))
      timer.Run("fabric", [&] {
        fabric = ns3::CreateObject<emulator::sim::SimFabric>();
        fabric->Build(lab);
      });
    if (wanted("job"))
      timer.Run("job", [&] {
        harness::JobConfig config;
        for (const auto* host : lab.Hosts()) config.hosts.push_back(host->name);
        config.transport = mrc::TransportMode::kMrc;
        config.ev_mode = mrc::EvMode::kSrv6;
        config.evs_per_qp = o.evs;
        config.collectives = {{harness::CollectiveKind::kAllReduce, uint64_t(o.size_mib) << 20}};
        config.compute_seconds = 0;
        config.step_timeout_seconds = 10;
        config.mtu = static_cast<uint32_t>(o.mtu);
        config.payload = harness::PayloadMode::kVirtual;
        config.max_steps = 1;
        job = std::make_unique<emulator::sim::SimJob>(
            lab, fabric, config, mrc::FabricQpConfig,
            [&](double deadline, const std::function<bool()>& done) {
              const auto start = Clock::now();
              const auto every = std::chrono::seconds(o.progress_seconds);
              auto next_report = start + every;
              double last_wall = 0;  // the last progress line's, for the rate since it
              uint64_t last_hops = fabric->PacketHops();
              while (!done() && ns3::Simulator::Now().GetSeconds() < deadline) {
                ns3::Simulator::Stop(ns3::MilliSeconds(1));
                ns3::Simulator::Run();
                if (Clock::now() >= next_report) {
                  next_report += every;
                  const double wall = std::chrono::duration<double>(Clock::now() - start).count();
                  const uint64_t hops = fabric->PacketHops();
                  std::fprintf(stderr,
                               "scale bench: step: %.1f s wall, %.1f us simulated, %llu packet-hops (%.0f per wall second; "
                               "%.0f since the last line)\n",
                               wall, ns3::Simulator::Now().GetMicroSeconds() * 1.0, static_cast<unsigned long long>(hops),
                               hops / wall, (hops - last_hops) / (wall - last_wall));
                  last_wall = wall;
                  last_hops = hops;
                }
              }
              return done();
            },
            [](const nlohmann::json&) {}, [&](const harness::StepRecord& r) {
              step_seconds = r.seconds;
              retransmissions = r.retransmissions;
            });
      });
    if (wanted("step"))
      timer.Run("step", [&] {
        job->Start();
        completed = job->WaitForSteps(1, 11) && job->Wait().state == harness::JobState::kCompleted;
      });

    const uint64_t hops = fabric ? fabric->PacketHops() : 0;
    uint64_t queue_drops = 0, ecn_marks = 0;
    if (fabric)
      for (const auto& link : lab.links)
        for (bool a_end : {true, false}) {
          queue_drops += fabric->Counters(link.index, a_end).queue_drops;
          ecn_marks += fabric->Counters(link.index, a_end).ecn_marks;
        }
    const double step_wall = wanted("step") ? timer.phases().back().wall_seconds : 0;
    nlohmann::json out = {{"lab", {{"hosts", o.hosts}, {"planes", o.planes}, {"switches", lab.Switches().size()},
                                   {"links", lab.links.size()}, {"hosts_per_leaf", o.hosts_per_leaf},
                                   {"spines_per_plane", o.spines_per_plane}, {"link_rate", o.link_rate}}},
                          {"job", {{"collective", "all_reduce"}, {"size_mib", o.size_mib}, {"mtu", o.mtu},
                                   {"evs", o.evs}, {"payload", "virtual"}}},
                          {"scheduler", o.scheduler},
                          {"huge_page_heap", emulator::sim::HugePageMallocInEffect()},
                          {"phases", nlohmann::json::array()}};
    for (const Phase& p : timer.phases())
      out["phases"].push_back({{"phase", p.name}, {"wall_seconds", p.wall_seconds}, {"peak_rss_mib", p.peak_rss_mib}});
    if (wanted("step")) {
      out["step"] = {{"completed", completed},
                     {"simulated_seconds", step_seconds},
                     {"packet_hops", hops},
                     {"retransmissions", retransmissions},
                     {"queue_drops", queue_drops},
                     {"ecn_marks", ecn_marks},
                     {"events", ns3::Simulator::GetEventCount()},
                     {"packet_hops_per_wall_second", step_wall > 0 ? hops / step_wall : 0}};
    }
    job.reset();
    if (fabric) fabric->Dispose();
    ns3::Simulator::Destroy();

    if (o.json) {
      std::cout << out.dump(2) << "\n";
    } else {
      std::printf("lab: %d hosts, %d planes, %zu switches, %zu links; ring all-reduce %d MiB, MTU %d, %d EVs/QP; "
                  "heap on %s pages\n",
                  o.hosts, o.planes, lab.Switches().size(), lab.links.size(), o.size_mib, o.mtu, o.evs,
                  emulator::sim::HugePageMallocInEffect() ? "huge" : "4 KiB");
      std::printf("%-8s %10s %14s\n", "phase", "wall s", "peak RSS MiB");
      for (const Phase& p : timer.phases())
        std::printf("%-8s %10.2f %14.0f\n", p.name.c_str(), p.wall_seconds, p.peak_rss_mib);
      if (wanted("step"))
        std::printf("step %s: %.6f simulated s, %llu packet-hops (%.0f per wall second); %llu retransmissions, "
                    "%llu queue drops, %llu ECN marks\n",
                    completed ? "completed" : "DID NOT COMPLETE", step_seconds, static_cast<unsigned long long>(hops),
                    step_wall > 0 ? hops / step_wall : 0.0, static_cast<unsigned long long>(retransmissions),
                    static_cast<unsigned long long>(queue_drops), static_cast<unsigned long long>(ecn_marks));
    }
    return wanted("step") && !completed ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mrclab_ns3_scale_bench: %s\n", e.what());
    return 1;
  }
}
