#include "emulator/netns/progress.h"

#include <unistd.h>

#include <cstdio>

namespace mrclab::emulator::netns {

Progress::Progress(bool enabled)
    : enabled_(enabled), tty_(isatty(STDERR_FILENO) != 0), start_(std::chrono::steady_clock::now()) {}

double Progress::Elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::Stage(const std::string& name) { stage_ = name; }

void Progress::Update(const std::string& text) {
  if (!enabled_ || !tty_) return;
  auto now = std::chrono::steady_clock::now();
  if (live_ && now - last_update_ < std::chrono::milliseconds(100)) return;
  last_update_ = now;
  std::fprintf(stderr, "\r\033[K[%6.2fs] %s: %s", Elapsed(), stage_.c_str(), text.c_str());
  live_ = true;
}

void Progress::Done(const std::string& text) {
  if (!enabled_) return;
  std::fprintf(stderr, "%s[%6.2fs] %s: %s\n", live_ ? "\r\033[K" : "", Elapsed(), stage_.c_str(),
               text.c_str());
  live_ = false;
}

}  // namespace mrclab::emulator::netns
