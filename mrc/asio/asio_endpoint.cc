#include "mrc/asio/asio_endpoint.h"

#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <numeric>
#include <system_error>

#include "mrc/asio/endpoint_timer.h"
#include "mrc/asio/netns.h"
#include "mrc/asio/udp_offload.h"

namespace mrclab::mrc {

uint64_t KeySeedOrEntropy(const std::optional<uint64_t>& key_seed) {
  if (key_seed) return *key_seed;
  uint64_t seed = 0;
  if (getrandom(&seed, sizeof seed, 0) != static_cast<ssize_t>(sizeof seed))
    throw std::system_error(errno, std::generic_category(), "getrandom for the endpoint's keys");
  return seed;
}

AsioEndpoint::AsioEndpoint(boost::asio::io_context& io, const AsioEndpointConfig& config)
    : io_(io), config_(config), context_(ContextConfig{KeySeedOrEntropy(config.key_seed)}), timer_(io) {
  config_.batch = std::clamp<size_t>(config_.batch, 1, 256);
  tx_buffers_.resize(config_.batch * kBufferBytes);
  if (config_.segmentation_offload) rx_slot_bytes_ = kGroBufferBytes;
  rx_buffers_.reset(new uint8_t[config_.batch * rx_slot_bytes_]);
  tx_routes_.resize(config_.batch);
  tx_lengths_.resize(config_.batch);
  for (const auto& spec : config_.ports) {
    UdpSocketOptions o;
    o.netns = spec.netns;
    o.local_address = spec.local_address;
    o.local_port = config_.udp_port;
    o.buffer_bytes = config_.socket_buffer_bytes;
    const int fd = OpenUdpSocket(o);
    if (config_.segmentation_offload) EnableUdpGro(fd);
    Port p;
    p.spec = spec;
    p.socket = std::make_unique<boost::asio::ip::udp::socket>(io_);
    p.socket->assign(boost::asio::ip::udp::v6(), fd);
    ports_.push_back(std::move(p));
  }
}

AsioEndpoint::~AsioEndpoint() {
  Stop();
  for (auto& [key, fd] : tx_sockets_) close(fd);
}

void AsioEndpoint::SetRoutes(uint32_t qpn, const std::vector<EvRoute>& routes) {
  std::vector<Route> resolved;
  for (const EvRoute& r : routes) {
    size_t port = ports_.size();
    for (size_t i = 0; i < ports_.size(); ++i)
      if (ports_[i].spec.plane == r.plane) port = i;
    if (port == ports_.size()) throw NetnsError("no port for plane " + std::to_string(r.plane));
    Route out;
    out.destination = ParseIpv6(r.destination, config_.udp_port);
    if (config_.ev_mode == EvMode::kSrv6) {
      out.fd = ports_[port].socket->native_handle();
    } else {
      auto key = std::make_tuple(port, r.udp_source_port, r.destination);
      auto it = tx_sockets_.find(key);
      if (it == tx_sockets_.end()) {
        UdpSocketOptions o;
        o.netns = ports_[port].spec.netns;
        o.local_address = ports_[port].spec.local_address;
        o.local_port = r.udp_source_port;
        o.connect_address = r.destination;
        o.connect_port = config_.udp_port;
        o.buffer_bytes = config_.socket_buffer_bytes;
        o.zero_checksum = !config_.segmentation_offload;
        it = tx_sockets_.emplace(key, OpenUdpSocket(o)).first;
        if (config_.segmentation_offload && SocketSupportsGso(it->second)) gso_sockets_.insert(it->second);
      }
      out.fd = it->second;
      out.connected = true;
    }
    resolved.push_back(out);
  }
  routes_[qpn] = std::move(resolved);
}

Timestamp AsioEndpoint::Now() {
  return Timestamp::FromNanoseconds(std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::steady_clock::now().time_since_epoch()).count());
}

void AsioEndpoint::Start() {
  running_ = true;
  for (size_t i = 0; i < ports_.size(); ++i) WaitReadable(i);
  Kick();
}

void AsioEndpoint::Stop() {
  running_ = false;
  boost::system::error_code ec;
  timer_.cancel();
  for (auto& p : ports_)
    if (p.socket) p.socket->cancel(ec);
}

void AsioEndpoint::Kick() {
  Flush();
  ArmTimer();
}

void AsioEndpoint::WaitReadable(size_t port) {
  ports_[port].socket->async_wait(boost::asio::ip::udp::socket::wait_read,
                                  [this, port](const boost::system::error_code& ec) {
                                    if (ec || !running_) return;
                                    OnReadable(port);
                                    WaitReadable(port);
                                  });
}

void AsioEndpoint::OnReadable(size_t port) {
  const int fd = ports_[port].socket->native_handle();
  const size_t batch = config_.batch;
  std::vector<mmsghdr> msgs(batch);
  std::vector<iovec> iov(batch);
  std::vector<unsigned char> control(batch * kUdpOffloadControlBytes);
  // Bounded so that a flood cannot starve our own transmissions and timers.
  for (int round = 0; round < 8; ++round) {
    for (size_t i = 0; i < batch; ++i) {
      iov[i] = {rx_buffers_.get() + i * rx_slot_bytes_, rx_slot_bytes_};
      msgs[i] = {};
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
      msgs[i].msg_hdr.msg_control = control.data() + i * kUdpOffloadControlBytes;
      msgs[i].msg_hdr.msg_controllen = kUdpOffloadControlBytes;
    }
    const int n = recvmmsg(fd, msgs.data(), static_cast<unsigned>(batch), MSG_DONTWAIT, nullptr);
    if (n <= 0) break;
    ++stats_.rx_syscalls;
    const Timestamp now = Now();
    for (int i = 0; i < n; ++i)
      Receive(port, std::span<const uint8_t>(rx_buffers_.get() + i * rx_slot_bytes_, msgs[i].msg_len),
              GroSegmentSize(msgs[i].msg_hdr), now);
    if (on_progress_) on_progress_();
    Flush();
    if (static_cast<size_t>(n) < batch) break;
  }
  ArmTimer();
}

