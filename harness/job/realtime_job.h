// The real-time job of a deployed netns lab for a config, by its transport stack: TrainingJob
// (our MRC core; namespace and VM hosts) or KernelRcJob (the kernel's RC on VM hosts). The
// drill's netns backend and the Python module both make their jobs here.
#pragma once

#include <memory>

#include "emulator/resolved_lab.h"
#include "harness/job/job.h"

namespace mrclab::harness {

std::unique_ptr<Job> MakeRealtimeJob(const emulator::ResolvedLab& lab, const JobConfig& config, Job::EventFn on_event,
                                     Job::StepFn on_step);

}  // namespace mrclab::harness
