#include "emulator/netns/vm_guest_agent.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <random>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "emulator/netns/interrupt.h"

namespace mrclab::emulator::netns {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

uint64_t NewId() {
  static std::atomic<uint64_t> next{std::random_device{}() * uint64_t{1000003}};
  return ++next & ((uint64_t{1} << 52) - 1);  // exact in a JSON number
}

class Connection {
 public:
  explicit Connection(const std::string& path) {
    fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    if (path.size() >= sizeof(sa.sun_path)) throw std::runtime_error(path + ": path too long for a unix socket");
    std::strcpy(sa.sun_path, path.c_str());
    if (fd_ < 0 || connect(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0)
      throw std::runtime_error("guest agent " + path + ": " + std::strerror(errno));
  }
  ~Connection() { close(fd_); }

  void Send(const json& request) {
    const std::string line = request.dump() + "\n";
    if (send(fd_, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size()))
      throw std::runtime_error(std::string("guest agent: send: ") + std::strerror(errno));
  }

  // The answer with this id, or nothing by the deadline (answers to others are skipped: an
  // earlier caller that gave up may have left its answer behind).
  std::optional<json> Answer(uint64_t id, Clock::time_point deadline) {
    for (;;) {
      for (size_t nl; (nl = buffer_.find('\n')) != std::string::npos;) {
        const json answer = json::parse(buffer_.substr(0, nl), nullptr, false);
        buffer_.erase(0, nl + 1);
        if (!answer.is_discarded() && answer.is_object() && answer.value("id", json()) == json(id)) return answer;
      }
      ThrowIfInterrupted();
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(std::min<long>(left, 200))) <= 0) continue;
      char chunk[65536];
      const ssize_t n = recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) throw std::runtime_error("guest agent closed the connection (the VM stopped?)");
      buffer_.append(chunk, n);
    }
  }

 private:
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace

std::string AgentSocketPath(const std::string& vm_dir, int port) {
  return vm_dir + "/agent." + std::to_string(port) + ".sock";
}

namespace {

// An exclusive flock on VM_DIR/agent.N.lock of the first free port, held while it lives.
class PortLock {
 public:
  PortLock(const std::string& vm_dir, Clock::time_point deadline) {
    for (;;) {
      for (int port = 0; port < kAgentPorts; ++port) {
        const std::string path = vm_dir + "/agent." + std::to_string(port) + ".lock";
        fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd_ < 0) throw std::runtime_error("guest agent: " + path + ": " + std::strerror(errno));
        if (flock(fd_, LOCK_EX | LOCK_NB) == 0) {
          port_ = port;
          return;
        }
        close(fd_);
      }
      ThrowIfInterrupted();
      if (Clock::now() >= deadline)
        throw std::runtime_error("guest agent: all " + std::to_string(kAgentPorts) + " ports of " + vm_dir +
                                 " stayed busy (as many commands running in the VM)");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~PortLock() { close(fd_); }
  PortLock(const PortLock&) = delete;
  PortLock& operator=(const PortLock&) = delete;
  int port() const { return port_; }

 private:
  int fd_ = -1, port_ = 0;
};

}  // namespace

double GuestAgent::WaitReady(Clock::time_point deadline) const {
  std::string last = "no answer";
  while (Clock::now() < deadline) {
    try {
      const PortLock lock(vm_dir_, deadline);
      Connection c(AgentSocketPath(vm_dir_, lock.port()));
      while (Clock::now() < deadline) {
        const uint64_t id = NewId();
        c.Send({{"id", id}, {"op", "ping"}});
        if (std::optional<json> answer = c.Answer(id, std::min(deadline, Clock::now() + std::chrono::milliseconds(250))))
          return answer->value("uptime_s", 0.0);
      }
    } catch (const std::runtime_error& e) {
      last = e.what();  // qemu has not made its socket yet, or the VM is still booting
    }
    ThrowIfInterrupted();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  throw std::runtime_error("the guest agent did not answer before the deadline (" + last + ")");
}

GuestResult GuestAgent::Exec(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                             const std::string& input) const {
  // The agent kills the command at its timeout and answers then; the margin covers a slow guest.
  const auto deadline = Clock::now() + timeout + std::chrono::seconds(10);
  const PortLock lock(vm_dir_, deadline);
  Connection c(AgentSocketPath(vm_dir_, lock.port()));
  const uint64_t id = NewId();
  c.Send({{"id", id}, {"op", "exec"}, {"argv", argv}, {"timeout_s", timeout.count() / 1000.0}, {"stdin", input}});
  const std::optional<json> answer = c.Answer(id, deadline);
  if (!answer) throw std::runtime_error("guest agent: no answer to " + argv[0] + " (the VM is stuck?)");
  if (answer->contains("error")) throw std::runtime_error("guest agent: " + answer->value("error", std::string()));
  return {answer->value("status", -1), answer->value("stdout", std::string()), answer->value("stderr", std::string()),
          answer->value("timed_out", false)};
}

}  // namespace mrclab::emulator::netns
