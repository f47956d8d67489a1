// One drill at a time on a lab: two drills on the same deployed lab would bind the same endpoint
// addresses and inject faults under each other. A drill holds an exclusive flock on
// StateRoot()/NAME.drill while it runs; the kernel releases it however the drill ends (kill -9
// included), and the holder removes the file when it ends normally.
#pragma once

#include <string>

namespace mrclab::emulator::netns {

class DrillLock {
 public:
  // Takes the lab's drill lock, recording `what` (the holder's description) in it. Throws
  // InputError "lab 'NAME' is in use by another drill (PID N, WHAT): wait for it to end" when a
  // live process holds it.
  DrillLock(const std::string& lab_name, const std::string& what);
  ~DrillLock();
  DrillLock(const DrillLock&) = delete;
  DrillLock& operator=(const DrillLock&) = delete;

  static std::string PathOf(const std::string& lab_name);
  // Removes the lock file a drill that was killed left, unless a live drill holds it.
  static void RemoveIfStale(const std::string& lab_name);

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace mrclab::emulator::netns
