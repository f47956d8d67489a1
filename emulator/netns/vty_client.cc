#include "emulator/netns/vty_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mrclab::emulator::netns {

VtyReply VtyCommand(const std::string& socket_path, const std::string& command,
                    std::chrono::milliseconds timeout) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path.size() >= sizeof(addr.sun_path))
    throw VtyError("vty socket path too long: " + socket_path);
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw VtyError(std::string("socket: ") + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { close(fd); }
  } closer{fd};
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    throw VtyError(socket_path + ": " + std::strerror(errno));
  const std::string line = command + '\0';
  if (send(fd, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size()))
    throw VtyError(socket_path + ": send: " + std::strerror(errno));

  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string buf;
  char chunk[65536];
  for (;;) {
    if (buf.size() >= 4 && buf.compare(buf.size() - 4, 3, std::string(3, '\0')) == 0) break;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) throw VtyError(socket_path + ": no answer to '" + command + "'");
    pollfd pfd{fd, POLLIN, 0};
    int r = poll(&pfd, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    ssize_t n = recv(fd, chunk, sizeof(chunk), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw VtyError(socket_path + ": connection closed during '" + command + "'");
    buf.append(chunk, static_cast<size_t>(n));
  }
  VtyReply reply;
  reply.status = static_cast<unsigned char>(buf.back());
  reply.output = buf.substr(0, buf.size() - 4);
  return reply;
}

}  // namespace mrclab::emulator::netns
