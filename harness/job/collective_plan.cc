#include "harness/job/collective_plan.h"

#include <map>
#include <stdexcept>
#include <tuple>

namespace mrclab::harness {
namespace {

int Mod(int a, int n) { return ((a % n) + n) % n; }

// Phases of one collective for `rank`, receive slots still unassigned.
CollectivePlan PlanFor(CollectiveKind kind, int rank, int n) {
  CollectivePlan plan{kind, {}};
  const int next = Mod(rank + 1, n), prev = Mod(rank - 1, n);
  auto reduce_scatter = [&] {
    for (int k = 0; k < n - 1; ++k)
      plan.phases.push_back({{{next, Mod(rank - k, n), -1}}, {{prev, Mod(rank - 1 - k, n), true, -1}}});
  };
  auto all_gather = [&](int first_owned) {  // rank r owns chunk (r + first_owned) mod n
    for (int k = 0; k < n - 1; ++k)
      plan.phases.push_back({{{next, Mod(rank + first_owned - k, n), -1}},
                             {{prev, Mod(rank + first_owned - 1 - k, n), false, -1}}});
  };
  switch (kind) {
    case CollectiveKind::kAllReduce:
      reduce_scatter();
      all_gather(1);
      break;
    case CollectiveKind::kReduceScatter:
      reduce_scatter();
      break;
    case CollectiveKind::kAllGather:
      all_gather(0);
      break;
    case CollectiveKind::kAllToAll: {
      Phase p;
      for (int d = 1; d < n; ++d) {
        p.sends.push_back({Mod(rank + d, n), Mod(rank + d, n), -1});
        p.recvs.push_back({Mod(rank - d, n), Mod(rank - d, n), false, -1});
      }
      plan.phases.push_back(p);
      break;
    }
  }
  return plan;
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

double BusBandwidthFactor(CollectiveKind k, int n) {
  return k == CollectiveKind::kAllReduce ? 2.0 * (n - 1) / n : double(n - 1) / n;
}

StepPlan BuildStepPlan(const std::vector<CollectiveKind>& collectives, int n) {
  if (n < 2) throw std::invalid_argument("a job needs at least 2 ranks");
  StepPlan step;
  step.ranks = n;
  step.plans.resize(n);
  step.slots.assign(n, 0);
  // (receiver, collective, phase, sender) -> slot
  std::map<std::tuple<int, int, int, int>, int> slot_of;
  for (int r = 0; r < n; ++r)
    for (size_t c = 0; c < collectives.size(); ++c) {
      CollectivePlan plan = PlanFor(collectives[c], r, n);
      for (size_t k = 0; k < plan.phases.size(); ++k)
        for (RecvOp& recv : plan.phases[k].recvs) {
          recv.slot = step.slots[r]++;
          slot_of[{r, int(c), int(k), recv.peer}] = recv.slot;
        }
      step.plans[r].push_back(std::move(plan));
    }
  for (int r = 0; r < n; ++r)
    for (size_t c = 0; c < collectives.size(); ++c)
      for (size_t k = 0; k < step.plans[r][c].phases.size(); ++k)
        for (SendOp& send : step.plans[r][c].phases[k].sends)
          send.remote_slot = slot_of.at({send.peer, int(c), int(k), r});
  return step;
}

}  // namespace mrclab::harness
