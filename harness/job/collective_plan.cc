#include "harness/job/collective_plan.h"

#include <algorithm>
#include <stdexcept>

namespace mrclab::harness {
namespace {

int Mod(int a, int n) { return ((a % n) + n) % n; }

// Ring collectives: one send to rank+1 and one receive from rank-1 per phase. In reduce-scatter
// phase k rank r sends chunk r-k and reduces chunk r-1-k into its own; in all-gather phase k
// (rank r starting with chunk r + first_owned) it sends chunk r+first_owned-k and stores
// r+first_owned-1-k.
void RingPhase(int rank, int n, int k, bool reduce, int first_owned, int slot, Phase& p) {
  const int next = Mod(rank + 1, n), prev = Mod(rank - 1, n);
  const int sent = reduce ? Mod(rank - k, n) : Mod(rank + first_owned - k, n);
  const int received = reduce ? Mod(rank - 1 - k, n) : Mod(rank + first_owned - 1 - k, n);
  p.sends.push_back({next, sent, slot});
  p.recvs.push_back({prev, received, reduce, slot});
}

// All-to-all, one phase: rank r sends its chunk d to rank d, which stores it as chunk r; the
// receive from the rank d places away (r - d) is the receiver's slot first + d - 1.
void AllToAllPhase(int rank, int n, int first_slot, Phase& p) {
  for (int d = 1; d < n; ++d) {
    p.sends.push_back({Mod(rank + d, n), Mod(rank + d, n), first_slot + d - 1});
    p.recvs.push_back({Mod(rank - d, n), Mod(rank - d, n), false, first_slot + d - 1});
  }
}

}  // namespace

std::string_view ToString(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::kAllReduce: return "all_reduce";
    case CollectiveKind::kAllGather: return "all_gather";
    case CollectiveKind::kReduceScatter: return "reduce_scatter";
    case CollectiveKind::kAllToAll: return "all_to_all";
  }
  return "?";
}

std::optional<CollectiveKind> ParseCollectiveKind(std::string_view text) {
  for (auto k : {CollectiveKind::kAllReduce, CollectiveKind::kAllGather,
                 CollectiveKind::kReduceScatter, CollectiveKind::kAllToAll})
    if (ToString(k) == text) return k;
  return std::nullopt;
}

uint64_t ChunkBytes(uint64_t bytes, uint64_t ranks) {
  return std::max<uint64_t>(4, (bytes + 4 * ranks - 1) / (4 * ranks) * 4);
}

double BusBandwidthFactor(CollectiveKind k, int n) {
  return k == CollectiveKind::kAllReduce ? 2.0 * (n - 1) / n : double(n - 1) / n;
}

StepPlan::StepPlan(std::vector<CollectiveKind> collectives, int n) : kinds_(std::move(collectives)), ranks_(n) {
  if (n < 2) throw std::invalid_argument("a job needs at least 2 ranks");
  for (size_t c = 0; c < kinds_.size(); ++c) {
    first_slot_.push_back(slots_);
    slots_ += kinds_[c] == CollectiveKind::kAllToAll ? n - 1 : static_cast<int>(phases(c));
    phases_per_step_ += phases(c);
  }
}

size_t StepPlan::phases(size_t c) const {
  switch (kinds_[c]) {
    case CollectiveKind::kAllReduce: return 2 * static_cast<size_t>(ranks_ - 1);
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kAllGather: return static_cast<size_t>(ranks_ - 1);
    case CollectiveKind::kAllToAll: return 1;
  }
  return 0;
}

std::map<int, int> StepPlan::ReceivesPerStep(int rank) const {
  std::map<int, int> out;
  for (size_t c = 0; c < kinds_.size(); ++c) {
    if (kinds_[c] == CollectiveKind::kAllToAll) {
      for (int d = 1; d < ranks_; ++d) ++out[Mod(rank - d, ranks_)];
    } else {
      out[Mod(rank - 1, ranks_)] += static_cast<int>(phases(c));
    }
  }
  return out;
}

std::set<std::pair<int, int>> StepPlan::RankPairs() const {
  std::set<std::pair<int, int>> pairs;
  for (int r = 0; r < ranks_; ++r)
    for (const auto& [peer, count] : ReceivesPerStep(r)) pairs.insert(std::minmax(r, peer));
  return pairs;
}

int StepPlan::SlotFrom(int rank, size_t c, size_t k, int peer) const {
  if (kinds_[c] == CollectiveKind::kAllToAll) {
    const int d = Mod(rank - peer, ranks_);
    return d == 0 ? -1 : first_slot_[c] + d - 1;
  }
  return peer == Mod(rank - 1, ranks_) ? first_slot_[c] + static_cast<int>(k) : -1;
}

Phase StepPlan::At(int rank, size_t c, size_t k) const {
  Phase p;
  At(rank, c, k, p);
  return p;
}

void StepPlan::At(int rank, size_t c, size_t k, Phase& p) const {
  p.sends.clear();
  p.recvs.clear();
  const int n = ranks_, slot = first_slot_[c] + static_cast<int>(k), half = n - 1;
  switch (kinds_[c]) {
    case CollectiveKind::kAllReduce:
      if (static_cast<int>(k) < half) return RingPhase(rank, n, static_cast<int>(k), true, 0, slot, p);
      return RingPhase(rank, n, static_cast<int>(k) - half, false, 1, slot, p);
    case CollectiveKind::kReduceScatter: return RingPhase(rank, n, static_cast<int>(k), true, 0, slot, p);
    case CollectiveKind::kAllGather: return RingPhase(rank, n, static_cast<int>(k), false, 0, slot, p);
    case CollectiveKind::kAllToAll: return AllToAllPhase(rank, n, first_slot_[c], p);
  }
}

}  // namespace mrclab::harness
