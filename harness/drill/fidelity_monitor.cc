#include "harness/drill/fidelity_monitor.h"

#include <time.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "harness/drill/verdict.h"  // Percentile

namespace mrclab::harness {
namespace {

constexpr long kTimerPeriodNs = 2'000'000;
constexpr long kSampleEveryNs = 1'000'000'000;

long NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1'000'000'000L + ts.tv_nsec;
}

struct CpuTimes {
  unsigned long long busy = 0, steal = 0, total = 0;
};

CpuTimes ReadCpuTimes() {
  std::ifstream in("/proc/stat");
  std::string cpu;
  unsigned long long user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  in >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal;
  CpuTimes t;
  t.total = user + nice + system + idle + iowait + irq + softirq + steal;
  t.busy = t.total - idle - iowait;
  t.steal = steal;
  return t;
}

// Per thread of this process: (ns on a CPU, ns waiting on a run queue).
std::map<int, std::pair<unsigned long long, unsigned long long>> ReadThreadSchedstats() {
  std::map<int, std::pair<unsigned long long, unsigned long long>> out;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(task.path() / "schedstat");
    unsigned long long run = 0, wait = 0;
    if (in >> run >> wait) out[std::atoi(task.path().filename().c_str())] = {run, wait};
  }
  return out;
}

}  // namespace

struct FidelityMonitor::Impl {
  std::function<double()> clock;
  std::thread thread;
  std::atomic<bool> running{false};
  mutable std::mutex mu;
  std::vector<FidelitySample> samples;

  void Run() {
    CpuTimes cpu0 = ReadCpuTimes();
    auto threads0 = ReadThreadSchedstats();
    std::vector<double> late_ms;
    long next = NowNs() + kTimerPeriodNs, interval_start = NowNs();
    while (running.load()) {
      const timespec due{next / 1'000'000'000L, next % 1'000'000'000L};
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, nullptr);
      const long now = NowNs();
      late_ms.push_back(static_cast<double>(now - next) / 1e6);
      next = std::max(next + kTimerPeriodNs, now + kTimerPeriodNs / 2);
      if (now - interval_start < kSampleEveryNs) continue;
      interval_start = now;

      FidelitySample s;
      s.t = clock();
      const CpuTimes cpu1 = ReadCpuTimes();
      if (cpu1.total > cpu0.total) {
        const double total = static_cast<double>(cpu1.total - cpu0.total);
        s.cpu_busy = static_cast<double>(cpu1.busy - cpu0.busy) / total;
        s.steal = static_cast<double>(cpu1.steal - cpu0.steal) / total;
      }
      cpu0 = cpu1;
      auto threads1 = ReadThreadSchedstats();
      unsigned long long run = 0, wait = 0;
      for (const auto& [tid, rw] : threads1) {
        auto it = threads0.find(tid);
        const auto before = it == threads0.end() ? std::pair<unsigned long long, unsigned long long>{} : it->second;
        run += rw.first - before.first;
        wait += rw.second - before.second;
      }
      threads0 = std::move(threads1);
      s.run_wait = run + wait > 0 ? static_cast<double>(wait) / static_cast<double>(run + wait) : 0;
      s.late_p99_ms = Percentile(late_ms, 0.99);
      s.late_max_ms = *std::max_element(late_ms.begin(), late_ms.end());
      late_ms.clear();
      std::lock_guard lock(mu);
      samples.push_back(s);
    }
  }
};

FidelityMonitor::FidelityMonitor(std::function<double()> clock) : impl_(std::make_unique<Impl>()) {
  impl_->clock = std::move(clock);
}

FidelityMonitor::~FidelityMonitor() { Stop(); }

void FidelityMonitor::Start() {
  if (impl_->running.exchange(true)) return;
  impl_->thread = std::thread([this] { impl_->Run(); });
}

void FidelityMonitor::Stop() {
  impl_->running.store(false);
  if (impl_->thread.joinable()) impl_->thread.join();
}

std::vector<FidelitySample> FidelityMonitor::Samples() const {
  std::lock_guard lock(impl_->mu);
  return impl_->samples;
}

}  // namespace mrclab::harness