void AsioEndpoint::Receive(size_t port, std::span<const uint8_t> message, size_t segment_bytes, Timestamp now) {
  const DatagramInfo info{ports_[port].spec.plane, false, {}};
  if (segment_bytes == 0 || segment_bytes >= message.size()) {
    ++stats_.rx_datagrams;
    context_.OnDatagram(now, message, info);
    return;
  }
  ++stats_.rx_gro_messages;
  for (size_t at = 0; at < message.size(); at += segment_bytes) {
    ++stats_.rx_datagrams;
    context_.OnDatagram(now, message.subspan(at, std::min(segment_bytes, message.size() - at)), info);
  }
}

void AsioEndpoint::OnTimer() {
  ++stats_.timer_wakeups;
  armed_at_ = Timestamp::Infinite();
  context_.OnTimeout(Now());
  if (on_progress_) on_progress_();
  Flush();
  ArmTimer();
}

void AsioEndpoint::ArmTimer() {
  if (!running_) return;
  ArmEndpointTimer(timer_, context_.NextTimeout(), armed_at_, [this] {
    if (running_) OnTimer();
  });
}

void AsioEndpoint::Flush() {
  while (running_) {
    const Timestamp now = Now();
    size_t count = 0;
    while (count < config_.batch) {
      auto t = context_.PollTransmit(now, std::span<uint8_t>(tx_buffers_.data() + count * kBufferBytes, kBufferBytes));
      if (!t) break;
      auto it = routes_.find(t->qpn);
      if (it == routes_.end() || t->ev >= it->second.size() || t->length == 0) {
        ++stats_.unroutable;
        continue;
      }
      tx_routes_[count] = &it->second[t->ev];
      tx_lengths_[count] = t->length;
      ++count;
    }
    if (count == 0) return;
    SendBatch(count);
    if (count < config_.batch) return;
  }
}

void AsioEndpoint::SendBatch(size_t count) {
  // Group by socket (stable), then one sendmmsg per group; within a group, GSO runs.
  std::vector<size_t> order(count);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return tx_routes_[a]->fd < tx_routes_[b]->fd; });
  std::vector<iovec> iov(count);
  for (size_t k = 0; k < count; ++k) iov[k] = {tx_buffers_.data() + order[k] * kBufferBytes, tx_lengths_[order[k]]};
  std::vector<mmsghdr> msgs;
  std::vector<size_t> packets;  // datagrams per message
  std::vector<unsigned char> control(count * kUdpOffloadControlBytes);
  std::vector<size_t> lengths;
  size_t k = 0;
  while (k < count) {
    const Route* route = tx_routes_[order[k]];
    size_t end = k;
    while (end < count && tx_routes_[order[end]]->fd == route->fd) ++end;
    const bool gso = gso_sockets_.count(route->fd) > 0;
    lengths.assign(end - k, 0);
    for (size_t j = k; j < end; ++j) lengths[j - k] = tx_lengths_[order[j]];
    std::vector<GsoRun> runs;
    if (gso) runs = UdpGsoRuns(lengths);
    else for (size_t j = 0; j < lengths.size(); ++j) runs.push_back({j, 1, lengths[j]});
    msgs.assign(runs.size(), mmsghdr{});
    packets.assign(runs.size(), 0);
    for (size_t m = 0; m < runs.size(); ++m) {
      msghdr& h = msgs[m].msg_hdr;
      h.msg_iov = &iov[k + runs[m].first];
      h.msg_iovlen = runs[m].count;
      packets[m] = runs[m].count;
      // Sockets shared by several EVs (srv6 mode) are unconnected: each message names its own
      // destination. GSO runs exist only on connected sockets, which have one.
      const Route* r = tx_routes_[order[k + runs[m].first]];
      if (!r->connected) {
        h.msg_name = const_cast<sockaddr_in6*>(&r->destination);
        h.msg_namelen = sizeof(sockaddr_in6);
      }
      if (runs[m].count > 1) SetGsoSegment(h, control.data() + m * kUdpOffloadControlBytes, runs[m].segment_bytes);
    }
    size_t m = 0;
    while (m < msgs.size()) {
      const int n = sendmmsg(route->fd, msgs.data() + m, static_cast<unsigned>(msgs.size() - m), MSG_DONTWAIT);
      ++stats_.tx_syscalls;
      if (n <= 0) {
        // EAGAIN, or an ICMP error reported on a connected socket: the datagrams are lost and
        // the transport's loss recovery resends them. A kernel that refuses GSO on this
        // socket (EINVAL, EIO) gets single datagrams from now on.
        if (packets[m] > 1 && (errno == EINVAL || errno == EIO)) gso_sockets_.erase(route->fd);
        stats_.tx_dropped += packets[m];
        ++m;
        continue;
      }
      for (int i = 0; i < n; ++i, ++m) {
        stats_.tx_datagrams += packets[m];
        if (packets[m] > 1) ++stats_.tx_gso_messages;
      }
    }
    k = end;
  }
}

}  // namespace mrclab::mrc
