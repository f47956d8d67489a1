// The event scheduler mrclab's simulations run on: BucketScheduler (model/bucket_scheduler.h),
// a calendar queue whose last event's time is the clock the models read, instead of ns-3's
// default MapScheduler (a red-black tree, one allocation per event; PriorityQueueScheduler, a
// binary heap, was 1.1-1.3x faster than it on the 1,024-host scale bench; BucketScheduler and
// its clock took 12% fewer instructions than that on a 256-host ring step, callgrind). Every
// ns-3 scheduler orders events by time and then by the order they were scheduled in, so the
// choice changes no result (the determinism tests run on it).
//
// UseSimScheduler() makes it the default before a simulation starts: it binds ns-3's
// "SchedulerType" global value, so a user's --SchedulerType=... (ns-3's CommandLine, parsed
// after it) or an explicit Simulator::SetScheduler still wins.
#pragma once

#include <string_view>

namespace mrclab::emulator::sim {

inline constexpr std::string_view kSimScheduler = "mrclab::BucketScheduler";

// Binds ns-3's SchedulerType to `type` (a scheduler's TypeId name). Call before the
// simulation's first event: a simulator that already exists keeps its scheduler until
// Simulator::Destroy(). Throws std::invalid_argument for a name ns-3 does not know.
void UseSimScheduler(std::string_view type = kSimScheduler);

}  // namespace mrclab::emulator::sim
