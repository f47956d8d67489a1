// Failover benchmark on the loop driver (virtual time, deterministic): time from cutting one
// path to application goodput back above 90% of its pre-cut value, for MRC and for the RC
// baseline. Goodput here is what the application sees: bytes of completed Writes per 10 us.
//
//   usage: mrc_failover_bench [--evs N] [--heal-us US] [--seed S]
//
// Topology: host NIC egress 25 Gb/s; every EV path 10 Gb/s, 5 us one way. MRC sprays over N
// EVs (2 planes); RC uses its one ECMP-hashed EV. The cut kills that EV (for MRC: EV 3) in both
// directions and heals it after --heal-us (RC cannot route around it before the heal).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "mrc/core/ev_selector.h"
#include "mrc/loop/loop_pair_testing.h"

using namespace mrclab::mrc;

namespace {

struct Outcome {
  double base_rtt_us = 0, srtt_us = 0, pre_gbps = 0, detect_us = -1, recover_us = -1, dip_gbps = 0;
  bool qp_error = false;
};

Outcome Run(TransportMode mode, int evs, Duration heal_after, uint64_t seed) {
  QpConfig config = mrclab::mrc::testing::SmallConfig(mode, evs);
  config.cc.initial_window = Bytes{512 * 1024};
  mrclab::mrc::testing::LoopPair pair(config, 64 << 20, seed);
  PathSpec path;
  path.delay = Duration::Microseconds(5);
  path.rate = BitsPerSecond::Gbps(10);
  path.queue_limit = Bytes{256 * 1024};
  pair.net().SetDefaultPath(path);
  pair.net().SetHostEgressRate(0, BitsPerSecond::Gbps(25));

  constexpr uint32_t kMsg = 8 * 1024;
  constexpr int kSlots = 4096;  // landing offsets are reused round-robin
  constexpr int kOutstanding = 128;
  const Duration bucket = Duration::Microseconds(10);
  std::vector<double> bucket_bytes;
  size_t completed = 0, posted = 0;
  auto pump = [&] {
    while (pair.send_done().size() > completed) {
      if (pair.send_done()[completed].status != WcStatus::kSuccess) return;
      ++completed;
      if (bucket_bytes.size() <= static_cast<size_t>(pair.net().now().nanoseconds() / bucket.nanoseconds()))
        bucket_bytes.resize(pair.net().now().nanoseconds() / bucket.nanoseconds() + 1, 0);
      bucket_bytes[pair.net().now().nanoseconds() / bucket.nanoseconds()] += kMsg;
    }
    while (posted - completed < kOutstanding) {
      pair.PostWrites(1, kMsg, false, (posted % kSlots) * uint64_t{kMsg});
      ++posted;
    }
  };
  auto run_for = [&](Duration d) {
    pair.RunUntil([&] { pump(); return pair.qa().state() == QpState::kError; }, d);
  };

  run_for(Duration::Milliseconds(2));
  const Timestamp cut = pair.net().now();
  Outcome o;
  o.base_rtt_us = pair.qa().min_rtt().microseconds();
  o.srtt_us = pair.qa().srtt().microseconds();
  const uint16_t victim = mode == TransportMode::kRc
                              ? static_cast<uint16_t>(EcmpHashIndex(pair.qa().qpn(), pair.qb().qpn(), evs))
                              : 3;
  pair.net().KillEv(victim, cut, cut + heal_after);
  run_for(heal_after + Duration::Milliseconds(10));
  o.qp_error = pair.qa().state() == QpState::kError;
  if (std::getenv("MRC_BENCH_DEBUG"))
    std::fprintf(stderr, "completed=%zu posted=%zu now=%ld cut=%ld rtx=%lu rto=%lu inflight=%lu cwnd=%lu wrs=%zu\n", completed, posted,
                 (long)pair.net().now().nanoseconds(), (long)cut.nanoseconds(), (unsigned long)pair.qa().stats().retransmissions,
                 (unsigned long)pair.qa().stats().rto_fired, (unsigned long)pair.qa().bytes_in_flight().count,
                 (unsigned long)pair.qa().congestion_window().count, pair.qa().outstanding_work_requests());
  for (const auto& e : pair.events_a())
    if (auto* s = std::get_if<EvStateChanged>(&e); s && s->ev == victim && s->to == EvState::kAssumedBad) {
      o.detect_us = (s->at - cut).microseconds();
      break;
    }

  const size_t cut_bucket = cut.nanoseconds() / bucket.nanoseconds();
  bucket_bytes.resize(std::max(bucket_bytes.size(), cut_bucket + 2000), 0);
  auto gbps = [&](size_t from, size_t n) {
    double b = 0;
    for (size_t i = from; i < from + n; ++i) b += bucket_bytes[i];
    return b * 8 / (n * bucket.nanoseconds());
  };
  o.pre_gbps = gbps(cut_bucket - 100, 100);  // the millisecond before the cut
  constexpr size_t kSmooth = 10;              // 100 us moving window
  size_t last_low = cut_bucket;
  bool dipped = false;
  o.dip_gbps = o.pre_gbps;
  const size_t end_bucket = pair.net().now().nanoseconds() / bucket.nanoseconds();
  for (size_t i = cut_bucket; i + kSmooth < end_bucket; ++i) {
    const double g = gbps(i, kSmooth);
    o.dip_gbps = std::min(o.dip_gbps, g);
    if (g < 0.9 * o.pre_gbps) {
      dipped = true;
      last_low = i + kSmooth;  // the window ending here was still low
    }
  }
  o.recover_us = dipped ? (last_low - cut_bucket) * bucket.microseconds() : 0;
  if (o.qp_error) o.recover_us = -1;
  return o;
}

void Print(const char* name, const Outcome& o) {
  std::printf("%-10s base_rtt=%6.1fus srtt=%6.1fus pre=%5.1fGb/s dip=%5.1fGb/s detect=%7.1fus "
              "recover=%8.1fus (%5.1f srtt)%s\n",
              name, o.base_rtt_us, o.srtt_us, o.pre_gbps, o.dip_gbps, o.detect_us, o.recover_us,
              o.srtt_us > 0 ? o.recover_us / o.srtt_us : 0, o.qp_error ? "  QP ERROR" : "");
}

}  // namespace

int main(int argc, char** argv) {
  int evs = 8;
  int64_t heal_us = 1000;
  uint64_t seed = 1;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--evs") && i + 1 < argc) evs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--heal-us") && i + 1 < argc) heal_us = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--seed") && i + 1 < argc) seed = std::strtoull(argv[++i], nullptr, 10);
    else {
      std::fprintf(stderr, "usage: %s [--evs N] [--heal-us US] [--seed S]\n", argv[0]);
      return 2;
    }
  }
  const Duration heal = Duration::Microseconds(heal_us);
  std::printf("failover: NIC 25 Gb/s, paths 10 Gb/s + 5 us, cut one path, heal after %ld us\n",
              static_cast<long>(heal_us));
  const Outcome mrc = Run(TransportMode::kMrc, evs, heal, seed);
  Print(("mrc/" + std::to_string(evs)).c_str(), mrc);
  const Outcome rc = Run(TransportMode::kRc, evs, heal, seed);
  Print("rc", rc);
  const double target = 5 * mrc.srtt_us + mrc.detect_us;
  std::printf("mrc target (5 srtt + detection = %.1f us): %s\n", target,
              mrc.recover_us >= 0 && mrc.recover_us <= target ? "met" : "MISSED");
  return mrc.recover_us >= 0 && mrc.recover_us <= target ? 0 : 1;
}
