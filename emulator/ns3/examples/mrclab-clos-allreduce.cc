// An ns-3 example: MRC and RoCEv2 RC training steps on a multi-plane Clos built from a mrclab
// lab file, through a link failure.
//
//   ./build/mrclab-clos-allreduce --lab=labs/clos2.yaml --transport=mrc --failAt=0.3 --stopTime=1
//   ./build/mrclab-clos-allreduce --transport=rc --evMode=udp --PrintHelp
//
// It builds the lab as a SimFabric (the lean link/switch model; every knob is an attribute:
// --mrclab::emulator::sim::SimFabric::LinkDelay=2us and the like), runs a ring all-reduce over every host
// with the unchanged MRC core on each host (SimJob, the same workload as in emulated labs),
// takes one spine uplink of plane 0 down at failAt, and prints every step's time and whether
// the job rode through. The same runs, with a fault schedule, SLOs and a run directory, are
// `mrclab drill SCENARIO --backend ns3`.
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "emulator/errors.h"
#include "emulator/ns3/helper/sim_job.h"
#include "emulator/ns3/helper/sim_scheduler.h"
#include "emulator/ns3/model/sim_fabric.h"
#include "mrc/core/qp_presets.h"
#include "ns3/command-line.h"
#include "ns3/simulator.h"

using namespace mrclab;

namespace {

constexpr const char* kProgram = "mrclab-clos-allreduce";

// A bad option or lab file: one line on stderr, exit status 2 (as mrclab's own commands).
[[noreturn]] void Refuse(const std::string& what) {
  std::fprintf(stderr, "%s: error: %s\n", kProgram, what.c_str());
  std::exit(2);
}

int Run(int argc, char** argv);

}  // namespace

int main(int argc, char** argv) {
  try {
    return Run(argc, argv);
  } catch (const std::exception& e) {  // a lab file that does not parse, EVs out of range, ...
    std::fprintf(stderr, "%s: error: %s\n", kProgram, e.what());
    return emulator::ExitStatusOf(e);
  }
}

namespace {

int Run(int argc, char** argv) {
  std::string lab_file = "labs/clos2.yaml";
  std::string transport = "mrc";
  std::string ev_mode = "srv6";
  uint32_t evs = 32;
  uint32_t size_kib = 1024;
  double fail_at = 0.3, stop_time = 1.0;
  emulator::sim::UseSimScheduler();  // before Parse: --SchedulerType=... still chooses another
  ns3::CommandLine cmd(__FILE__);
  cmd.AddValue("lab", "mrclab lab file (labs/*.yaml)", lab_file);
  cmd.AddValue("transport", "mrc or rc", transport);
  cmd.AddValue("evMode", "srv6 (uSID path per EV) or udp (source port per EV, ECMP)", ev_mode);
  cmd.AddValue("evs", "EVs per QP", evs);
  cmd.AddValue("sizeKib", "all-reduce size per rank, KiB", size_kib);
  cmd.AddValue("failAt", "when the first spine uplink of plane 0 goes down (s); negative: never", fail_at);
  cmd.AddValue("stopTime", "simulated seconds to run", stop_time);
  cmd.Parse(argc, argv);
  if (transport != "mrc" && transport != "rc") Refuse("--transport: '" + transport + "' is not mrc or rc");
  const std::optional<mrc::EvMode> mode = mrc::ParseEvMode(ev_mode);
  if (!mode) Refuse("--evMode: '" + ev_mode + "' is not srv6 or udp");
  if (evs < 1 || evs > 256) Refuse("--evs: " + std::to_string(evs) + " is not 1 to 256 EVs per QP");
  if (size_kib < 1) Refuse("--sizeKib: the all-reduce needs at least 1 KiB per rank");
  if (!(stop_time > 0)) Refuse("--stopTime: must be more than 0 simulated seconds");

  const emulator::ResolvedLab lab = emulator::Resolve(emulator::ParseLabFile(lab_file), {.routes = false});
  ns3::Ptr<emulator::sim::SimFabric> fabric = ns3::CreateObject<emulator::sim::SimFabric>();
  fabric->Build(lab);

  harness::JobConfig job;
  for (const auto* host : lab.Hosts()) job.hosts.push_back(host->name);
  job.transport = transport == "rc" ? mrc::TransportMode::kRc : mrc::TransportMode::kMrc;
  job.ev_mode = *mode;
  job.evs_per_qp = static_cast<int>(evs);
  job.collectives = {{harness::CollectiveKind::kAllReduce, uint64_t{size_kib} * 1024}};
  job.compute_seconds = 0.01;
  job.step_timeout_seconds = 1;

  // The example runs the simulation itself; SimJob's waits are not used.
  auto run_until = [](double, const std::function<bool()>&) { return false; };
  emulator::sim::SimJob sim_job(
      lab, fabric, job, mrc::RealtimeQpConfig, run_until, [](const nlohmann::json&) {},
      [](const harness::StepRecord& r) {
        std::printf("step %3llu  %.6f s  %.2f GB/s bus bandwidth  retransmissions %llu\n",
                    static_cast<unsigned long long>(r.step), r.seconds, r.collectives.at(0).busbw_gbps / 8,
                    static_cast<unsigned long long>(r.retransmissions));
      });
  int failed_link = -1;
  for (const auto& link : lab.links)
    if (link.fabric && link.plane == 0) {
      failed_link = link.index;
      break;
    }
  if (fail_at >= 0 && failed_link >= 0)
    ns3::Simulator::Schedule(ns3::Seconds(fail_at), [&] {
      std::printf("-- %.3f s: link %s:%s <-> %s:%s down\n", ns3::Simulator::Now().GetSeconds(),
                  lab.links[failed_link].a.node.c_str(), lab.links[failed_link].a.interface.c_str(),
                  lab.links[failed_link].b.node.c_str(), lab.links[failed_link].b.interface.c_str());
      fabric->SetLinkUp(failed_link, false);
    });
  sim_job.Start();
  ns3::Simulator::Stop(ns3::Seconds(stop_time));
  ns3::Simulator::Run();
  const harness::JobState state = sim_job.state();
  std::printf("%s over %s EVs: %llu steps, %s%s%s; %llu packet-hops simulated\n", transport.c_str(), ev_mode.c_str(),
              static_cast<unsigned long long>(sim_job.steps_done()),
              state == harness::JobState::kInterrupted ? "interrupted: " : "rode through",
              state == harness::JobState::kInterrupted ? sim_job.Wait().reason.c_str() : "", "",
              static_cast<unsigned long long>(fabric->PacketHops()));
  ns3::Simulator::Destroy();
  return state == harness::JobState::kInterrupted ? 1 : 0;
}

}  // namespace
