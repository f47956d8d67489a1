#include "harness/cli/drill_command.h"

#include <CLI/CLI.hpp>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <optional>

#include "emulator/netns/deploy.h"
#include "emulator/netns/lab_state.h"
#include "emulator/ns3/helper/huge_page_malloc.h"
#include "harness/cli/report_command.h"
#include "harness/drill/drill_runner.h"
#include "harness/drill/fault_plan.h"
#include "harness/drill/job_resources.h"
#include "harness/drill/netns_backend.h"
#include "harness/drill/run_recorder.h"
#include "harness/drill/scenario.h"
#include "harness/telemetry/metrics_exporter.h"

namespace mrclab::harness {
namespace {

struct DrillArgs {
  std::string scenario;
  std::string backend;
  DrillOptions options;
  std::string metrics = "127.0.0.1:9464";
  std::optional<uint64_t> seed;
  bool json = false, quiet = false, check = false, report = false;
};

// --check: parse the scenario and plan its faults against the lab without touching anything.
int Check(const Scenario& s, const DrillArgs& a) {
  CheckBackendSupport(s, a.options);
  CheckRunRoot(a.options.out_root);
  SelectedTransports(s, a.options);
  const emulator::BackendKind kind = ChosenBackend(s, a.options);
  const std::string backend(ToString(kind));
  const emulator::ResolvedLab plan = DrillLabPlan(s, a.options);
  const FaultPlan faults = PlanFaults(s, plan);
  const size_t job_hosts = JobHosts(s, plan).size();
  const std::vector<TransportFootprint> jobs = CheckJobResources(s, plan, kind);
  if (kind == emulator::BackendKind::kNetns) {
    emulator::netns::RefuseIfKernelCannotForwardSrv6();
    CheckNetnsFaultTools(s);
  }
  // A real-time lab: what the job asks of this machine (measured once, then cached).
  const MachineCheck machine = kind == emulator::BackendKind::kNetns
                                   ? CheckMachineCapacity(s, plan, !a.json && !a.quiet)
                                   : MachineCheck{};
  // The metrics endpoint: an address asked for must be free; the default falls back to a free port.
  const std::string metrics_problem = a.metrics == "off" ? "" : MetricsBindProblem(a.metrics);
  if (!metrics_problem.empty() && !a.options.metrics_free_port_if_taken)
    throw ScenarioError(s.file, "--metrics", a.metrics + " cannot be listened on: " + metrics_problem +
                                                 " (another drill? without --metrics a free port is used)");
  const std::string metrics_line =
      a.metrics == "off"        ? "off"
      : metrics_problem.empty() ? a.metrics
                                : a.metrics + " is taken (" + metrics_problem + "): a free port will be used";
  if (a.json) {
    std::cout << nlohmann::json{{"scenario", s.name}, {"seed", s.seed}, {"lab", plan.name}, {"backend", backend},
                                {"job_hosts", job_hosts}, {"mtu", JobMtu(s, plan)}, {"lab_mtu", plan.mtu},
                                {"jobs", ToJson(jobs, kind)}, {"capacity", machine.json},
                                {"faults", faults.ToJson()}, {"schedule_seconds", faults.end_seconds},
                                {"metrics", metrics_line}}.dump(2)
              << "\n";
    return 0;
  }
  std::printf("scenario %s is valid: lab %s (%s backend), %zu job host(s), %zu transport(s), %zu fault(s) over "
              "%.1f s, %zu SLO(s)%s\n",
              s.name.c_str(), plan.name.c_str(), backend.c_str(), job_hosts, s.transports.size(), faults.faults.size(),
              faults.end_seconds, s.slos.size(), s.default_slos ? " (the defaults: no slos in the file)" : "");
  std::printf("  packets carry %u payload bytes (job.mtu%s; the lab's links: mtu %u)\n", JobMtu(s, plan),
              s.job.mtu ? "" : " from the lab", plan.mtu);
  for (size_t i = 0; i < jobs.size(); ++i) {
    const auto& [name, f] = jobs[i];
    if (s.transports[i].stack == TransportStack::kKernel)
      std::printf("  job %-8s %d ranks, %zu QP pairs: the kernel's RC on VM hosts (rdma_rxe; buffers in the guests)\n",
                  name.c_str(), f.ranks, f.qp_pairs);
    else if (kind == emulator::BackendKind::kNetns)
      std::printf("  job %-8s %d ranks, %zu QP pairs, %zu udp source ports, %zu sockets, %.1f MiB buffers, "
                  "~%.1f MiB QP state\n",
                  name.c_str(), f.ranks, f.qp_pairs, f.source_ports, f.sockets,
                  static_cast<double>(f.buffer_bytes) / (1 << 20), static_cast<double>(f.qp_state_bytes) / (1 << 20));
    else  // simulated hosts open no sockets
      std::printf("  job %-8s %d ranks, %zu QP pairs, %zu udp source ports, %.1f MiB buffers, ~%.1f MiB QP state\n",
                  name.c_str(), f.ranks, f.qp_pairs, f.source_ports, static_cast<double>(f.buffer_bytes) / (1 << 20),
                  static_cast<double>(f.qp_state_bytes) / (1 << 20));
  }
  for (const auto& line : machine.lines) std::printf("%s\n", line.c_str());
  std::printf("  metrics endpoint: %s\n", metrics_line.c_str());
  for (const auto& f : faults.faults) {
    std::printf("  at %6.2f s  %s", f.windows.front().apply, f.description.c_str());
    if (f.windows.front().revert != kUntilEnd)
      std::printf("  (until %.2f s)", f.windows.back().revert);
    else
      std::printf("  (until the end)");
    std::printf("\n");
  }
  return 0;
}

}  // namespace

void AddDrillCommand(CLI::App& app, int& exit_status) {
  static DrillArgs a;
  auto* cmd = app.add_subcommand(
      "drill", "Run a chaos drill: a synthetic training job over MRC (and/or RC) while faults are injected "
               "on a schedule; verdict from the scenario's SLOs");
  cmd->add_option("scenario", a.scenario, "Scenario file (scenarios/*.yaml)")->required();
  cmd->add_option("--out", a.options.out_root, "Directory under which the run directory is made")
      ->capture_default_str();
  cmd->add_option("--lab", a.options.lab, "Use this lab instead of the scenario's: a lab file, or a deployed lab");
  cmd->add_option("--metrics", a.metrics,
                  "Prometheus endpoint address (HOST:PORT), or 'off'. Without this option a drill that finds the "
                  "default port taken (another drill) serves on a free port and says which")
      ->capture_default_str();
  cmd->add_option("--transport", a.options.transports, "Run only this transport of the scenario (repeatable)");
  cmd->add_option("--backend", a.backend,
                  "netns: an emulated lab (namespaces, FRR, kernel SRv6; real time); ns3: the same lab simulated "
                  "(virtual time; no FRR). Default: the scenario's backend key, else netns")
      ->check(CLI::IsMember({"netns", "ns3"}));
  cmd->add_option("--seed", a.seed,
                  "Use this seed instead of the scenario's (random flap times, the simulation's randomness); "
                  "recorded in result.json")
      ->check(CLI::Range(uint64_t{0}, uint64_t{1} << 40));
  cmd->add_flag("--keep-lab", a.options.keep_lab, "Leave a lab the drill deployed in place");
  cmd->add_flag("--check", a.check,
                "Validate the scenario, show its fault plan, each job's footprint and (emulated labs) its demand on "
                "this machine's measured capacity; change nothing (the first check on a machine measures it with a "
                "small lab of its own, about 6 s, then caches the figure)");
  cmd->add_flag("--report", a.report, "Also write report.html and report.md into the run directory");
  cmd->add_flag("--json", a.json, "Print result.json instead of the summary");
  cmd->add_flag("-q,--quiet", a.quiet, "No progress lines on stderr");
  cmd->footer(
      "Example: mrclab drill scenarios/default.yaml --report\n"
      "  boots the scenario's lab (or reuses it if deployed), runs baseline steps, injects the faults on\n"
      "  schedule, runs tail steps, reverts every fault (also on Ctrl-C) and writes\n"
      "  runs/<time>-<scenario>/{events.jsonl,steps.csv,evs.csv,links.csv,result.json,junit.xml,frr-logs/}\n"
      "  (and report.html/report.md with --report; later: mrclab report DIR, mrclab compare DIR DIR).\n"
      "Simulation: mrclab drill scenarios/default.yaml --backend ns3\n"
      "  runs the same scenario on the same lab as an ns-3 simulation (same run directory; times are\n"
      "  simulated seconds); bgp_reset and config_change need the emulated lab.\n"
      "Exit status: 0 every SLO passed, 1 an SLO failed (or the drill could not run), 2 bad input or\n"
      "  environment, 3 inconclusive (this machine was the bottleneck during a fault window or the baseline,\n"
      "  or a planned fault window was not reached: see result.json), 130 interrupted.\n"
      "Live metrics: curl -s http://127.0.0.1:9464/metrics | grep mrclab_");
  cmd->callback([&exit_status, cmd] {
    Scenario s = ParseScenarioFile(a.scenario);
    if (a.seed) s.seed = *a.seed;
    // --metrics on the command line: that address or an error; the default may fall back.
    a.options.metrics_free_port_if_taken = cmd->count("--metrics") == 0;
    if (!a.backend.empty()) a.options.backend = emulator::ParseBackend(a.backend);
    if (a.check) {
      exit_status = Check(s, a);
      return;
    }
    if (ChosenBackend(s, a.options) == emulator::BackendKind::kNs3) emulator::sim::ReexecWithHugePageMalloc();
    a.options.metrics_bind = a.metrics == "off" ? "" : a.metrics;
    a.options.progress = !a.quiet;
    a.options.summary = !a.json;
    const DrillOutcome out = RunDrill(s, a.options);
    if (a.json) std::cout << out.result.dump(2) << "\n";
    exit_status = out.exit_status;
    if (a.report && WriteReport(out.run_dir) != 0) {
      std::fprintf(stderr, "mrclab: the drill ran, but its report could not be written (see above)\n");
      exit_status = emulator::kExitInputError;  // the environment: python3, matplotlib
    }
  });
}

}  // namespace mrclab::harness
