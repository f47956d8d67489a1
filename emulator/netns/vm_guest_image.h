// The guest image of VM hosts (`runtimes: [{runtime: vm}]` in a lab file): Debian bookworm with
// the kernel's RDMA user space, and Debian's kernel for qemu's PVH boot, built from Debian's
// archive on first use and kept in mrclab's own folder.
//
//   mrclab image build guest / first deploy of a VM host
//     ─► build_guest_image.sh (debootstrap, kernel package, module closure) ─► DIR/
//          rootfs/          the root filesystem, shared read-only with every VM over 9p
//          vmlinux          the kernel, uncompressed (PVH entry)
//          initrd.modules   what the initramfs loads to reach the root filesystem
//          image.json       suite, kernel, packages, mirror, sha256 of rootfs (a sorted tar
//                           stream) and of vmlinux: checked before every deploy; sha256 of
//                           the recipe (the build scripts): an image built by another recipe
//                           is built again on first use
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "emulator/netns/router_images.h"

namespace mrclab::emulator::netns {

inline constexpr const char* kGuestSuite = "bookworm";

std::string GuestImageRoot();  // /var/lib/mrclab/guest, or $MRCLAB_GUEST_DIR

struct GuestImage {
  std::string dir;  // GuestImageRoot()/SUITE
  std::string suite, kernel, mirror, rootfs_sha256, vmlinux_sha256, recipe_sha256;
  int packages = 0;
  uint64_t size_bytes = 0;
  int64_t built = 0;  // unix time
  std::string Rootfs() const { return dir + "/rootfs"; }
  std::string Vmlinux() const { return dir + "/vmlinux"; }
};

// The image built by the current recipe, if there is one (an older image is as good as none).
std::optional<GuestImage> FindGuestImage();
// The hash of the build scripts the image is made by (what a cached image must have been built by).
std::string GuestImageRecipeSha256();

struct GuestImageBuild {
  std::string mirror = kDebianMirror;
  bool rebuild = false;
};
// Builds the guest image (or finds it, unless rebuild); `stage` hears each step. Throws
// InputError (not root, debootstrap missing), std::runtime_error when a step fails.
GuestImage BuildGuestImage(const GuestImageBuild& build, const std::function<void(const std::string&)>& stage);

// Recomputes the image's hashes; throws std::runtime_error naming what changed since it was built.
void VerifyGuestImage(const GuestImage& image);

}  // namespace mrclab::emulator::netns
