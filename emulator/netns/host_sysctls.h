// Machine-wide kernel limits that a large lab outgrows. The IPv6 neighbour table is shared by
// every network namespace and overflows at gc_thresh3 (1024 by default): a lab with hundreds of
// links then fails neighbour discovery ("neighbor table overflow", sendto() EINVAL).
//
// RaiseForLab raises the limits when a lab needs more, saving the original values once in
// StateRoot()/host-sysctls.json; RestoreIfLastLab puts them back when no lab is left.
#pragma once

#include "emulator/resolved_lab.h"

namespace mrclab::emulator::netns {

void RaiseHostLimitsForLab(const ResolvedLab& lab);
void RestoreHostLimitsIfNoLab();

}  // namespace mrclab::emulator::netns
