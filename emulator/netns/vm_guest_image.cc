#include "emulator/netns/vm_guest_image.h"

#include <stdlib.h>
#include <unistd.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "emulator/errors.h"
#include "emulator/netns/processes.h"

namespace mrclab::emulator::netns {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string ScriptDir() { return std::string(MRCLAB_SOURCE_DIR) + "/emulator/netns/"; }
std::string BuildScript() { return ScriptDir() + "build_guest_image.sh"; }

std::string Sha256(const std::vector<std::string>& argv_shell) {
  std::string output;
  if (RunAndWait(argv_shell, &output) != 0) throw std::runtime_error("hashing failed: " + output);
  return output.substr(0, output.find(' '));
}

// The root filesystem's hash: a tar stream with sorted names and numeric owners (what is in it,
// not where or when it was unpacked).
std::string RootfsSha256(const std::string& rootfs) {
  return Sha256({"/bin/bash", "-o", "pipefail", "-c", "tar --sort=name --numeric-owner -C \"$1\" -cf - . | sha256sum",
                 "bash", rootfs});
}
std::string FileSha256(const std::string& path) { return Sha256({"sha256sum", path}); }

uint64_t TreeBytes(const std::string& dir) {
  uint64_t bytes = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator(); it.increment(ec))
    if (it->is_regular_file(ec) && !it->is_symlink(ec)) bytes += it->file_size(ec);
  return bytes;
}

}  // namespace

std::string GuestImageRoot() {
  const char* dir = getenv("MRCLAB_GUEST_DIR");
  return dir && *dir ? dir : "/var/lib/mrclab/guest";
}

std::string GuestImageRecipeSha256() {
  return Sha256({"/bin/bash", "-o", "pipefail", "-c", "cat \"$@\" | sha256sum", "bash", BuildScript(),
                 ScriptDir() + "build_steps.sh", ScriptDir() + "guest_kernel.py"});
}

std::optional<GuestImage> FindGuestImage() {
  GuestImage image;
  image.dir = GuestImageRoot() + "/" + kGuestSuite;
  std::ifstream in(image.dir + "/image.json");
  if (!in) return std::nullopt;
  const json doc = json::parse(in, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return std::nullopt;
  image.suite = doc.value("suite", "");
  image.kernel = doc.value("kernel", "");
  image.mirror = doc.value("mirror", "");
  image.rootfs_sha256 = doc.value("rootfs_sha256", "");
  image.vmlinux_sha256 = doc.value("vmlinux_sha256", "");
  image.recipe_sha256 = doc.value("recipe_sha256", "");
  image.packages = doc.value("packages", 0);
  image.size_bytes = doc.value("size_bytes", uint64_t{0});
  image.built = doc.value("built", int64_t{0});
  if (image.recipe_sha256 != GuestImageRecipeSha256()) return std::nullopt;  // built by another recipe
  return image;
}

GuestImage BuildGuestImage(const GuestImageBuild& build, const std::function<void(const std::string&)>& stage) {
  if (std::optional<GuestImage> cached = FindGuestImage(); cached && !build.rebuild) return *cached;
  if (geteuid() != 0) throw InputError("building the VM guest image needs root (debootstrap, chroot); run it with sudo");
  if (access("/usr/sbin/debootstrap", X_OK) != 0)
    throw InputError("debootstrap is missing: building the VM guest image needs the Debian package debootstrap (run .ci/setup)");
  fs::create_directories(GuestImageRoot());
  std::string pattern = GuestImageRoot() + "/.build-XXXXXX";
  if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create a folder under " + GuestImageRoot());
  const std::string work = pattern;
  struct Cleanup {
    std::string dir;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{work};
  const std::string out = work + "/image";
  stage("debootstrap " + std::string(kGuestSuite) + " from " + build.mirror + " with rdma-core and perftest, and its kernel");
  std::string output;
  if (RunAndWait({"/bin/bash", BuildScript(), kGuestSuite, build.mirror, work, out}, &output) != 0)
    throw std::runtime_error("building the VM guest image failed: " + output);
  stage("hashing the root filesystem and the kernel");
  GuestImage image;
  image.dir = GuestImageRoot() + "/" + kGuestSuite;
  image.suite = kGuestSuite;
  image.kernel = ScriptValue(output, "kernel");
  image.mirror = build.mirror;
  image.packages = std::atoi(ScriptValue(output, "packages").c_str());
  image.rootfs_sha256 = RootfsSha256(out + "/rootfs");
  image.vmlinux_sha256 = FileSha256(out + "/vmlinux");
  image.recipe_sha256 = GuestImageRecipeSha256();
  image.size_bytes = TreeBytes(out);
  image.built = std::time(nullptr);
  std::ofstream(out + "/image.json") << json{{"suite", image.suite},
                                             {"kernel", image.kernel},
                                             {"mirror", image.mirror},
                                             {"packages", image.packages},
                                             {"rootfs_sha256", image.rootfs_sha256},
                                             {"vmlinux_sha256", image.vmlinux_sha256},
                                             {"recipe_sha256", image.recipe_sha256},
                                             {"size_bytes", image.size_bytes},
                                             {"built", image.built}}
                                            .dump(2)
                                     << "\n";
  // The finished image replaces the old one in two renames: a VM never sees half of either.
  std::error_code ec;
  const std::string old = work + "/old";
  fs::rename(image.dir, old, ec);
  fs::rename(out, image.dir);
  return image;
}

void VerifyGuestImage(const GuestImage& image) {
  const std::string fix = "; build it again: mrclab image build guest --rebuild";
  if (!fs::is_directory(image.Rootfs()) || !fs::is_regular_file(image.Vmlinux()) ||
      !fs::is_regular_file(image.dir + "/initrd.modules"))
    throw std::runtime_error("the VM guest image in " + image.dir + " is incomplete" + fix);
  if (FileSha256(image.Vmlinux()) != image.vmlinux_sha256)
    throw std::runtime_error("the VM guest image's kernel " + image.Vmlinux() + " changed since it was built" + fix);
  if (RootfsSha256(image.Rootfs()) != image.rootfs_sha256)
    throw std::runtime_error("the VM guest image's root filesystem " + image.Rootfs() + " changed since it was built" + fix);
}

}  // namespace mrclab::emulator::netns
