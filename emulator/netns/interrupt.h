// Ctrl-C and SIGTERM turn into a flag that long operations poll, so that they stop at a safe
// point and roll back (deploy) or revert (drills) instead of dying half-way.
#pragma once

#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>

struct sigaction;

namespace mrclab::emulator::netns {

class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted") {}
};

void InstallInterruptHandlers();  // SIGINT, SIGTERM, SIGHUP
bool InterruptRequested();
void ThrowIfInterrupted();
void ClearInterrupt();

// Calls `step` with growing pauses (20 ms to 200 ms) until it returns true; throws
// std::runtime_error with what `late` says when the deadline passes first. Ctrl-C interrupts.
void WaitUntil(std::chrono::steady_clock::time_point deadline, const std::function<bool()>& step,
               const std::function<std::string()>& late);

// Installs the handlers for its lifetime and puts the previous ones back (the Python module
// uses it around long calls, so Ctrl-C reaches them and then Python again).
class ScopedInterruptHandlers {
 public:
  ScopedInterruptHandlers();
  ~ScopedInterruptHandlers();
  ScopedInterruptHandlers(const ScopedInterruptHandlers&) = delete;
  ScopedInterruptHandlers& operator=(const ScopedInterruptHandlers&) = delete;

 private:
  struct sigaction* saved_;
};

}  // namespace mrclab::emulator::netns
