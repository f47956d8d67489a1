// Ctrl-C and SIGTERM turn into a flag that long operations poll, so that they stop at a safe
// point and roll back (deploy) or revert (drills) instead of dying half-way.
#pragma once

#include <stdexcept>

namespace mrclab::emulator::netns {

class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

void InstallInterruptHandlers();  // SIGINT, SIGTERM, SIGHUP
bool InterruptRequested();
void ThrowIfInterrupted();

}  // namespace mrclab::emulator::netns
