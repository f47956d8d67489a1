// FidelityMonitor: while a drill runs in real time, measures once a second whether this machine
// kept up (fidelity.h says what the figures mean):
//   cpu_busy, steal  from /proc/stat, over all CPUs
//   run_wait         from /proc/self/task/*/schedstat: how long the drill's threads (the job's
//                    I/O threads among them) waited on a run queue, against how long they ran
//   late_*           a timer of its own, due every 2 ms, measures how late it wakes up
// One thread; Stop() (or the destructor) joins it.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "harness/drill/fidelity.h"

namespace mrclab::harness {

class FidelityMonitor {
 public:
  explicit FidelityMonitor(std::function<double()> clock);  // stamps samples (the drill's clock)
  ~FidelityMonitor();
  FidelityMonitor(const FidelityMonitor&) = delete;
  FidelityMonitor& operator=(const FidelityMonitor&) = delete;

  void Start();
  void Stop();
  std::vector<FidelitySample> Samples() const;  // thread-safe snapshot

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mrclab::harness
