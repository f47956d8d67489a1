// Runs the ns-3 test suites of the model: mrclab_ns3_model_tests --suite=NAME, --list, ...
// (ns3::TestRunner's options; ctest runs one suite per test, and each once more with
// --on-bucket-scheduler).
//
// --on-bucket-scheduler, given first: the suites' simulations run on mrclab::BucketScheduler,
// as mrclab's own simulations do (its clock, and ArrivalQueue running arrivals ahead within one
// event), instead of ns-3's default scheduler; a suite that chooses its own scheduler still does.
#include <string_view>

#include "emulator/ns3/model/bucket_scheduler.h"
#include "ns3/global-value.h"
#include "ns3/string.h"
#include "ns3/test.h"

int main(int argc, char* argv[]) {
  if (argc > 1 && std::string_view(argv[1]) == "--on-bucket-scheduler") {
    mrclab::emulator::sim::BucketScheduler::GetTypeId();  // registers it
    ns3::GlobalValue::Bind("SchedulerType", ns3::StringValue("mrclab::BucketScheduler"));
    argv[1] = argv[0];
    ++argv;
    --argc;
  }
  return ns3::TestRunner::Run(argc, argv);
}
