// An MRC endpoint whose datagrams reach the fabric through a relay that owns the UDP sockets:
// a byte stream (a connected fd) to a VM host's /opt/mrclab-udp-relay
// (emulator/netns/guest/mrclab_udp_relay.cc), so the packets leave and enter through the
// guest's own kernel and NICs while the core runs here, as it does for namespace hosts.
//
//   PollTransmit ─► frame: u16 length | u8 plane | u16 source port | 16 B destination | datagram ─► stream
//   stream ─► frame: u16 length | u8 plane | u8 0 | datagram ─► OnDatagram (info.plane)
//
// udp EVs: the route's source port (the relay opens a socket per source port); srv6: 0, the
// port's own socket. A transmit queue beyond kMaxQueuedBytes drops, as a full socket buffer
// does; the transport recovers. Same threading as AsioEndpoint: everything on the io_context.
#pragma once

#include <netinet/in.h>

#include <map>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include "mrc/asio/endpoint.h"

namespace mrclab::mrc {

struct RelayEndpointConfig {
  int fd = -1;                  // the stream; the endpoint owns it from now on
  std::string received;         // bytes already read from it (frames from the relay)
  std::vector<int> planes;      // the host's NIC ports
  EvMode ev_mode = EvMode::kSrv6;
  std::optional<uint64_t> key_seed;  // as AsioEndpointConfig::key_seed
};

struct RelayEndpointStats {
  uint64_t rx_datagrams = 0, tx_datagrams = 0, tx_dropped = 0, unroutable = 0;
};

class RelayEndpoint : public Endpoint {
 public:
  static constexpr size_t kMaxQueuedBytes = 8 << 20;

  RelayEndpoint(boost::asio::io_context& io, RelayEndpointConfig config);
  ~RelayEndpoint() override;
  RelayEndpoint(const RelayEndpoint&) = delete;
  RelayEndpoint& operator=(const RelayEndpoint&) = delete;

  Context& context() override { return context_; }
  void SetRoutes(uint32_t qpn, const std::vector<EvRoute>& routes) override;
  void SetOnProgress(std::function<void()> fn) override { on_progress_ = std::move(fn); }
  void Start() override;
  void Stop() override;
  void Kick() override;
  const RelayEndpointStats& stats() const { return stats_; }

 private:
  struct Route {
    uint8_t plane = 0;
    uint16_t source_port = 0;
    in6_addr destination{};
  };
  void Read();
  void Deliver();
  void Flush();
  void Write();
  void ArmTimer();

  RelayEndpointConfig config_;
  Context context_;
  boost::asio::posix::stream_descriptor stream_;
  boost::asio::steady_timer timer_;
  Timestamp armed_at_ = Timestamp::Infinite();
  std::map<uint32_t, std::vector<Route>> routes_;
  std::function<void()> on_progress_;
  bool running_ = false, writing_ = false;
  bool closed_ = false;  // the relay went away: nothing more is written (the job's watchdog tells)
  std::string received_, queued_, in_flight_;
  std::vector<uint8_t> read_buffer_ = std::vector<uint8_t>(65536), packet_ = std::vector<uint8_t>(16384);
  RelayEndpointStats stats_;
};

}  // namespace mrclab::mrc
