#include "emulator/netns/drill_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "emulator/errors.h"
#include "emulator/netns/lab_state.h"

namespace mrclab::emulator::netns {

std::string DrillLock::PathOf(const std::string& lab_name) { return StateRoot() + "/" + lab_name + ".drill"; }

DrillLock::DrillLock(const std::string& lab_name, const std::string& what) : path_(PathOf(lab_name)) {
  std::filesystem::create_directories(StateRoot());
  // The file a holder unlinks as it ends may be the one just opened: lock, then check that the
  // path still names it, else open again.
  for (;;) {
    fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw Error(ErrorKind::kOperation, "cannot open " + path_ + ": " + std::strerror(errno));
    if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int saved = errno;
      std::ostringstream holder;
      holder << std::ifstream(path_).rdbuf();
      close(fd_);
      fd_ = -1;
      if (saved != EWOULDBLOCK) throw Error(ErrorKind::kOperation, "cannot lock " + path_ + ": " + std::strerror(saved));
      std::string who = holder.str();
      while (!who.empty() && who.back() == '\n') who.pop_back();
      throw InputError("lab '" + lab_name + "' is in use by another drill (" + (who.empty() ? "starting" : who) +
                       "): wait for it to end");
    }
    struct stat held{}, named{};
    if (fstat(fd_, &held) == 0 && stat(path_.c_str(), &named) == 0 && held.st_ino == named.st_ino) break;
    close(fd_);
  }
  const std::string text = "PID " + std::to_string(getpid()) + ", " + what + "\n";
  if (ftruncate(fd_, 0) != 0 || write(fd_, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    const int saved = errno;
    unlink(path_.c_str());  // no destructor runs for a constructor that throws
    close(fd_);
    throw Error(ErrorKind::kOperation, "cannot write " + path_ + ": " + std::strerror(saved));
  }
}

void DrillLock::RemoveIfStale(const std::string& lab_name) {
  const std::string path = PathOf(lab_name);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  if (flock(fd, LOCK_EX | LOCK_NB) == 0) unlink(path.c_str());
  close(fd);
}

DrillLock::~DrillLock() {
  unlink(path_.c_str());  // before the lock goes: a waiting opener then sees another file
  close(fd_);
}

}  // namespace mrclab::emulator::netns
