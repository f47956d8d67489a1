// Progress of long operations on stderr: a live line on a terminal, one line per stage
// elsewhere (CI logs), nothing when quiet.
#pragma once

#include <chrono>
#include <string>

namespace mrclab::emulator::netns {

class Progress {
 public:
  explicit Progress(bool enabled);
  // A stage begins; its name prefixes updates ("links 128/256").
  void Stage(const std::string& name);
  void Update(const std::string& text);  // replaces the live line (terminal only)
  void Done(const std::string& text);    // ends the stage with a permanent line
  double Elapsed() const;                // seconds since construction

 private:
  bool enabled_, tty_;
  bool live_ = false;
  std::string stage_;
  std::chrono::steady_clock::time_point start_, last_update_;
};

}  // namespace mrclab::emulator::netns
