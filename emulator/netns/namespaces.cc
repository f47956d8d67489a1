#include "emulator/netns/namespaces.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <system_error>
#include <thread>

namespace mrclab::emulator::netns {
namespace {

[[noreturn]] void ThrowErrno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

// /run/netns must be a shared mount so that namespaces bound under it are visible from other
// mount namespaces (what iproute2 does too).
void EnsureNetnsDir() {
  if (mkdir(kNetnsDir, 0755) != 0 && errno != EEXIST) ThrowErrno(std::string("mkdir ") + kNetnsDir);
  if (mount("", kNetnsDir, "none", MS_SHARED | MS_REC, nullptr) == 0) return;
  if (errno != EINVAL) ThrowErrno("make /run/netns shared");
  if (mount(kNetnsDir, kNetnsDir, "none", MS_BIND | MS_REC, nullptr) != 0)
    ThrowErrno("bind-mount /run/netns");
  if (mount("", kNetnsDir, "none", MS_SHARED | MS_REC, nullptr) != 0)
    ThrowErrno("make /run/netns shared");
}

void CreateMountPoint(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0);
  if (fd < 0) ThrowErrno("create " + path);
  close(fd);
}

void Unbind(const std::string& path) {
  umount2(path.c_str(), MNT_DETACH);
  unlink(path.c_str());
}

}  // namespace

Fd::~Fd() {
  if (fd_ >= 0) close(fd_);
}

Fd& Fd::operator=(Fd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

std::string NetnsPath(const std::string& name) { return std::string(kNetnsDir) + "/" + name; }

bool NetnsExists(const std::string& name) {
  struct stat st;
  return stat(NetnsPath(name).c_str(), &st) == 0;
}

void CreateNodeNamespaces(const std::string& name, const std::string& uts_path,
                          const std::string& hostname) {
  EnsureNetnsDir();
  const std::string net_path = NetnsPath(name);
  CreateMountPoint(net_path);
  try {
    CreateMountPoint(uts_path);
  } catch (...) {
    Unbind(net_path);
    throw;
  }
  // unshare() on a thread of its own: the namespaces outlive it through the bind mounts, and
  // the calling thread never leaves its namespaces.
  std::exception_ptr failure;
  std::thread worker([&] {
    try {
      if (unshare(CLONE_NEWNET | CLONE_NEWUTS) != 0) ThrowErrno("unshare for " + name);
      if (sethostname(hostname.data(), hostname.size()) != 0) ThrowErrno("sethostname " + hostname);
      if (mount("/proc/thread-self/ns/net", net_path.c_str(), "none", MS_BIND, nullptr) != 0)
        ThrowErrno("bind " + net_path);
      if (mount("/proc/thread-self/ns/uts", uts_path.c_str(), "none", MS_BIND, nullptr) != 0)
        ThrowErrno("bind " + uts_path);
    } catch (...) {
      failure = std::current_exception();
    }
  });
  worker.join();
  if (failure) {
    Unbind(uts_path);
    Unbind(net_path);
    std::rethrow_exception(failure);
  }
}

bool DeleteNodeNamespaces(const std::string& name, const std::string& uts_path, std::string* why) {
  bool ok = true;
  for (const std::string& path : {NetnsPath(name), uts_path}) {
    if (access(path.c_str(), F_OK) != 0) continue;
    if (umount2(path.c_str(), MNT_DETACH) != 0 && errno != EINVAL) {
      ok = false;
      if (why) *why = "umount " + path + ": " + std::strerror(errno);
    }
    if (unlink(path.c_str()) != 0 && errno != ENOENT) {
      ok = false;
      if (why) *why = "unlink " + path + ": " + std::strerror(errno);
    }
  }
  return ok;
}

Fd OpenPath(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) ThrowErrno("open " + path);
  return Fd(fd);
}

Fd OpenNetns(const std::string& name) { return OpenPath(NetnsPath(name)); }

void InNetns(int netns_fd, const std::function<void()>& fn) {
  Fd home = OpenPath("/proc/thread-self/ns/net");
  if (setns(netns_fd, CLONE_NEWNET) != 0) ThrowErrno("setns");
  try {
    fn();
  } catch (...) {
    setns(home.get(), CLONE_NEWNET);
    throw;
  }
  if (setns(home.get(), CLONE_NEWNET) != 0) ThrowErrno("setns back");
}

void WriteSysctl(int netns_fd, const std::string& key, const std::string& value) {
  InNetns(netns_fd, [&] {
    const std::string path = "/proc/sys/" + key;
    int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) ThrowErrno("open " + path);
    ssize_t n = write(fd, value.data(), value.size());
    int saved = errno;
    close(fd);
    errno = saved;
    if (n != static_cast<ssize_t>(value.size())) ThrowErrno("write " + path);
  });
}

unsigned long NamespaceInode(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return 0;
  return st.st_ino;
}

}  // namespace mrclab::emulator::netns
