// The host's side of a VM host's guest agent (mrclab-guest, emulator/netns/guest/): one JSON line
// per request and per answer over one of the VM's kAgentPorts virtio-serial ports, which qemu
// serves as unix sockets (VM_DIR/agent.N.sock). qemu serves one connection per socket at a time,
// so a call first takes a free port (an exclusive flock on VM_DIR/agent.N.lock, released when the
// call ends or its process dies), then connects, asks, waits for its own answer and disconnects.
// Up to kAgentPorts calls run at once per VM (more wait for a port); the agent runs each command
// in its own process.
//
//   mrclab exec host0 -- A ─► flock agent.0.lock ─► agent.0.sock ─► virtio port mrclab.agent.0 ─┐
//   mrclab exec host0 -- B ─► flock agent.1.lock ─► agent.1.sock ─► virtio port mrclab.agent.1 ─┴► agent
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace mrclab::emulator::netns {

struct GuestResult {
  int status = 0;  // exit status, or 128 + signal
  std::string out, err;
  bool timed_out = false;
};

inline constexpr int kAgentPorts = 8;
// "VM_DIR/agent.N.sock": the unix socket qemu serves for the guest's port "mrclab.agent.N".
std::string AgentSocketPath(const std::string& vm_dir, int port);

// A command in the guest that talks with the host one JSON line at a time, for as long as it
// runs (the agent's op attach: the command's stdin and stdout are the agent port, which the
// session holds). A command whose first line gives its "pid" is killed when the session is
// destroyed, which waits (up to 10 s) until the agent has reaped it and taken the port back;
// without a pid the command reads end of file once the session disconnects.
class GuestSession {
 public:
  struct Impl;
  explicit GuestSession(std::unique_ptr<Impl> impl);
  ~GuestSession();
  GuestSession(GuestSession&&) noexcept;

  // Throws std::runtime_error when the guest cannot be written to.
  void Send(const nlohmann::json& message);
  // The command's next line (parsed), or nothing by the deadline. Throws std::runtime_error
  // naming the command once it has ended (its exit status and stderr) or the VM went away.
  std::optional<nlohmann::json> Receive(std::chrono::steady_clock::time_point deadline);
  // For a command that goes on in binary after its lines: a duplicate of the connection's fd
  // (the caller's to close) and what was read past the last line Receive returned. The session
  // still holds the agent port until destroyed.
  std::pair<int, std::string> TakeStream();

 private:
  std::unique_ptr<Impl> impl_;
};

class GuestAgent {
 public:
  explicit GuestAgent(std::string vm_dir) : vm_dir_(std::move(vm_dir)) {}

  // Pings (on port 0) until the agent answers; returns the guest's uptime in seconds. Throws
  // std::runtime_error at the deadline.
  double WaitReady(std::chrono::steady_clock::time_point deadline) const;

  // Runs argv in the guest (PATH is searched) and waits for it; a command still running after
  // `timeout` is killed (timed_out). Throws std::runtime_error when the agent cannot be reached
  // or cannot start the command.
  GuestResult Exec(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                   const std::string& input = "") const;

  // Starts argv in the guest attached to a port of its own (killed after `timeout`) and waits
  // for its first line, which it returns with the session. Throws std::runtime_error when the
  // agent cannot be reached, the command cannot start or ends first, or no line comes by the
  // deadline.
  std::pair<GuestSession, nlohmann::json> Attach(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                                 std::chrono::steady_clock::time_point first_line_by) const;

 private:
  std::string vm_dir_;
};

}  // namespace mrclab::emulator::netns
