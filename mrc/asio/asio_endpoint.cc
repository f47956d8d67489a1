#include "mrc/asio/asio_endpoint.h"

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <numeric>

#include "mrc/asio/netns.h"

namespace mrclab::mrc {

AsioEndpoint::AsioEndpoint(boost::asio::io_context& io, const AsioEndpointConfig& config)
    : io_(io), config_(config), context_(config.context), timer_(io) {
  config_.batch = std::clamp<size_t>(config_.batch, 1, 256);
  tx_buffers_.resize(config_.batch * kBufferBytes);
  rx_buffers_.resize(config_.batch * kBufferBytes);
  tx_routes_.resize(config_.batch);
  tx_lengths_.resize(config_.batch);
  for (const auto& spec : config_.ports) {
    UdpSocketOptions o;
    o.netns = spec.netns;
    o.local_address = spec.local_address;
    o.local_port = config_.udp_port;
    o.buffer_bytes = config_.socket_buffer_bytes;
    const int fd = OpenUdpSocket(o);
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
        it = tx_sockets_.emplace(key, OpenUdpSocket(o)).first;
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
  // Bounded so that a flood cannot starve our own transmissions and timers.
  for (int round = 0; round < 8; ++round) {
    for (size_t i = 0; i < batch; ++i) {
      iov[i] = {rx_buffers_.data() + i * kBufferBytes, kBufferBytes};
      msgs[i] = {};
      msgs[i].msg_hdr.msg_iov = &iov[i];
      msgs[i].msg_hdr.msg_iovlen = 1;
    }
    const int n = recvmmsg(fd, msgs.data(), static_cast<unsigned>(batch), MSG_DONTWAIT, nullptr);
    if (n <= 0) break;
    ++stats_.rx_syscalls;
    const Timestamp now = Now();
    for (int i = 0; i < n; ++i) {
      ++stats_.rx_datagrams;
      context_.OnDatagram(now, std::span<const uint8_t>(rx_buffers_.data() + i * kBufferBytes, msgs[i].msg_len),
                          DatagramInfo{ports_[port].spec.plane, false});
    }
    if (on_progress_) on_progress_();
    Flush();
    if (static_cast<size_t>(n) < batch) break;
  }
  ArmTimer();
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
  const Timestamp deadline = context_.NextTimeout();
  if (deadline.IsInfinite() || deadline >= armed_at_) return;
  armed_at_ = deadline;
  timer_.expires_at(std::chrono::steady_clock::time_point(std::chrono::nanoseconds(deadline.nanoseconds())));
  timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec || !running_) return;  // aborted waits belong to a superseded deadline
    OnTimer();
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
  // Group by socket (stable), then one sendmmsg per group.
  std::vector<size_t> order(count);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return tx_routes_[a]->fd < tx_routes_[b]->fd; });
  std::vector<mmsghdr> msgs(count);
  std::vector<iovec> iov(count);
  for (size_t k = 0; k < count; ++k) {
    const size_t i = order[k];
    iov[k] = {tx_buffers_.data() + i * kBufferBytes, tx_lengths_[i]};
    msgs[k] = {};
    msgs[k].msg_hdr.msg_iov = &iov[k];
    msgs[k].msg_hdr.msg_iovlen = 1;
    if (!tx_routes_[i]->connected) {
      msgs[k].msg_hdr.msg_name = const_cast<sockaddr_in6*>(&tx_routes_[i]->destination);
      msgs[k].msg_hdr.msg_namelen = sizeof(sockaddr_in6);
    }
  }
  size_t k = 0;
  while (k < count) {
    const int fd = tx_routes_[order[k]]->fd;
    size_t end = k;
    while (end < count && tx_routes_[order[end]]->fd == fd) ++end;
    while (k < end) {
      const int n = sendmmsg(fd, msgs.data() + k, static_cast<unsigned>(end - k), MSG_DONTWAIT);
      ++stats_.tx_syscalls;
      if (n <= 0) {
        // EAGAIN, or an ICMP error reported on a connected socket: the datagram is lost and
        // the transport's loss recovery resends it.
        ++stats_.tx_dropped;
        ++k;
        continue;
      }
      stats_.tx_datagrams += n;
      k += n;
    }
  }
}

}  // namespace mrclab::mrc
