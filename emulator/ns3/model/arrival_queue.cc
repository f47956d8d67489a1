#include "emulator/ns3/model/arrival_queue.h"

#include <algorithm>

#include "emulator/ns3/model/bucket_scheduler.h"
#include "emulator/ns3/model/sim_port.h"
#include "mrc/core/prefetch.h"
#include "ns3/make-event.h"
#include "ns3/simulator.h"

namespace mrclab::emulator::sim {
namespace {

constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
constexpr int kSinkStages = PacketSink::kPrefetchStages;

}  // namespace

ArrivalQueue::~ArrivalQueue() { event_.Cancel(); }

void ArrivalQueue::Push(int64_t at, SimPort* port, uint64_t seq, QueuedPacket* node) {
  calendar_.Push({at, next_order_++, port, seq, node, port->far_end_});
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
  event_ = ns3::Simulator::Schedule(SimDelayUntil(std::max(event_at_, now)), fire_);
}

void ArrivalQueue::Fire() {
  event_at_ = kNone;
  firing_ = true;
  int64_t now = SimNowSteps();
  calendar_.SetNow(now);
  for (const Arrival* first = calendar_.Earliest(); first != nullptr; first = calendar_.Earliest()) {
    if (first->at > now) {
      // The next instant's arrivals run in this event too while no other event comes first (as
      // events of their own they would run in the same order; each was one more ns-3 event).
      if (!BucketScheduler::RunAhead(first->at)) break;
      now = first->at;
      calendar_.SetNow(now);
    }
    const Arrival a = calendar_.PopEarliest();
    // Prefetching while this arrival runs, in stages, each on an arrival due sooner than the
    // one before, so that each finds the lines the stage before asked for: the port, the packet
    // and the far end of the kSinkStages-th next; then the far end's stages 0, 1, ... (what it
    // looks up first, what that points at, ...) for the ones after, the last for the next.
    const std::span<const Arrival> next = calendar_.SortedFront();
    if (next.size() > kSinkStages) {
      const Arrival& later = next[kSinkStages];
      later.port->Prefetch();
      mrc::PrefetchBytes(later.node, 2 * mrc::kCacheLineBytes);
      mrc::PrefetchBytes(later.sink, 2 * mrc::kCacheLineBytes);  // a switch's home table is on its second line
    }
    for (int stage = 0; stage < kSinkStages; ++stage)
      if (const size_t i = kSinkStages - 1 - stage; i < next.size()) next[i].sink->Prefetch(next[i].node->packet, stage);
    a.port->Deliver(a.node, a.seq);
  }
  firing_ = false;
  Arm();
}

}  // namespace mrclab::emulator::sim
