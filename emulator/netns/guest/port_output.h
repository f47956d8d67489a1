// What a guest tool attached through the agent (op attach) writes to the host: its stdout is
// the agent's virtio-serial port, non-blocking, so output is queued and written as the port
// takes it (poll for POLLOUT while Waiting()). Shared by mrclab-rc-ranks and mrclab-udp-relay.
#pragma once

#include <poll.h>
#include <unistd.h>

#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

namespace mrclab::guest {

class PortOutput {
 public:
  void Line(const nlohmann::json& j) {
    pending_ += j.dump() + "\n";
    Flush();
  }
  void Append(const void* bytes, size_t size) { pending_.append(static_cast<const char*>(bytes), size); }
  void Flush() {
    while (!pending_.empty()) {
      const ssize_t n = write(1, pending_.data(), pending_.size());
      if (n <= 0) return;  // full (EAGAIN), or no host: poll tells
      pending_.erase(0, n);
    }
  }
  bool Waiting() const { return !pending_.empty(); }
  size_t queued() const { return pending_.size(); }

  // {"type": "error", "message": ...}, written out (up to 5 s), then exit status 1.
  [[noreturn]] void Fail(const std::string& message) {
    Line({{"type", "error"}, {"message", message}});
    for (int i = 0; i < 500 && Waiting(); ++i) {
      pollfd p{1, POLLOUT, 0};
      poll(&p, 1, 10);
      Flush();
    }
    std::exit(1);
  }

 private:
  std::string pending_;
};

}  // namespace mrclab::guest
