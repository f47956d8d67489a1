// The initramfs a VM host boots with: mrclab-guest as /init (emulator/netns/guest/) and the
// kernel modules it loads to reach its root filesystem over 9p (the guest image's
// initrd.modules), as a newc cpio archive (the kernel's initramfs format).
#pragma once

#include <string>

#include "emulator/netns/vm_guest_image.h"

namespace mrclab::emulator::netns {

// The mrclab-guest binary this build made (static: it runs in any guest).
std::string GuestBinaryPath();

// Writes the initramfs to `path`; throws std::runtime_error naming a file it cannot read.
void WriteInitramfs(const GuestImage& image, const std::string& path);

}  // namespace mrclab::emulator::netns
