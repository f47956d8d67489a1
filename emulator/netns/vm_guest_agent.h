// The host's side of a VM host's guest agent (mrclab-guest, emulator/netns/guest/): one JSON line
// per request and per answer over the VM's virtio-serial port, which qemu serves as a unix socket
// (nodes/HOST/agent.sock). Each call connects, asks, waits for its own answer and disconnects;
// the agent runs each command in its own process, several at once.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace mrclab::emulator::netns {

struct GuestResult {
  int status = 0;  // exit status, or 128 + signal
  std::string out, err;
  bool timed_out = false;
};

class GuestAgent {
 public:
  explicit GuestAgent(std::string socket_path) : socket_path_(std::move(socket_path)) {}

  // Pings until the agent answers; returns the guest's uptime in seconds. Throws
  // std::runtime_error at the deadline.
  double WaitReady(std::chrono::steady_clock::time_point deadline) const;

  // Runs argv in the guest (PATH is searched) and waits for it; a command still running after
  // `timeout` is killed (timed_out). Throws std::runtime_error when the agent cannot be reached
  // or cannot start the command.
  GuestResult Exec(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                   const std::string& input = "") const;

 private:
  std::string socket_path_;
};

}  // namespace mrclab::emulator::netns
