// Shared by the test suites: small labs, packets that carry a sequence number, and receivers
// that record arrivals with their time.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "emulator/ns3/model/sim_fabric.h"
#include "emulator/ns3/model/sim_packet.h"
#include "emulator/ns3/model/sim_port.h"
#include "emulator/resolved_lab.h"
#include "ns3/nstime.h"
#include "ns3/ptr.h"

namespace mrclab::emulator::sim::test {

// labs/clos2.yaml: 2 planes x (2 spines + 4 leaves), 8 hosts (2 per leaf), 1 Gbit/s links.
// Link indices: plane P, leaf j, spine i -> 8P + 2j + i (a = leaf); host h in plane P ->
// 16 + 8P + h (a = leaf, b = host).
emulator::ResolvedLab Clos2(emulator::Routing routing);
inline int Clos2FabricLink(int plane, int leaf, int spine) { return 8 * plane + 2 * leaf + spine; }
inline int Clos2HostLink(int plane, int host) { return 16 + 8 * plane + host; }

// A fabric for `lab` with RoutingReactionTime = 5 ms and Seed = `seed`, built.
ns3::Ptr<SimFabric> BuildFabric(const emulator::ResolvedLab& lab, uint32_t seed = 1);

// A packet from `src` to `dst` whose 4-byte payload prefix is `seq`; payload_bytes = 1000.
SimPacket NumberedPacket(const std::string& src, const std::string& dst, uint16_t src_port,
                         uint32_t seq);
// The sequence number NumberedPacket put in.
uint32_t SequenceOf(const SimPacket& packet);

struct Arrival {
  ns3::Time at;
  SimPacket packet;
};

// Records what a port delivers (to test a port or a switch on its own).
class CollectingSink : public PacketSink {
 public:
  void Receive(SimPacket&& packet) override;
  std::vector<Arrival> arrivals;
  std::function<void(const SimPacket&)> on_receive;  // optional: called for each, as it arrives
};

// Records what a host port receives.
class Recorder {
 public:
  // Installs itself as the Receiver of `host` in `plane`.
  void Attach(SimFabric& fabric, const std::string& host, int plane);
  const std::vector<Arrival>& Arrivals() const { return arrivals_; }
  // Sequence numbers received, in arrival order.
  std::vector<uint32_t> Sequences() const;

 private:
  std::vector<Arrival> arrivals_;
};

// The link address of `host`'s port in `plane` ("fd00:0:12::2").
std::string HostAddress(const emulator::ResolvedLab& lab, const std::string& host, int plane);

}  // namespace mrclab::emulator::sim::test
