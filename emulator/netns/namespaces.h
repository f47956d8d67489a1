// Network and UTS namespaces of lab nodes, made the way `ip netns add` makes them.
//
// A node's network namespace is bind-mounted at /run/netns/NAME (so `ip netns exec` works);
// its UTS namespace (hostname = node name) at a path the caller chooses inside the lab's
// state directory. Creating and deleting touch only those paths. Entering is per thread.
#pragma once

#include <functional>
#include <string>

namespace mrclab::emulator::netns {

inline constexpr const char* kNetnsDir = "/run/netns";

// Owns an open file descriptor; -1 when empty.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd();
  Fd(Fd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Fd& operator=(Fd&& other) noexcept;
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

std::string NetnsPath(const std::string& name);
bool NetnsExists(const std::string& name);

// Creates the network namespace NAME and a UTS namespace with the given hostname bound at
// uts_path. Throws std::system_error naming the step that failed; leaves nothing behind then.
void CreateNodeNamespaces(const std::string& name, const std::string& uts_path,
                          const std::string& hostname);
// Unmounts and removes both; missing ones are not an error. Returns false if something could
// not be removed (the reason goes to `why`).
bool DeleteNodeNamespaces(const std::string& name, const std::string& uts_path, std::string* why);

Fd OpenNetns(const std::string& name);  // throws if missing
Fd OpenPath(const std::string& path);   // O_RDONLY|O_CLOEXEC, throws if missing

// Runs fn with the calling thread inside the namespace, then returns the thread to the
// namespace it was in (also when fn throws).
void InNetns(int netns_fd, const std::function<void()>& fn);

// Writes a sysctl under /proc/sys (key "net/ipv6/conf/all/forwarding") inside a namespace.
void WriteSysctl(int netns_fd, const std::string& key, const std::string& value);

// Inode of a namespace file (identity check for processes: /proc/PID/ns/net).
unsigned long NamespaceInode(const std::string& path);

}  // namespace mrclab::emulator::netns
