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
#include <utility>

#include <nlohmann/json.hpp>

#include "emulator/netns/interrupt.h"

namespace mrclab::emulator::netns {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// An answer carries a command's output (the agent keeps 8 MiB of each stream), JSON-escaped.
constexpr size_t kMaxLineBytes = 64 << 20;

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
  int fd() const { return fd_; }
  std::string TakeBuffer() { return std::exchange(buffer_, {}); }

  void Send(const json& request) {
    const std::string line = request.dump() + "\n";
    if (send(fd_, line.data(), line.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(line.size()))
      throw std::runtime_error(std::string("guest agent: send: ") + std::strerror(errno));
  }

  // The answer with this id, or nothing by the deadline (answers to others are skipped: an
  // earlier caller that gave up may have left its answer behind).
  std::optional<json> Answer(uint64_t id, Clock::time_point deadline) {
    while (std::optional<json> line = NextLine(deadline, true))
      if (line->is_object() && line->value("id", json()) == json(id)) return line;
    return std::nullopt;
  }

  // The next line that is a JSON value, or nothing by the deadline. Only the caller's own
  // thread may be interrupted by Ctrl-C (`interruptible`): a session's reader is not the main one.
  std::optional<json> NextLine(Clock::time_point deadline, bool interruptible) {
    for (;;) {
      for (size_t nl; (nl = buffer_.find('\n')) != std::string::npos;) {
        json line = json::parse(buffer_.substr(0, nl), nullptr, false);
        buffer_.erase(0, nl + 1);
        if (!line.is_discarded()) return line;
      }
      if (interruptible) ThrowIfInterrupted();
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      if (left <= 0) return std::nullopt;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(std::min<long>(left, 200))) <= 0) continue;
      char chunk[65536];
      const ssize_t n = recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) throw std::runtime_error("guest agent closed the connection (the VM stopped?)");
      if (buffer_.size() + n > kMaxLineBytes)
        throw std::runtime_error("the guest sent a line of more than " + std::to_string(kMaxLineBytes >> 20) + " MiB");
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

struct GuestSession::Impl {
  Impl(const std::string& dir, Clock::time_point deadline)
      : vm_dir(dir), lock(dir, deadline), connection(AgentSocketPath(dir, lock.port())) {}
  std::string vm_dir;
  PortLock lock;
  Connection connection;
  uint64_t id = NewId();
  std::string command;
  int pid = 0;  // the command's, from its first line

  // The command ended before the port goes back to the pool. Disconnecting alone would race:
  // the next caller of this port could connect before the command has read its end of file,
  // and its request would reach the command. So: kill it by PID (over another port), wait until
  // the agent has reaped it (which takes the port back; its answer comes to us), then go.
  ~Impl() {
    if (pid <= 0) return;
    const GuestAgent agent(vm_dir);
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    try {
      agent.Exec({"kill", "-KILL", std::to_string(pid)}, std::chrono::seconds(5));
      while (Clock::now() < deadline &&
             agent.Exec({"kill", "-0", std::to_string(pid)}, std::chrono::seconds(5)).status == 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    } catch (const std::exception&) {
      // The VM is gone or stuck: nothing will use the port.
    }
  }
};

GuestSession::GuestSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GuestSession::~GuestSession() = default;
GuestSession::GuestSession(GuestSession&&) noexcept = default;

void GuestSession::Send(const json& message) { impl_->connection.Send(message); }

std::optional<json> GuestSession::Receive(Clock::time_point deadline) {
  std::optional<json> line = impl_->connection.NextLine(deadline, false);
  if (!line || !line->is_object() || line->value("id", json()) != json(impl_->id)) return line;
  // The agent's answer: the command has ended.
  if (line->contains("error")) throw std::runtime_error(impl_->command + ": " + line->value("error", std::string()));
  std::string err = line->value("stderr", std::string());
  while (!err.empty() && err.back() == '\n') err.pop_back();
  throw std::runtime_error(impl_->command + " ended (status " + std::to_string(line->value("status", -1)) + ")" +
                           (err.empty() ? "" : ": " + err));
}

std::pair<int, std::string> GuestSession::TakeStream() {
  const int fd = fcntl(impl_->connection.fd(), F_DUPFD_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("guest session: dup: ") + std::strerror(errno));
  return {fd, impl_->connection.TakeBuffer()};
}

std::pair<GuestSession, json> GuestAgent::Attach(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                                                 Clock::time_point first_line_by) const {
  auto impl = std::make_unique<GuestSession::Impl>(vm_dir_, first_line_by);
  impl->command = argv[0];
  impl->connection.Send({{"id", impl->id}, {"op", "attach"}, {"argv", argv}, {"timeout_s", timeout.count() / 1000.0}});
  GuestSession::Impl* raw = impl.get();
  GuestSession session(std::move(impl));
  std::optional<json> first = session.Receive(first_line_by);
  if (!first) throw std::runtime_error("guest agent: " + argv[0] + " said nothing before the deadline");
  if (first->is_object()) raw->pid = first->value("pid", 0);
  return {std::move(session), std::move(*first)};
}

}  // namespace mrclab::emulator::netns
