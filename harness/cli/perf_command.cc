#include "harness/cli/perf_command.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "emulator/errors.h"
#include "emulator/netns/lab_state.h"
#include "emulator/netns/vm_hosts.h"
#include "emulator/resolved_lab.h"
#include "harness/job/perf_plan.h"
#include "harness/job/vm_endpoint.h"
#include "mrc/asio/perf.h"

namespace mrclab::harness {
namespace {

using emulator::ResolvedLab;

struct PerfArgs {
  std::string lab, src, dst;
  std::string transport = "mrc";
  std::string ev_mode = "srv6";
  int evs = 32;
  uint64_t size = 0;
  uint64_t msg = 1 << 20;
  double duration = 5;
  std::optional<uint64_t> key_seed;
  bool json = false;
};

mrc::PerfConfig BuildConfig(const ResolvedLab& lab, const PerfArgs& a) {
  mrc::PerfConfig config = PerfConfigBetween(lab, a.src, a.dst,
                                             a.transport == "rc" ? mrc::TransportMode::kRc : mrc::TransportMode::kMrc,
                                             *mrc::ParseEvMode(a.ev_mode), a.evs);
  config.message_bytes = a.msg;
  config.total_bytes = a.size;
  config.duration_seconds = a.duration;
  config.key_seed = a.key_seed;
  return config;
}

void PrintResult(const mrc::PerfResult& r) {
  std::printf("%s over %s EVs: %.3f Gbit/s goodput, %.0f msg/s, %llu messages, %llu bytes "
              "verified (%llu failures)\n",
              r.transport.c_str(), r.ev_mode.c_str(), r.goodput_gbps, r.messages_per_second,
              static_cast<unsigned long long>(r.messages),
              static_cast<unsigned long long>(r.bytes_verified),
              static_cast<unsigned long long>(r.verify_failures));
  std::printf("latency us: p50 %.0f  p90 %.0f  p99 %.0f  max %.0f; retransmissions %llu, "
              "RTO %llu; CPU %.2f s/GB\n",
              r.latency_us_p50, r.latency_us_p90, r.latency_us_p99, r.latency_us_max,
              static_cast<unsigned long long>(r.retransmissions),
              static_cast<unsigned long long>(r.rto_fired), r.cpu_seconds_per_gb);
  // LOSSES: packets declared lost on the EV; SPURIOUS: of those, the ones that arrived after all.
  std::printf("%4s %5s %-12s %10s %8s %8s %8s\n", "EV", "PLANE", "STATE", "TX", "RETX", "LOSSES", "SPURIOUS");
  for (const auto& ev : r.evs)
    std::printf("%4u %5d %-12s %10llu %8llu %8llu %8llu\n", ev.id, ev.plane, ev.state.c_str(),
                static_cast<unsigned long long>(ev.tx_data),
                static_cast<unsigned long long>(ev.tx_retransmits),
                static_cast<unsigned long long>(ev.losses), static_cast<unsigned long long>(ev.spurious_losses));
  if (!r.ok) std::fprintf(stderr, "mrclab: perf failed: %s\n", r.error.c_str());
}

bool AnyVmHost(const ResolvedLab& lab, const std::vector<std::string>& hosts) {
  for (const std::string& host : hosts)
    if (const emulator::ResolvedNode* node = lab.FindNode(host); node && node->vm) return true;
  return false;
}

// Our core with a VM host on either side: the endpoint here, its datagrams through the guest
// (harness/job/vm_endpoint.h); the sessions keep the relays while the run lasts.
mrc::PerfResult CorePerfWithVmHosts(const ResolvedLab& lab, const PerfArgs& a) {
  mrc::PerfConfig config = BuildConfig(lab, a);
  config.udp_port = kMrcPortBesideRxe;
  std::vector<emulator::netns::GuestSession> relays;
  config.make_endpoint = [&](boost::asio::io_context& io, const mrc::AsioEndpointConfig& ec,
                             bool server) -> std::unique_ptr<mrc::Endpoint> {
    const emulator::ResolvedNode& host = *lab.FindNode(server ? a.dst : a.src);
    if (!host.vm) return std::make_unique<mrc::AsioEndpoint>(io, ec);
    VmEndpoint vm = OpenVmEndpoint(lab, host, io, ec.ports, ec.ev_mode, ec.udp_port, ec.key_seed);
    relays.push_back(std::move(vm.session));
    return std::move(vm.endpoint);
  };
  return mrc::RunPerf(config);
}

// Between VM hosts: the kernel's RC (rdma_rxe) with mrclab-rdma (emulator/netns/vm_hosts.h).
int KernelRcPerf(const ResolvedLab& lab, const PerfArgs& a) {
  for (const std::string& host : {a.src, a.dst}) {
    const emulator::ResolvedNode* node = lab.FindNode(host);
    if (!node || !node->vm)
      throw std::invalid_argument("perf between a VM host and " + host + ": both hosts must be VM hosts (the kernel's "
                                  "RC on one side needs it on the other)");
  }
  if (a.size) throw std::invalid_argument("--size: VM hosts run for --duration");
  if (a.msg < 1 || a.msg > (1u << 30)) throw std::invalid_argument("--msg: 1 byte .. 1 GiB");
  const emulator::netns::KernelRcRun run =
      emulator::netns::RunKernelRc(lab, emulator::netns::LabPaths(lab.name), a.src, a.dst, a.msg, a.duration);
  const nlohmann::json& c = run.client;
  if (a.json) {
    std::cout << nlohmann::json{{"transport", "kernel_rc"}, {"src", a.src}, {"dst", a.dst}, {"plane", run.plane},
                                {"address", run.address}, {"client", c}, {"server", run.server}}
                     .dump(2)
              << "\n";
  } else {
    std::printf("kernel RC (rdma_rxe, RDMA writes with immediate) %s -> %s on plane %d [%s]: %.3f Gbit/s, %s "
                "messages of %llu bytes, mean completion latency %.0f us, longest gap %.3f s\n",
                a.src.c_str(), a.dst.c_str(), run.plane, run.address.c_str(), c.value("gbps", 0.0),
                c.value("messages", nlohmann::json(0)).dump().c_str(), static_cast<unsigned long long>(a.msg),
                c.value("latency_us_mean", 0.0), c.value("longest_gap_s", 0.0));
    if (!c["error"].is_null()) std::fprintf(stderr, "mrclab: perf failed: %s\n", c["error"].dump().c_str());
  }
  return c["error"].is_null() ? emulator::kExitOk : emulator::kExitFailed;
}

}  // namespace

void AddPerfCommand(CLI::App& app, int& exit_status) {
  static PerfArgs a;
  auto* cmd = app.add_subcommand("perf", "Measure MRC (or RC) between two hosts of a lab, like "
                                         "ib_write_bw");
  cmd->add_option("lab", a.lab, "Deployed lab name")->required();
  cmd->add_option("src", a.src, "Client host (writes)")->required();
  cmd->add_option("dst", a.dst, "Server host (receives and verifies)")->required();
  cmd->add_option("--transport", a.transport, "mrc, or rc (RoCEv2 RC baseline: one path)")
      ->check(CLI::IsMember({"mrc", "rc"}))->capture_default_str();
  cmd->add_option("--ev-mode", a.ev_mode, "srv6 (uSID path per EV) or udp (source port per EV)")
      ->check(CLI::IsMember({"srv6", "udp"}))->capture_default_str();
  cmd->add_option("--evs", a.evs, "Entropy values, spread evenly over the planes")
      ->capture_default_str();
  cmd->add_option("--size", a.size, "Total bytes to write (0: run for --duration)");
  cmd->add_option("--msg", a.msg, "Bytes per RDMA Write")->capture_default_str();
  cmd->add_option("--duration", a.duration, "Seconds, when --size is 0")->capture_default_str();
  cmd->add_option("--key-seed", a.key_seed, "Repeatable QPNs, rkeys and initial PSNs (default: random per run)");
  cmd->add_flag("--json", a.json, "Everything, machine-readable");
  cmd->footer("Example: mrclab perf clos2 host0 host5 --evs 64 --duration 3\n"
              "Every byte is verified at the receiver; per-EV packet counts and states are shown.\n"
              "With a VM host (runtimes: vm) on either side, MRC's datagrams go through its guest's kernel\n"
              "(UDP port 4792: rdma_rxe holds 4791 there). Between two VM hosts --transport rc measures the\n"
              "kernel's RC (rdma_rxe) instead of our RC model:\n"
              "  mrclab perf vmlab host0 host2 --transport rc --msg 65536 --duration 5");
  cmd->callback([&exit_status] {
    ResolvedLab lab = emulator::netns::LoadDeployedLab(a.lab);
    const bool vm = AnyVmHost(lab, {a.src, a.dst});
    if (vm && a.transport == "rc") {
      exit_status = KernelRcPerf(lab, a);
      return;
    }
    mrc::PerfResult result = vm ? CorePerfWithVmHosts(lab, a) : mrc::RunPerf(BuildConfig(lab, a));
    if (a.json)
      std::cout << result.ToJson().dump(2) << "\n";
    else
      PrintResult(result);
    exit_status = result.ok ? emulator::kExitOk : emulator::kExitFailed;
  });
}

}  // namespace mrclab::harness
