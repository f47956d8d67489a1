// mrclab-guest: PID 1 of a VM host (a static binary in the VM's initramfs).
//
//   kernel ─► /init (this): /dev /proc /sys, the modules in /modules.order (virtio, 9p),
//     the root filesystem over 9p (tag "rootfs", read-only) with tmpfs where a system writes,
//     mrclab's guest tools over 9p (tag "mrclab", read-only) on /opt,
//     switch root, hostname from mrclab.hostname= ─► agent: requests from the host, one JSON
//     line each, over the virtio-serial ports "mrclab.agent.N" (one per concurrent caller on
//     the host); every command runs in its own process, several at once; each answer is one
//     JSON line on the port its request came from (emulator/netns/vm_guest_agent.h).
//
// Requests:  {"id": N, "op": "ping"}
//            {"id": N, "op": "exec", "argv": [...], "timeout_s": T, "stdin": "..."}
//            {"id": N, "op": "attach", "argv": [...], "timeout_s": T}
// Answers:   {"id": N, "pong": true, "uptime_s": U}
//            {"id": N, "status": S, "stdout": "...", "stderr": "...", "timed_out": B}
//            {"id": N, "error": "..."}   (a request it cannot run: bad JSON, exec failed)
// S is the exit status, or 128 + the signal that ended the command.
//
// attach lends the port to the command: its stdin and stdout are the port itself (non-blocking),
// so the host and the command talk directly, line by line, until the command exits; then the
// agent takes the port back and answers as for exec (stdout ""). The host sends nothing more
// until the command's first line (what it sent before would reach the agent, not the command).
// A command whose host went away reads end of file on its stdin.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxOutput = 8 << 20;  // bytes of stdout and of stderr kept per command
constexpr const char* kPortPrefix = "mrclab.agent.";

void Log(const std::string& text) {
  // The console (ttyS0) is the VM's log file on the host.
  std::fprintf(stderr, "mrclab-guest: %s\n", text.c_str());
}

[[noreturn]] void Die(const std::string& text) {
  Log(text + ": " + std::strerror(errno));
  // PID 1 must not exit (the kernel panics, and qemu ends with -no-reboot): tell, then wait.
  for (;;) pause();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void MountOrDie(const char* source, const char* target, const char* type, unsigned long flags,
                const char* data) {
  mkdir(target, 0755);
  if (mount(source, target, type, flags, data) != 0) Die(std::string("mount ") + type + " on " + target);
}

void LoadModules() {
  std::istringstream order(ReadFile("/modules.order"));
  std::string path;
  while (std::getline(order, path)) {
    if (path.empty()) continue;
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) Die("open " + path);
    if (syscall(SYS_finit_module, fd, "", 0) != 0 && errno != EEXIST) Die("load " + path);
    close(fd);
  }
}

// "mrclab.hostname=h0" from the kernel's command line.
std::string CmdlineValue(const std::string& key) {
  std::istringstream words(ReadFile("/proc/cmdline"));
  std::string word;
  while (words >> word)
    if (word.rfind(key + "=", 0) == 0) return word.substr(key.size() + 1);
  return "";
}

void SwitchToRoot() {
  MountOrDie("devtmpfs", "/dev", "devtmpfs", 0, nullptr);
  MountOrDie("proc", "/proc", "proc", 0, nullptr);
  MountOrDie("sysfs", "/sys", "sysfs", 0, nullptr);
  LoadModules();
  MountOrDie("rootfs", "/newroot", "9p", MS_RDONLY,
             "trans=virtio,version=9p2000.L,cache=loose,msize=262144");
  // mrclab's guest tools (mrclab-rdma), when the host shares them.
  if (mount("mrclab", "/newroot/opt", "9p", MS_RDONLY, "trans=virtio,version=9p2000.L,cache=loose") != 0)
    Log("no guest tools (9p tag mrclab)");
  for (const char* dir : {"/newroot/tmp", "/newroot/run", "/newroot/var/tmp", "/newroot/var/log",
                          "/newroot/var/lib/dhcp", "/newroot/root"})
    if (access(dir, F_OK) == 0) MountOrDie("tmpfs", dir, "tmpfs", 0, "mode=1777");
  for (const char* dir : {"/dev", "/proc", "/sys"})
    if (mount(dir, (std::string("/newroot") + dir).c_str(), nullptr, MS_MOVE, nullptr) != 0)
      Die(std::string("move ") + dir);
  if (chdir("/newroot") != 0) Die("chdir /newroot");
  if (mount(".", "/", nullptr, MS_MOVE, nullptr) != 0) Die("move the root");
  if (chroot(".") != 0 || chdir("/") != 0) Die("chroot");
  MountOrDie("devpts", "/dev/pts", "devpts", 0, nullptr);
  const std::string hostname = CmdlineValue("mrclab.hostname");
  if (!hostname.empty()) sethostname(hostname.c_str(), hostname.size());
  setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 1);
  setenv("HOME", "/root", 1);
}

