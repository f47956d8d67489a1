#include "harness/job/perf_plan.h"

#include <stdexcept>

#include "harness/job/ev_plan.h"

namespace mrclab::harness {

mrc::PerfConfig PerfConfigBetween(const emulator::ResolvedLab& lab, const std::string& client,
                                  const std::string& server, mrc::TransportMode transport, mrc::EvMode ev_mode,
                                  int evs) {
  if (client == server) throw std::invalid_argument("source and destination are the same host");
  mrc::PerfConfig config;
  config.transport = transport;
  config.ev_mode = ev_mode;
  const HostPairPlan plan = PlanEvs(lab, client, server, ev_mode, evs);
  for (const auto& p : plan.a_ports) config.client_ports.push_back({p.netns, p.local_address, p.plane});
  for (const auto& p : plan.b_ports) config.server_ports.push_back({p.netns, p.local_address, p.plane});
  for (const auto& e : plan.a_to_b) config.evs.push_back({e.plane, e.destination, e.udp_source_port});
  for (const auto& e : plan.b_to_a) config.reverse_evs.push_back({e.plane, e.destination, e.udp_source_port});
  return config;
}

}  // namespace mrclab::harness
