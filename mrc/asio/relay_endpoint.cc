#include "mrc/asio/relay_endpoint.h"

#include <arpa/inet.h>

#include <cstring>

#include <boost/asio/write.hpp>

#include "mrc/asio/asio_endpoint.h"
#include "mrc/asio/endpoint_timer.h"
#include "mrc/asio/netns.h"

namespace mrclab::mrc {
namespace {

constexpr size_t kToRelayHeader = 21, kFromRelayHeader = 4;

}  // namespace

RelayEndpoint::RelayEndpoint(boost::asio::io_context& io, RelayEndpointConfig config)
    : config_(std::move(config)),
      context_(ContextConfig{KeySeedOrEntropy(config_.key_seed)}),
      stream_(io, config_.fd),
      timer_(io),
      received_(std::move(config_.received)) {}

RelayEndpoint::~RelayEndpoint() { Stop(); }

void RelayEndpoint::SetRoutes(uint32_t qpn, const std::vector<EvRoute>& routes) {
  std::vector<Route> resolved;
  for (const EvRoute& r : routes) {
    bool known = false;
    for (int plane : config_.planes) known |= plane == r.plane;
    if (!known) throw NetnsError("no port for plane " + std::to_string(r.plane));
    Route out;
    out.plane = static_cast<uint8_t>(r.plane);
    out.source_port = config_.ev_mode == EvMode::kUdp ? r.udp_source_port : 0;
    if (inet_pton(AF_INET6, r.destination.c_str(), &out.destination) != 1)
      throw NetnsError("bad IPv6 address '" + r.destination + "'");
    resolved.push_back(out);
  }
  routes_[qpn] = std::move(resolved);
}

void RelayEndpoint::Start() {
  running_ = true;
  Deliver();  // what came with the relay's first answer
  Read();
  Kick();
}

void RelayEndpoint::Stop() {
  running_ = false;
  boost::system::error_code ec;
  timer_.cancel();
  stream_.cancel(ec);
}

void RelayEndpoint::Kick() {
  Flush();
  ArmTimer();
}

void RelayEndpoint::Read() {
  stream_.async_read_some(boost::asio::buffer(read_buffer_), [this](const boost::system::error_code& ec, size_t n) {
    if (!running_) return;
    if (ec) {
      closed_ = true;  // the relay ended: nothing more comes in; the job's watchdog tells
      return;
    }
    received_.append(reinterpret_cast<const char*>(read_buffer_.data()), n);
    Deliver();
    Read();
  });
}

void RelayEndpoint::Deliver() {
  const Timestamp now = AsioEndpoint::Now();
  size_t at = 0, delivered = 0;
  while (received_.size() - at >= kFromRelayHeader) {
    const auto* h = reinterpret_cast<const uint8_t*>(received_.data() + at);
    const size_t length = h[0] | (h[1] << 8);
    if (received_.size() - at < kFromRelayHeader + length) break;
    ++stats_.rx_datagrams;
    ++delivered;
    context_.OnDatagram(now, std::span<const uint8_t>(h + kFromRelayHeader, length), DatagramInfo{h[2], false, {}});
    at += kFromRelayHeader + length;
  }
  received_.erase(0, at);
  if (!delivered) return;
  if (on_progress_) on_progress_();
  Flush();
  ArmTimer();
}

void RelayEndpoint::Flush() {
  if (!running_) return;
  const Timestamp now = AsioEndpoint::Now();
  while (auto t = context_.PollTransmit(now, packet_)) {
    auto it = routes_.find(t->qpn);
    if (it == routes_.end() || t->ev >= it->second.size() || t->length == 0) {
      ++stats_.unroutable;
      continue;
    }
    if (queued_.size() > kMaxQueuedBytes) {
      ++stats_.tx_dropped;
      continue;
    }
    const Route& r = it->second[t->ev];
    uint8_t header[kToRelayHeader] = {static_cast<uint8_t>(t->length & 0xff), static_cast<uint8_t>(t->length >> 8),
                                      r.plane, static_cast<uint8_t>(r.source_port & 0xff),
                                      static_cast<uint8_t>(r.source_port >> 8)};
    std::memcpy(header + 5, &r.destination, 16);
    queued_.append(reinterpret_cast<const char*>(header), kToRelayHeader);
    queued_.append(reinterpret_cast<const char*>(packet_.data()), t->length);
    ++stats_.tx_datagrams;
  }
  Write();
}

void RelayEndpoint::Write() {
  if (writing_ || queued_.empty() || closed_) return;
  writing_ = true;
  in_flight_.swap(queued_);
  boost::asio::async_write(stream_, boost::asio::buffer(in_flight_), [this](const boost::system::error_code& ec, size_t) {
    writing_ = false;
    in_flight_.clear();
    if (ec) {
      closed_ = true;
      return;
    }
    if (running_) Write();
  });
}

void RelayEndpoint::ArmTimer() {
  if (!running_) return;
  ArmEndpointTimer(timer_, context_.NextTimeout(), armed_at_, [this] {
    if (!running_) return;
    armed_at_ = Timestamp::Infinite();
    context_.OnTimeout(AsioEndpoint::Now());
    if (on_progress_) on_progress_();
    Flush();
    ArmTimer();
  });
}

}  // namespace mrclab::mrc
