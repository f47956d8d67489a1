#include "emulator/netns/vm_qmp.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace mrclab::emulator::netns {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

class Qmp {
 public:
  explicit Qmp(const std::string& path) : path_(path), deadline_(Clock::now() + std::chrono::seconds(5)) {
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    if (path.size() >= sizeof sa.sun_path) Fail("path too long for a unix socket");
    std::strcpy(sa.sun_path, path.c_str());
    if (fd_ < 0 || connect(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0)
      Fail(std::string(std::strerror(errno)) + " (a VM deployed without QMP? redeploy the lab)");
    Next();  // the greeting
    Execute({{"execute", "qmp_capabilities"}});
  }
  ~Qmp() { close(fd_); }

  // Sends a command and returns its "return", skipping the events that come before it.
  json Execute(const json& command) {
    const std::string line = command.dump() + "\n";
    if (send(fd_, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size()))
      Fail(std::string("send: ") + std::strerror(errno));
    for (;;) {
      const json answer = Next();
      if (answer.contains("error"))
        Fail(command.value("execute", "") + ": " + answer["error"].value("desc", answer["error"].dump()));
      if (answer.contains("return")) return answer["return"];
    }
  }

 private:
  [[noreturn]] void Fail(const std::string& why) const { throw std::runtime_error("qemu monitor " + path_ + ": " + why); }

  json Next() {
    for (;;) {
      if (size_t nl = buffer_.find('\n'); nl != std::string::npos) {
        json j = json::parse(buffer_.substr(0, nl), nullptr, false);
        buffer_.erase(0, nl + 1);
        if (j.is_object()) return j;
        continue;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now()).count();
      pollfd p{fd_, POLLIN, 0};
      if (left <= 0 || poll(&p, 1, static_cast<int>(left)) <= 0) Fail("no answer within 5 s");
      char chunk[4096];
      const ssize_t n = recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) Fail("qemu closed the connection");
      buffer_.append(chunk, n);
    }
  }

  std::string path_;
  Clock::time_point deadline_;
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace

std::string QmpSocketPath(const std::string& vm_dir) { return vm_dir + "/qmp.sock"; }

void QmpSetLink(const std::string& vm_dir, int nic, bool up) {
  Qmp(QmpSocketPath(vm_dir)).Execute({{"execute", "set_link"}, {"arguments", {{"name", "nic" + std::to_string(nic)}, {"up", up}}}});
}

}  // namespace mrclab::emulator::netns
