// Collective algorithms as data: for N ranks, what every rank sends and receives in each phase
// of a step. Pure (no I/O), so the algorithms are unit-tested by running them in memory.
//
// Buffer model (per collective, per rank): `chunks` = N equal chunks of the collective's size.
//   all_reduce      ring: N-1 reduce-scatter phases then N-1 all-gather phases; rank r sends
//                   one chunk to r+1 per phase and receives one from r-1
//   reduce_scatter  the first half of the ring; afterwards rank r owns chunk (r+1) mod N, reduced
//   all_gather      the second half; rank r starts with chunk r and ends with every chunk
//   all_to_all      one phase: rank r sends its chunk d to rank d, which stores it as chunk r of
//                   a separate output buffer
// Receives land in a per-step slot at the receiver (slot numbers are unique per receiving rank
// across all collectives of a step); a send names the receiver's slot.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mrclab::harness {

enum class CollectiveKind { kAllReduce, kAllGather, kReduceScatter, kAllToAll };
std::string_view ToString(CollectiveKind k);
std::optional<CollectiveKind> ParseCollectiveKind(std::string_view text);
// nccl-tests' bus bandwidth factor: busbw = algbw * factor.
double BusBandwidthFactor(CollectiveKind k, int ranks);
// Bytes of one of the N chunks of a collective of `bytes` (whole uint32 words, at least one).
uint64_t ChunkBytes(uint64_t bytes, uint64_t ranks);

struct SendOp {
  int peer = 0;         // receiving rank
  int chunk = 0;        // our chunk to send
  int remote_slot = 0;  // the receiver's landing slot
};

struct RecvOp {
  int peer = 0;      // sending rank
  int chunk = 0;     // chunk it becomes in our buffer (output buffer for all_to_all)
  bool reduce = false;  // add (uint32 words, mod 2^32) instead of copy
  int slot = 0;      // our landing slot
};

struct Phase {
  std::vector<SendOp> sends;
  std::vector<RecvOp> recvs;
};

// The phases of every rank, computed on demand: a ring step of N ranks has 2(N-1) phases per
// rank, so a table of them would grow as N^2 (8,192 ranks: hundreds of millions of entries).
// Slots are numbered per receiving rank from 0 in (collective, phase, receive) order; every
// rank has the same number of them.
class StepPlan {
 public:
  StepPlan() = default;
  // Throws std::invalid_argument for fewer than 2 ranks.
  StepPlan(std::vector<CollectiveKind> collectives, int ranks);

  int ranks() const { return ranks_; }
  size_t collectives() const { return kinds_.size(); }
  CollectiveKind kind(size_t c) const { return kinds_[c]; }
  size_t phases(size_t c) const;   // the same for every rank
  size_t phases_per_step() const { return phases_per_step_; }  // over every collective
  int slots() const { return slots_; }  // landing slots per rank
  // Phase k of collective c at `rank`, with its slots and the receivers' slots.
  Phase At(int rank, size_t c, size_t k) const;
  // The same into `phase`, whose arrays it reuses (a rank asks once per phase).
  void At(int rank, size_t c, size_t k, Phase& phase) const;
  // The slot of `rank`'s receive from `peer` in phase k of collective c; -1 if there is none.
  int SlotFrom(int rank, size_t c, size_t k, int peer) const;
  // Per sending peer, how many messages `rank` receives from it in one step.
  std::map<int, int> ReceivesPerStep(int rank) const;
  // Every two ranks that exchange messages in a step, as (lower, higher), once each: the job
  // connects each such pair with qps_per_peer QP pairs.
  std::set<std::pair<int, int>> RankPairs() const;

 private:
  std::vector<CollectiveKind> kinds_;
  std::vector<int> first_slot_;  // per collective
  int ranks_ = 0;
  int slots_ = 0;
  size_t phases_per_step_ = 0;
};

}  // namespace mrclab::harness
