// Client for an FRR daemon's vty unix socket: the protocol vtysh speaks. A command is sent
// NUL-terminated; the daemon answers with its output followed by three NUL bytes and a status
// byte (0 = success). Used to poll `show ... json` without starting a vtysh process per poll,
// and by faults to enter configuration.
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace mrclab::emulator::netns {

class VtyError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct VtyReply {
  std::string output;
  int status = 0;  // FRR's CMD_* code: 0 success, 1 warning, ...
};

// One connection to a daemon's vty socket; commands on it run in order and the node a command
// enters persists for the next (a connection starts in view mode: "enable", then "configure
// terminal"...). Throws VtyError when the socket is absent or refuses, and from Send when the
// daemon does not answer within the timeout or closes the connection.
class VtyConnection {
 public:
  explicit VtyConnection(const std::string& socket_path);
  ~VtyConnection();
  VtyConnection(const VtyConnection&) = delete;
  VtyConnection& operator=(const VtyConnection&) = delete;
  VtyReply Send(const std::string& command,
                std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));

 private:
  std::string path_;
  int fd_ = -1;
};

// One connection, one command. Throws VtyError when the socket is absent, refuses, or the
// daemon does not answer within the timeout.
VtyReply VtyCommand(const std::string& socket_path, const std::string& command,
                    std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));

// One connection, several commands in order: the node a command enters persists for the next
// ones, as in vtysh (a connection starts in view mode: "enable", then "configure terminal"...).
// Stops after the first command whose status is not 0 when stop_at_error; returns one reply
// per command sent. The timeout applies to each command.
std::vector<VtyReply> VtyCommands(const std::string& socket_path,
                                  const std::vector<std::string>& commands, bool stop_at_error,
                                  std::chrono::milliseconds timeout = std::chrono::milliseconds(2000));

}  // namespace mrclab::emulator::netns
