// Asio driver: runs one Context over real UDP/IPv6 sockets on a boost::asio::io_context, in
// real time. Everything (core calls, completion handling via the progress hook) happens on the
// io_context's thread; the core itself is untouched by threads.
//
//   ports[p]      one receive socket per NIC port, bound to [local_address]:4791, opened in
//                 the port's network namespace, zero UDP checksum (UDP_NO_CHECK6_TX/_RX)
//   EV -> route   (port by plane, destination address, UDP source port)
//     udp mode    destination = the peer's port address; the EV is the UDP source port. Linux
//                 cannot choose a source port per sendmsg, so each (port, source port) gets
//                 its own socket, bound to that port and connect()ed to the peer (connected
//                 UDP skips the per-packet route lookup). 32-256 sockets per QP is cheap.
//     srv6 mode   destination = the EV's uSID container address; all EVs of a port share its
//                 receive socket (source port 4791), so sends batch across EVs.
//   receive       recvmmsg batches -> Context::OnDatagram -> progress hook -> flush; with
//                 UDP GRO a message may hold several datagrams (cut up again, udp_offload.h)
//   transmit      PollTransmit into a batch of buffers, grouped by socket, sendmmsg per group;
//                 on checksummed (udp mode) sockets, consecutive equal-size packets of one EV
//                 go as one UDP GSO message; a send the kernel refuses (EAGAIN) is dropped
//                 and recovered by the transport
//   timers        one steady_timer armed at Context::NextTimeout
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <netinet/in.h>

#include "mrc/asio/endpoint.h"
#include "mrc/core/context.h"
#include "mrc/core/ev_route.h"

namespace mrclab::mrc {

struct AsioEndpointConfig {
  std::vector<EndpointPort> ports;
  EvMode ev_mode = EvMode::kUdp;
  uint16_t udp_port = 4791;
  int socket_buffer_bytes = 32 << 20;
  size_t batch = 32;
  // UDP GSO on udp-mode send sockets (which then carry a real UDP checksum) and UDP GRO on
  // receive sockets. Off: one datagram per message, zero checksums everywhere.
  bool segmentation_offload = true;
  // Seeds the QPNs, rkeys and initial PSNs this endpoint hands out. None: drawn from the
  // kernel's entropy (getrandom), so no other host can predict them (ReDMArk, USENIX Sec '21).
  // Set it only to replay a run.
  std::optional<uint64_t> key_seed;
};

struct AsioEndpointStats {
  uint64_t rx_datagrams = 0, rx_syscalls = 0, tx_datagrams = 0, tx_syscalls = 0;
  uint64_t tx_dropped = 0, unroutable = 0, timer_wakeups = 0;
  uint64_t tx_gso_messages = 0, rx_gro_messages = 0;  // messages that carried several datagrams
};

class AsioEndpoint : public Endpoint {
 public:
  AsioEndpoint(boost::asio::io_context& io, const AsioEndpointConfig& config);
  ~AsioEndpoint() override;
  AsioEndpoint(const AsioEndpoint&) = delete;
  AsioEndpoint& operator=(const AsioEndpoint&) = delete;

  Context& context() override { return context_; }
  // Opens the sockets udp mode needs.
  void SetRoutes(uint32_t qpn, const std::vector<EvRoute>& routes) override;
  void SetOnProgress(std::function<void()> fn) override { on_progress_ = std::move(fn); }
  void Start() override;
  void Stop() override;
  void Kick() override;
  static Timestamp Now();
  const AsioEndpointStats& stats() const { return stats_; }

 private:
  struct Port {
    EndpointPort spec;
    std::unique_ptr<boost::asio::ip::udp::socket> socket;
  };
  struct Route {
    int fd = -1;
    bool connected = false;
    sockaddr_in6 destination{};
  };
  void WaitReadable(size_t port);
  void OnReadable(size_t port);
  void OnTimer();
  void ArmTimer();
  void Flush();
  void SendBatch(size_t count);
  void Receive(size_t port, std::span<const uint8_t> message, size_t segment_bytes, Timestamp now);

  boost::asio::io_context& io_;
  AsioEndpointConfig config_;
  Context context_;
  std::vector<Port> ports_;
  std::map<uint32_t, std::vector<Route>> routes_;
  std::map<std::tuple<size_t, uint16_t, std::string>, int> tx_sockets_;
  boost::asio::steady_timer timer_;
  Timestamp armed_at_ = Timestamp::Infinite();
  std::function<void()> on_progress_;
  bool running_ = false;
  AsioEndpointStats stats_;

  static constexpr size_t kBufferBytes = 16384;   // one datagram
  static constexpr size_t kGroBufferBytes = 65536;  // one GRO super-packet
  size_t rx_slot_bytes_ = kBufferBytes;
  std::vector<uint8_t> tx_buffers_;
  std::unique_ptr<uint8_t[]> rx_buffers_;  // left uninitialised: pages are touched as used
  std::vector<const Route*> tx_routes_;
  std::vector<size_t> tx_lengths_;
  // Send sockets that take UDP GSO: probed when opened, dropped if the kernel refuses a send.
  std::set<int> gso_sockets_;
};

}  // namespace mrclab::mrc
