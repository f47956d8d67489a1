// mrclab-udp-relay: a VM host's UDP sockets for our MRC core. The core's endpoint
// (mrc/asio/relay_endpoint.h) runs in the harness, as it does for namespace hosts; its datagrams
// enter and leave the fabric here, through the guest's own kernel and NICs, like the kernel
// RC's packets. Started through the guest agent's attach (stdin and stdout are the agent port):
//
//   ◄ {"type": "ready", "pid": P}   (the session ends it by PID: vm_guest_agent.h)
//   ► {"ports": [{"plane": P, "address": "A"}, ...], "udp_port": 4791}   one line, then binary:
//   ◄ {"type": "relaying"}
//   ► frame  u16 length | u8 plane | u16 source port (0: the port's own socket) | 16 B destination | datagram
//   ◄ frame  u16 length | u8 plane | u8 0 | datagram
//   (little-endian; destination port: udp_port)
//
// Each port's socket is bound to [address]:udp_port and receives; a source port other than 0
// (udp EVs) gets a socket of its own bound to it. Checksums are zero (UDP_NO_CHECK6_TX/RX), as
// the core's namespace sockets send them. What the host does not take fast enough is dropped
// (8 MiB queued), as a full socket buffer drops; the transport recovers. End of file on stdin:
// exit.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "emulator/netns/guest/port_output.h"

#ifndef UDP_NO_CHECK6_TX
#define UDP_NO_CHECK6_TX 101
#define UDP_NO_CHECK6_RX 102
#endif

namespace {

using nlohmann::json;

constexpr size_t kToHostHeader = 4, kFromHostHeader = 21;
constexpr size_t kMaxQueued = 8 << 20;

mrclab::guest::PortOutput out;

[[noreturn]] void Fail(const std::string& what) { out.Fail(what + ": " + std::strerror(errno)); }

sockaddr_in6 Address(const std::string& text, uint16_t port) {
  sockaddr_in6 sa{};
  sa.sin6_family = AF_INET6;
  sa.sin6_port = htons(port);
  if (inet_pton(AF_INET6, text.c_str(), &sa.sin6_addr) != 1) {
    errno = EINVAL;
    Fail("address " + text);
  }
  return sa;
}

int Socket(const std::string& address, uint16_t port) {
  const int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int one = 1, buffer = 4 << 20;
  sockaddr_in6 sa = Address(address, port);
  if (fd < 0 || setsockopt(fd, SOL_UDP, UDP_NO_CHECK6_TX, &one, sizeof one) != 0 ||
      setsockopt(fd, SOL_UDP, UDP_NO_CHECK6_RX, &one, sizeof one) != 0 ||
      setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer, sizeof buffer) != 0 ||
      setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buffer, sizeof buffer) != 0 ||
      bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0)
    Fail("socket on [" + address + "]:" + std::to_string(port));
  return fd;
}

struct Port {
  int plane = 0;
  std::string address;
  int fd = -1;  // bound to udp_port: receives, and sends what has no source port of its own
};

class Relay {
 public:
  Relay(const json& config) : udp_port_(config.value("udp_port", 4791)) {
    for (const json& p : config.at("ports")) {
      Port port{p.at("plane"), p.at("address"), -1};
      port.fd = Socket(port.address, udp_port_);
      ports_.push_back(port);
    }
  }

  void Run(std::string in) {
    std::vector<uint8_t> datagram(65536);
    FromHost(in);
    for (;;) {
      std::vector<pollfd> fds = {{0, POLLIN, 0}, {1, static_cast<short>(out.Waiting() ? POLLOUT : 0), 0}};
      for (const Port& p : ports_) fds.push_back({p.fd, POLLIN, 0});
      poll(fds.data(), fds.size(), 1000);
      out.Flush();
      if (fds[0].revents & (POLLIN | POLLHUP)) {
        char chunk[65536];
        const ssize_t n = read(0, chunk, sizeof chunk);
        if (n == 0) return;  // the host went away
        if (n > 0) in.append(chunk, n);
        FromHost(in);
      }
      for (size_t i = 0; i < ports_.size(); ++i) {
        if (!(fds[2 + i].revents & POLLIN)) continue;
        ssize_t n;
        while ((n = recv(ports_[i].fd, datagram.data(), datagram.size(), 0)) > 0) {
          if (out.queued() > kMaxQueued) continue;  // the host is behind: drop, as a full buffer does
          const uint8_t header[kToHostHeader] = {static_cast<uint8_t>(n & 0xff), static_cast<uint8_t>(n >> 8),
                                                 static_cast<uint8_t>(ports_[i].plane), 0};
          out.Append(header, kToHostHeader);
          out.Append(datagram.data(), n);
        }
      }
      out.Flush();
    }
  }

 private:
  // Sends every whole frame in `in` and keeps the rest.
  void FromHost(std::string& in) {
    size_t at = 0;
    while (in.size() - at >= kFromHostHeader) {
      const auto* h = reinterpret_cast<const uint8_t*>(in.data() + at);
      const size_t length = h[0] | (h[1] << 8);
      if (in.size() - at < kFromHostHeader + length) break;
      const int plane = h[2];
      const uint16_t source_port = static_cast<uint16_t>(h[3] | (h[4] << 8));
      sockaddr_in6 to{};
      to.sin6_family = AF_INET6;
      to.sin6_port = htons(udp_port_);
      std::memcpy(&to.sin6_addr, h + 5, 16);
      if (const int fd = SendSocket(plane, source_port); fd >= 0)
        sendto(fd, h + kFromHostHeader, length, 0, reinterpret_cast<sockaddr*>(&to), sizeof to);  // a full buffer drops it
      at += kFromHostHeader + length;
    }
    in.erase(0, at);
  }

  int SendSocket(int plane, uint16_t source_port) {
    for (const Port& p : ports_) {
      if (p.plane != plane) continue;
      if (source_port == 0 || source_port == udp_port_) return p.fd;
      auto [it, added] = send_.try_emplace({plane, source_port}, -1);
      if (added) it->second = Socket(p.address, source_port);
      return it->second;
    }
    return -1;  // no port on that plane: the host's plan and ours disagree; nothing to send on
  }

  uint16_t udp_port_;
  std::vector<Port> ports_;
  std::map<std::pair<int, uint16_t>, int> send_;  // (plane, source port) -> socket
};

}  // namespace

int main() {
  out.Line({{"type", "ready"}, {"pid", getpid()}});
  std::string in;
  size_t nl;
  while ((nl = in.find('\n')) == std::string::npos) {
    pollfd p{0, POLLIN, 0};
    poll(&p, 1, 1000);
    char chunk[4096];
    const ssize_t n = read(0, chunk, sizeof chunk);
    if (n == 0) return 0;
    if (n > 0) in.append(chunk, n);
  }
  const json config = json::parse(in.substr(0, nl), nullptr, false);
  in.erase(0, nl + 1);
  if (!config.is_object() || !config.contains("ports")) {
    errno = EINVAL;
    Fail("expected {\"ports\": [...]}");
  }
  try {
    Relay relay(config);
    out.Line({{"type", "relaying"}});
    relay.Run(std::move(in));
  } catch (const json::exception& e) {
    errno = EINVAL;
    Fail(std::string("bad configuration: ") + e.what());
  }
  return 0;
}
