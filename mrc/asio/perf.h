// Perf API behind `mrclab perf`: one client QP writes to one server QP over real UDP sockets
// in two network namespaces (or any two sets of NIC ports), both driven by this process (one
// io_context and thread per side). Every message is a Write-with-Immediate carrying its index;
// the server checks each landed message byte for byte against the known pattern, then reposts
// the receive that lets the client reuse the slot.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "mrc/asio/asio_endpoint.h"
#include "mrc/core/qp.h"
#include "mrc/core/wire.h"

namespace mrclab::mrc {

struct PerfPort {
  std::string netns;          // namespace holding the NIC port ("" = current)
  std::string local_address;  // IPv6 address of the port
  int plane = 0;
};

struct PerfEv {
  int plane = 0;
  std::string destination;      // udp: peer port address of that plane; srv6: uSID container
  uint16_t udp_source_port = 0; // udp mode: the entropy; srv6 mode: unused (4791)
};

struct PerfConfig {
  TransportMode transport = TransportMode::kMrc;
  EvMode ev_mode = EvMode::kUdp;
  std::vector<PerfPort> server_ports;
  std::vector<PerfPort> client_ports;
  std::vector<PerfEv> evs;          // client -> server, EV id = index
  // server -> client, same index = reverse of the same path. Optional in udp mode (derived:
  // client port address of the plane, same source port); required in srv6 mode.
  std::vector<PerfEv> reverse_evs;
  uint64_t message_bytes = 1 << 20;
  uint64_t total_bytes = 0;         // stop after this many bytes (0: run for duration)
  double duration_seconds = 5;
  uint32_t mtu = 1024;              // payload bytes per packet (<= 8192)
  uint32_t max_outstanding_messages = 8;
  std::optional<uint64_t> key_seed;  // none: both endpoints draw their keys (AsioEndpointConfig)
  double timeout_seconds = 0;       // hard stop; 0: 60 s (total mode) or duration + 10 s
  bool segmentation_offload = true; // UDP GSO/GRO in the driver (AsioEndpointConfig)
  std::optional<QpConfig> qp;       // full override of the tuned defaults below
  uint16_t udp_port = kRoceV2UdpPort;  // both sides' (AsioEndpointConfig::udp_port)
  // Makes each side's endpoint (server: true) from the config an AsioEndpoint would get; none:
  // AsioEndpoint. A VM host's side is a RelayEndpoint (harness/job/vm_endpoint.h).
  std::function<std::unique_ptr<Endpoint>(boost::asio::io_context&, const AsioEndpointConfig&, bool server)>
      make_endpoint;
};

// QP settings tuned for real-time drivers (ms-scale timer slack on shared CPUs).
QpConfig DefaultRealtimeQpConfig(TransportMode transport, const std::vector<PerfEv>& evs, uint32_t mtu);

struct PerfEvResult {
  uint16_t id = 0;
  int plane = 0;
  std::string state;
  uint64_t tx_data = 0, tx_retransmits = 0, tx_probes = 0, rx_packets = 0, losses = 0;
  uint64_t spurious_losses = 0;  // of `losses`: the copy declared lost arrived after all
  uint64_t server_tx_acks = 0, server_rx_packets = 0;  // the server's side of the same EV
};

struct PerfResult {
  bool ok = false;
  std::string error;
  std::string transport, ev_mode;
  double seconds = 0;
  uint64_t messages = 0;
  uint64_t bytes_verified = 0;
  uint64_t verify_failures = 0;
  double goodput_gbps = 0;
  double messages_per_second = 0;
  double latency_us_p50 = 0, latency_us_p90 = 0, latency_us_p99 = 0, latency_us_max = 0;
  uint64_t packets_sent = 0, retransmissions = 0, rto_fired = 0;
  double srtt_us = 0, min_rtt_us = 0;
  uint64_t congestion_window_bytes = 0;
  double cpu_seconds = 0;         // whole process (both sides)
  double cpu_seconds_per_gb = 0;
  AsioEndpointStats client_io, server_io;  // AsioEndpoint sides only
  std::vector<PerfEvResult> evs;
  std::vector<std::string> ev_events;  // EV state changes seen by the client, in order
  nlohmann::json ToJson() const;
};

// CPU seconds (user + system) this process has used so far; benchmarks and drills report it.
double ProcessCpuSeconds();

// Runs the transfer; never throws (setup errors come back in PerfResult::error).
PerfResult RunPerf(const PerfConfig& config);

}  // namespace mrclab::mrc
