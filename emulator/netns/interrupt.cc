#include "emulator/netns/interrupt.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <thread>

namespace mrclab::emulator::netns {
namespace {

std::atomic<bool> g_requested{false};

void OnSignal(int) { g_requested.store(true); }

}  // namespace

void InstallInterruptHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaction(sig, &sa, nullptr);
}

bool InterruptRequested() { return g_requested.load(); }

void ClearInterrupt() { g_requested.store(false); }

namespace {
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
}

ScopedInterruptHandlers::ScopedInterruptHandlers() : saved_(new struct sigaction[3]) {
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &saved_[i]);
}

ScopedInterruptHandlers::~ScopedInterruptHandlers() {
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &saved_[i], nullptr);
  delete[] saved_;
}

void ThrowIfInterrupted() {
  if (g_requested.load()) throw Interrupted();
}

void WaitUntil(std::chrono::steady_clock::time_point deadline, const std::function<bool()>& step,
               const std::function<std::string()>& late) {
  auto pause = std::chrono::milliseconds(20);
  for (;;) {
    ThrowIfInterrupted();
    if (step()) return;
    if (std::chrono::steady_clock::now() >= deadline) throw std::runtime_error(late());
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(200));
  }
}

}  // namespace mrclab::emulator::netns
