// `mrclab capacity`: what this machine can forward through a lab path (capacity_model.h),
// measured once per machine and MTU with a small lab of its own and cached; drills and
// `mrclab drill --check` compare each job's demand with it.
#pragma once

namespace CLI {
class App;
}

namespace mrclab::harness {

void AddCapacityCommand(CLI::App& app, int& exit_status);

}  // namespace mrclab::harness
