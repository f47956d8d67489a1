// What this machine can give a lab or a job, read from /proc and getrlimit: memory available,
// CPU count, the open-files limit. Used by checks that run before anything is changed.
#pragma once

#include <cstdint>

namespace mrclab::emulator {

uint64_t MemAvailableBytes();  // /proc/meminfo MemAvailable; 0 if unreadable
int OnlineCpus();

struct OpenFilesLimit {
  uint64_t soft = 0, hard = 0;
};
OpenFilesLimit OpenFiles();
// Raises the soft limit to the hard one (a job with udp EVs holds one socket per EV); returns
// the new soft limit.
uint64_t RaiseOpenFilesLimit();

}  // namespace mrclab::emulator
