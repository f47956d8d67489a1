// Wall-clock time as Unix seconds, the timestamp of every journal line, event and sample.
#pragma once

#include <chrono>

namespace mrclab::emulator {

inline double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace mrclab::emulator
