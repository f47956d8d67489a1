#include "emulator/ns3/helper/sim_scheduler.h"

#include <stdexcept>
#include <string>

#include "emulator/ns3/model/bucket_scheduler.h"
#include "ns3/global-value.h"
#include "ns3/string.h"
#include "ns3/type-id.h"

namespace mrclab::emulator::sim {

void UseSimScheduler(std::string_view type) {
  BucketScheduler::GetTypeId();  // registers it (a static library's object file links only when named)
  ns3::TypeId id;
  if (!ns3::TypeId::LookupByNameFailSafe(std::string(type), &id))
    throw std::invalid_argument("unknown ns-3 scheduler '" + std::string(type) +
                                "' (mrclab::BucketScheduler, ns3::PriorityQueueScheduler, ns3::MapScheduler, ns3::HeapScheduler, ...)");
  ns3::GlobalValue::Bind("SchedulerType", ns3::StringValue(std::string(type)));
}

}  // namespace mrclab::emulator::sim
