#include "emulator/ns3/model/arrival_queue.h"

#include <algorithm>

#include "emulator/ns3/model/sim_port.h"
#include "ns3/simulator.h"

namespace mrclab::emulator::sim {
namespace {

constexpr int64_t kNone = std::numeric_limits<int64_t>::max();

}  // namespace

ArrivalQueue::~ArrivalQueue() { event_.Cancel(); }

void ArrivalQueue::Push(int64_t at, SimPort* port, uint64_t seq, const void* where) {
  heap_.push_back({at, next_order_++, port, seq, where});
  std::push_heap(heap_.begin(), heap_.end(), Later);
  if (!firing_ && at < event_at_) Arm();
}

void ArrivalQueue::Arm() {
  if (heap_.empty() || heap_.front().at == event_at_) return;
  event_.Cancel();
  event_at_ = heap_.front().at;
  const int64_t now = ns3::Simulator::Now().GetTimeStep();
  event_ = ns3::Simulator::Schedule(ns3::TimeStep(std::max<int64_t>(0, event_at_ - now)), &ArrivalQueue::Fire, this);
}

void ArrivalQueue::Prefetch() const {
  if (heap_.empty()) return;
  const Arrival& next = heap_.front();
  __builtin_prefetch(next.port);
  __builtin_prefetch(next.where);
  __builtin_prefetch(static_cast<const char*>(next.where) + 64);
}

void ArrivalQueue::Fire() {
  event_at_ = kNone;
  firing_ = true;
  const int64_t now = ns3::Simulator::Now().GetTimeStep();
  while (!heap_.empty() && heap_.front().at <= now) {
    std::pop_heap(heap_.begin(), heap_.end(), Later);
    const Arrival a = heap_.back();
    heap_.pop_back();
    Prefetch();  // the next one's lines load while this one runs
    a.port->Deliver(a.seq);
  }
  firing_ = false;
  Arm();
}

}  // namespace mrclab::emulator::sim
