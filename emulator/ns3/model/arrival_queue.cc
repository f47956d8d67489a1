#include "emulator/ns3/model/arrival_queue.h"

#include <algorithm>

#include "emulator/ns3/model/bucket_scheduler.h"
#include "emulator/ns3/model/sim_port.h"
#include "ns3/make-event.h"
#include "ns3/simulator.h"

namespace mrclab::emulator::sim {
namespace {

constexpr int64_t kNone = std::numeric_limits<int64_t>::max();

}  // namespace

ArrivalQueue::~ArrivalQueue() { event_.Cancel(); }

void ArrivalQueue::Push(int64_t at, SimPort* port, uint64_t seq, QueuedPacket* node) {
  calendar_.Push({at, next_order_++, port, seq, node});
  if (!firing_ && at < event_at_) Arm();
}

void ArrivalQueue::Arm() {
  const int64_t now = SimNowSteps();
  calendar_.SetNow(now);
  const Arrival* first = calendar_.Earliest();
  if (first == nullptr || first->at == event_at_) return;
  if (event_at_ != kNone) {  // (none is pending after Fire: cancelling costs an ns-3 lookup)
    event_.Cancel();
    fire_ = nullptr;  // a cancelled ns-3 event stays cancelled
  }
  // One ns-3 event, scheduled again and again (an event scheduled afresh is an allocation).
  if (!fire_) fire_ = ns3::Ptr<ns3::EventImpl>(ns3::MakeEvent(&ArrivalQueue::Fire, this), false);
  event_at_ = first->at;
  event_ = ns3::Simulator::Schedule(ns3::TimeStep(std::max<int64_t>(0, event_at_ - now)), fire_);
}

void ArrivalQueue::Fire() {
  event_at_ = kNone;
  firing_ = true;
  const int64_t now = SimNowSteps();
  calendar_.SetNow(now);
  for (const Arrival* first = calendar_.Earliest(); first != nullptr && first->at <= now; first = calendar_.Earliest()) {
    const Arrival a = calendar_.PopEarliest();
    if (const Arrival* next = calendar_.PeekSortedFront()) {  // its lines load while this one runs
      __builtin_prefetch(next->port);
      __builtin_prefetch(next->node);
      __builtin_prefetch(reinterpret_cast<const char*>(next->node) + 64);
    }
    a.port->Deliver(a.node, a.seq);
  }
  firing_ = false;
  Arm();
}

}  // namespace mrclab::emulator::sim
