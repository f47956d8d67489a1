#include "harness/job/realtime_job.h"

#include "harness/job/kernel_rc_job.h"
#include "harness/job/training_job.h"

namespace mrclab::harness {

std::unique_ptr<Job> MakeRealtimeJob(const emulator::ResolvedLab& lab, const JobConfig& config, Job::EventFn on_event,
                                     Job::StepFn on_step) {
  if (config.stack == TransportStack::kKernel)
    return std::make_unique<KernelRcJob>(lab, config, std::move(on_event), std::move(on_step));
  return std::make_unique<TrainingJob>(lab, config, std::move(on_event), std::move(on_step));
}

}  // namespace mrclab::harness
