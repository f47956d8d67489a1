#include "emulator/host_machine.h"

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace mrclab::emulator {

uint64_t MemAvailableBytes() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  uint64_t kib = 0;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

int OnlineCpus() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

OpenFilesLimit OpenFiles() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0) return {};
  return {r.rlim_cur, r.rlim_max};
}

uint64_t RaiseOpenFilesLimit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) != 0) return 0;
  if (r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    setrlimit(RLIMIT_NOFILE, &r);
  }
  return OpenFiles().soft;
}

}  // namespace mrclab::emulator
