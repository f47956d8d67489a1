#include "emulator/netns/vty_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mrclab::emulator::netns {

VtyConnection::VtyConnection(const std::string& socket_path) : path_(socket_path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof(addr.sun_path)) throw VtyError("vty socket path too long: " + socket_path);
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd_ < 0) throw VtyError(std::string("socket: ") + std::strerror(errno));
  if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    int saved = errno;
    close(fd_);
    throw VtyError(socket_path + ": " + std::strerror(saved));
  }
}

VtyConnection::~VtyConnection() { close(fd_); }

VtyReply VtyConnection::Send(const std::string& command, std::chrono::milliseconds timeout) {
  const std::string line = command + '\0';
  if (send(fd_, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size()))
    throw VtyError(path_ + ": send: " + std::strerror(errno));
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string buf;
  char chunk[65536];
  for (;;) {
    if (buf.size() >= 4 && buf.compare(buf.size() - 4, 3, std::string(3, '\0')) == 0) break;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) throw VtyError(path_ + ": no answer to '" + command + "'");
    pollfd pfd{fd_, POLLIN, 0};
    int r = poll(&pfd, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw VtyError(path_ + ": connection closed during '" + command + "'");
    buf.append(chunk, static_cast<size_t>(n));
  }
  VtyReply reply;
  reply.status = static_cast<unsigned char>(buf.back());
  reply.output = buf.substr(0, buf.size() - 4);
  return reply;
}

VtyReply VtyCommand(const std::string& socket_path, const std::string& command,
                    std::chrono::milliseconds timeout) {
  VtyConnection connection(socket_path);
  return connection.Send(command, timeout);
}

std::vector<VtyReply> VtyCommands(const std::string& socket_path,
                                  const std::vector<std::string>& commands, bool stop_at_error,
                                  std::chrono::milliseconds timeout) {
  VtyConnection connection(socket_path);
  std::vector<VtyReply> replies;
  for (const std::string& command : commands) {
    replies.push_back(connection.Send(command, timeout));
    if (stop_at_error && replies.back().status != 0) break;
  }
  return replies;
}

}  // namespace mrclab::emulator::netns
