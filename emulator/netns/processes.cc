#include "emulator/netns/processes.h"

#include <linux/close_range.h>

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <system_error>
#include <thread>

#include "emulator/netns/namespaces.h"

namespace mrclab::emulator::netns {
namespace {

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The task whose /proc stat file this is has exited (zombie, dead or gone).
bool StatSaysExited(const std::string& stat_path) {
  std::string stat = ReadFirstLine(stat_path);
  if (stat.empty()) return true;
  auto close_paren = stat.rfind(')');
  return close_paren == std::string::npos || close_paren + 2 >= stat.size() ||
         stat[close_paren + 2] == 'Z' || stat[close_paren + 2] == 'X';
}

bool IsZombieOrGone(pid_t pid) { return StatSaysExited("/proc/" + std::to_string(pid) + "/stat"); }

}  // namespace

pid_t StartInNamespaces(const std::vector<std::string>& argv, int netns_fd, int uts_fd,
                        const std::string& log_path, const std::vector<int>& pass_fds) {
  // Everything the child needs is prepared before fork(): the child only makes system calls.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  int log_fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) throw std::system_error(errno, std::generic_category(), "open " + log_path);
  int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  // The parent returns only once the child has exec'd (the close-on-exec pipe reads EOF), so
  // the PID it returns already is the program, in its namespaces: destroy can recognise it.
  int exec_pipe[2];
  if (pipe2(exec_pipe, O_CLOEXEC) != 0) {
    close(log_fd);
    close(null_fd);
    throw std::system_error(errno, std::generic_category(), "pipe");
  }
  pid_t pid = fork();
  if (pid < 0) {
    int saved = errno;
    close(log_fd);
    close(null_fd);
    close(exec_pipe[0]);
    close(exec_pipe[1]);
    throw std::system_error(saved, std::generic_category(), "fork " + argv[0]);
  }
  if (pid == 0) {
    int err = 0;
    if (setns(netns_fd, CLONE_NEWNET) != 0 || (uts_fd >= 0 && setns(uts_fd, CLONE_NEWUTS) != 0)) {
      err = errno;
    } else {
      setsid();
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      dup2(null_fd, 0);
      dup2(log_fd, 1);
      dup2(log_fd, 2);
      // pass_fds become 3, 4, ...: first out of the way (above any target), then into place.
      int high[64];
      const int n_pass = static_cast<int>(std::min<size_t>(pass_fds.size(), 64));
      for (int i = 0; i < n_pass; ++i) high[i] = fcntl(pass_fds[i], F_DUPFD_CLOEXEC, 3 + n_pass);
      for (int i = 0; i < n_pass; ++i) dup2(high[i], 3 + i);
      // Nothing else of ours reaches the daemon (a drill's sockets, say): only 0-2 (and the
      // passed files) survive exec.
      close_range(3 + n_pass, ~0U, CLOSE_RANGE_CLOEXEC);
      execv(args[0], args.data());
      err = errno;
    }
    ssize_t ignored = write(exec_pipe[1], &err, sizeof(err));
    (void)ignored;
    _exit(127);
  }
  close(log_fd);
  close(null_fd);
  close(exec_pipe[1]);
  int child_errno = 0;
  ssize_t n;
  while ((n = read(exec_pipe[0], &child_errno, sizeof(child_errno))) < 0 && errno == EINTR) {
  }
  close(exec_pipe[0]);
  if (n > 0) {
    waitpid(pid, nullptr, 0);
    throw std::system_error(child_errno, std::generic_category(), "start " + argv[0]);
  }
  return pid;
}

int RunAndWait(const std::vector<std::string>& argv, std::string* output) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = fork();
  if (pid < 0) throw std::system_error(errno, std::generic_category(), "fork " + argv[0]);
  if (pid == 0) {
    dup2(pipe_fds[1], 1);
    dup2(pipe_fds[1], 2);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  char buf[4096];
  ssize_t n;
  while ((n = read(pipe_fds[0], buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
    if (n > 0 && output) output->append(buf, static_cast<size_t>(n));
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::vector<CommandResult> RunAllAndWait(const std::vector<std::vector<std::string>>& commands, int parallel) {
  std::vector<CommandResult> results(commands.size());
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < commands.size(); i = next++) results[i].status = RunAndWait(commands[i], &results[i].output);
  };
  std::vector<std::thread> threads;
  const size_t n = std::min(commands.size(), static_cast<size_t>(std::max(parallel, 1)));
  for (size_t t = 0; t < n; ++t) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  return results;
}

bool IsOurs(const OwnedProcess& p) {
  if (p.pid <= 1 || IsZombieOrGone(p.pid)) return false;
  const std::string proc = "/proc/" + std::to_string(p.pid);
  if (ReadFirstLine(proc + "/comm") != p.comm.substr(0, 15)) return false;
  if (!p.netns_path.empty()) {
    unsigned long want = NamespaceInode(p.netns_path);
    if (want == 0 || NamespaceInode(proc + "/ns/net") != want) return false;
  }
  return true;
}

namespace {

// Every process's /proc directory and PID.
void ForEachProcess(const std::function<void(const std::filesystem::path&, pid_t)>& fn) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    fn(entry.path(), std::stoi(name));
  }
}

}  // namespace

std::vector<pid_t> ProcessesMentioning(const std::string& text) {
  std::vector<pid_t> out;
  ForEachProcess([&](const std::filesystem::path& dir, pid_t pid) {
    std::ifstream in(dir / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.find(text) != std::string::npos) out.push_back(pid);
  });
  return out;
}

std::vector<pid_t> ProcessesInNetns(const std::set<unsigned long>& netns_inodes) {
  std::vector<pid_t> out;
  ForEachProcess([&](const std::filesystem::path& dir, pid_t pid) {
    if (netns_inodes.count(NamespaceInode(dir.string() + "/ns/net"))) out.push_back(pid);
  });
  return out;
}

int StopProcesses(const std::vector<OwnedProcess>& processes, std::chrono::milliseconds grace) {
  std::vector<pid_t> signalled;
  for (const OwnedProcess& p : processes)
    if (IsOurs(p) && kill(p.pid, SIGTERM) == 0) signalled.push_back(p.pid);
  const auto deadline = std::chrono::steady_clock::now() + grace;
  auto poll_interval = std::chrono::milliseconds(5);
  for (;;) {
    ReapChildren();
    bool any_alive = false;
    for (pid_t pid : signalled)
      if (!IsZombieOrGone(pid)) any_alive = true;
    if (!any_alive || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(poll_interval);
    poll_interval = std::min(poll_interval * 2, std::chrono::milliseconds(50));
  }
  int killed = 0;
  for (pid_t pid : signalled)
    if (!IsZombieOrGone(pid) && kill(pid, SIGKILL) == 0) ++killed;
  ReapChildren();
  return killed;
}

bool AnyThreadRunning(pid_t pid) {
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec))
    if (!StatSaysExited((task.path() / "stat").string())) return true;
  return false;
}

std::vector<std::pair<pid_t, int>> ReapChildren() {
  std::vector<std::pair<pid_t, int>> out;
  int status = 0;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) out.emplace_back(pid, status);
  return out;
}

}  // namespace mrclab::emulator::netns