// The virtio-serial ports named kPortPrefix + N, opened ("/dev/vport1p1", ...); waits until
// the ports the VM has have appeared (they all come with the one virtio-serial device).
std::vector<int> OpenPorts() {
  std::vector<int> ports;
  for (int attempt = 0; attempt < 500 && ports.empty(); ++attempt) {
    if (attempt) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    DIR* dir = opendir("/sys/class/virtio-ports");
    if (!dir) continue;
    std::vector<std::string> devices;
    while (dirent* e = readdir(dir)) {
      std::string name = ReadFile(std::string("/sys/class/virtio-ports/") + e->d_name + "/name");
      while (!name.empty() && name.back() == '\n') name.pop_back();
      if (name.starts_with(kPortPrefix)) devices.push_back(std::string("/dev/") + e->d_name);
    }
    closedir(dir);
    for (const std::string& device : devices) {
      int fd = -1;
      for (int tries = 0; tries < 100 && fd < 0; ++tries) {  // devtmpfs makes the node shortly after sysfs
        fd = open(device.c_str(), O_RDWR | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (fd < 0) Die("open " + device);
      ports.push_back(fd);
    }
  }
  if (ports.empty()) {
    errno = ENOENT;
    Die(std::string("no virtio-serial port named ") + kPortPrefix + "N");
  }
  return ports;
}

struct Command {
  nlohmann::json id;
  size_t port = 0;  // index of the port the request came from, where the answer goes
  pid_t pid = -1;
  bool attached = false;   // the command has the port (stdin and stdout)
  int out = -1, err = -1;  // pipes, -1 once at EOF
  std::string stdout_text, stderr_text;
  Clock::time_point deadline;
  bool timed_out = false;
  bool exited = false;
  int status = 0;
};

class Agent {
 public:
  explicit Agent(std::vector<int> ports)
      : ports_(std::move(ports)),
        buffers_(ports_.size()),
        pending_(ports_.size()),
        hung_until_(ports_.size()),
        lent_(ports_.size(), false) {}

  [[noreturn]] void Run() {
    for (;;) {
      const Clock::time_point now = Clock::now();
      std::vector<pollfd> fds;
      for (size_t p = 0; p < ports_.size(); ++p) {
        // A port with no host connected polls readable and hung up at once: it is left out
        // (fd -1) for kHungRecheck after each time it was found so, instead of spinning on it.
        // A port lent to an attached command is its, not ours.
        const int fd = now < hung_until_[p] || lent_[p] ? -1 : ports_[p];
        fds.push_back({fd, static_cast<short>(POLLIN | (pending_[p].empty() ? 0 : POLLOUT)), 0});
      }
      for (auto& [pid, c] : commands_) {
        if (c.out >= 0) fds.push_back({c.out, POLLIN, 0});
        if (c.err >= 0) fds.push_back({c.err, POLLIN, 0});
      }
      poll(fds.data(), fds.size(), static_cast<int>(kHungRecheck.count()));
      for (size_t p = 0; p < ports_.size(); ++p) {
        if (fds[p].revents & (POLLIN | POLLHUP)) Read(p);
        if (fds[p].revents & POLLOUT) Flush(p);
      }
      for (size_t i = ports_.size(); i < fds.size(); ++i)
        if (fds[i].revents & (POLLIN | POLLHUP)) Drain(fds[i].fd);
      Reap();
    }
  }

 private:
  static constexpr std::chrono::milliseconds kHungRecheck{20};

  // Reads what the port's host sent and handles each full line. End of file means no host is
  // connected: its asker went away, so what it sent mid-line and what is still to be written
  // to it are dropped (a write would wait for the next host to connect).
  void Read(size_t p) {
    char chunk[65536];
    const ssize_t n = read(ports_[p], chunk, sizeof chunk);
    if (n < 0) return;  // EAGAIN, EINTR: poll again
    if (n == 0) {
      buffers_[p].clear();
      pending_[p].clear();
      hung_until_[p] = Clock::now() + kHungRecheck;
      return;
    }
    std::string& buffer = buffers_[p];
    buffer.append(chunk, n);
    for (size_t nl; (nl = buffer.find('\n')) != std::string::npos;) {
      std::string line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      if (!line.empty()) Handle(p, line);
    }
  }

  // Answers are queued per port and written without blocking (ports are O_NONBLOCK).
  void Send(size_t port, const nlohmann::json& answer) {
    pending_[port] += answer.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    Flush(port);
  }

  void Flush(size_t port) {
    std::string& out = pending_[port];
    while (!out.empty()) {
      const ssize_t n = write(ports_[port], out.data(), out.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // full, or no host: POLLOUT or POLLHUP will tell
      out.erase(0, n);
    }
  }

  void Handle(size_t port, const std::string& line) {
    nlohmann::json request;
    try {
      request = nlohmann::json::parse(line);
    } catch (const std::exception& e) {
      Send(port, {{"id", nullptr}, {"error", std::string("bad request: ") + e.what()}});
      return;
    }
    const nlohmann::json id = request.value("id", nlohmann::json());
    const std::string op = request.value("op", "");
    if (op == "ping") {
      timespec up{};
      clock_gettime(CLOCK_BOOTTIME, &up);
      Send(port, {{"id", id}, {"pong", true}, {"uptime_s", up.tv_sec + up.tv_nsec / 1e9}});
      return;
    }
    if ((op != "exec" && op != "attach") || !request.contains("argv") || !request["argv"].is_array() ||
        request["argv"].empty()) {
      Send(port, {{"id", id}, {"error", "expected op ping, or op exec or attach with a non-empty argv"}});
      return;
    }
    std::vector<std::string> argv;
    for (const auto& a : request["argv"]) argv.push_back(a.is_string() ? a.get<std::string>() : a.dump());
    Start(port, id, argv, request.value("timeout_s", 60.0), request.value("stdin", std::string()), op == "attach");
  }

  void Start(size_t port, const nlohmann::json& id, const std::vector<std::string>& argv, double timeout_s,
             const std::string& input, bool attach) {
    int out[2], err[2], in[2], ready[2];
    if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(in, O_CLOEXEC) || pipe2(ready, O_CLOEXEC)) {
      Send(port, {{"id", id}, {"error", std::string("pipe: ") + std::strerror(errno)}});
      return;
    }
    pid_t pid = fork();
    if (pid == 0) {
      setsid();
      dup2(attach ? ports_[port] : in[0], 0);
      dup2(attach ? ports_[port] : out[1], 1);
      dup2(err[1], 2);
      std::vector<char*> args;
      for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execvp(args[0], args.data());
      const int e = errno;
      (void)!write(ready[1], &e, sizeof e);
      _exit(127);
    }
    close(out[1]);
    close(err[1]);
    close(in[0]);
    close(ready[1]);
    int exec_errno = 0;
    const bool exec_failed = pid > 0 && read(ready[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno;
    close(ready[0]);
    if (pid < 0 || exec_failed) {
      Send(port, {{"id", id}, {"error", argv[0] + ": " + std::strerror(pid < 0 ? errno : exec_errno)}});
      close(out[0]);
      close(err[0]);
      close(in[1]);
      return;
    }
    // Small inputs only (a pipe's buffer): enough for configuration text.
    (void)!write(in[1], input.data(), std::min<size_t>(input.size(), 65536));
    close(in[1]);
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    Command c;
    c.id = id;
    c.port = port;
    c.pid = pid;
    c.attached = attach;
    if (attach) {
      lent_[port] = true;
      buffers_[port].clear();
    }
    c.out = out[0];
    c.err = err[0];
    c.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
    commands_[pid] = std::move(c);
  }

  void Drain(int fd) {
    for (auto& [pid, c] : commands_) {
      if (fd != c.out && fd != c.err) continue;
      std::string& text = fd == c.out ? c.stdout_text : c.stderr_text;
      char chunk[65536];
      ssize_t n;
      while ((n = read(fd, chunk, sizeof chunk)) > 0)
        if (text.size() < kMaxOutput) text.append(chunk, std::min<size_t>(n, kMaxOutput - text.size()));
      if (n == 0) {
        close(fd);
        (fd == c.out ? c.out : c.err) = -1;
      }
      return;
    }
  }

  void Reap() {
    int status;
    pid_t pid;
    // PID 1 also reaps orphans whose parents did not.
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
      auto it = commands_.find(pid);
      if (it == commands_.end()) continue;
      it->second.exited = true;
      it->second.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    const auto now = Clock::now();
    for (auto it = commands_.begin(); it != commands_.end();) {
      Command& c = it->second;
      if (!c.exited && now > c.deadline && !c.timed_out) {
        c.timed_out = true;
        kill(-c.pid, SIGKILL);
      }
      // A command that left children holding its pipes is answered once it exits and they close,
      // or at its deadline.
      if (c.exited && ((c.out < 0 && c.err < 0) || now > c.deadline)) {
        for (int fd : {c.out, c.err})
          if (fd >= 0) close(fd);
        if (c.attached) lent_[c.port] = false;
        Send(c.port, {{"id", c.id}, {"status", c.status}, {"stdout", c.stdout_text}, {"stderr", c.stderr_text},
              {"timed_out", c.timed_out}});
        it = commands_.erase(it);
      } else {
        ++it;
      }
    }
  }

  std::vector<int> ports_;
  std::vector<std::string> buffers_;  // per port: what came after its last full line
  std::vector<std::string> pending_;  // per port: answers not written yet
  std::vector<Clock::time_point> hung_until_;  // per port: left out of poll until then
  std::vector<bool> lent_;                     // per port: an attached command has it
  std::map<pid_t, Command> commands_;
};

}  // namespace

int main() {
  if (getpid() == 1) SwitchToRoot();
  signal(SIGPIPE, SIG_IGN);
  std::vector<int> ports = OpenPorts();
  Log("agent on " + std::to_string(ports.size()) + " virtio-serial ports");
  Agent(std::move(ports)).Run();
}
