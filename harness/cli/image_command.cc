#include "harness/cli/image_command.h"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "emulator/errors.h"
#include "emulator/netns/podman.h"
#include "emulator/netns/router_images.h"
#include "emulator/netns/vm_guest_image.h"

namespace mrclab::harness {
namespace {

namespace nx = emulator::netns;
using nlohmann::json;

json ToJson(const nx::RouterImage& image, const nx::RouterImageProbe* frr) {
  json out = {{"reference", image.reference}, {"id", image.id},        {"size_bytes", image.size_bytes},
              {"created", image.created},     {"suite", image.suite},  {"frr_package", image.frr_package},
              {"rootfs_sha256", image.rootfs_sha256}, {"mirror", image.mirror}};
  if (frr) out["frr_version"] = frr->frr_version;
  return out;
}

std::string Megabytes(uint64_t bytes) { return std::to_string((bytes + 500000) / 1000000) + " MB"; }

void Print(const nx::RouterImage& image, const std::string& verb, double seconds) {
  std::printf("%s %s (image %s, %s%s%s)%s\n", verb.c_str(), image.reference.c_str(), image.id.c_str(),
              Megabytes(image.size_bytes).c_str(), image.frr_package.empty() ? "" : ", frr ",
              image.frr_package.c_str(),
              seconds > 0 ? (" in " + std::to_string(static_cast<int>(seconds + 0.5)) + " s").c_str() : "");
}

struct ImageArgs {
  std::string suite, mirror = nx::kDebianMirror, archive, reference;
  bool rebuild = false, json_out = false;
};

// `mrclab image build guest`: the VM hosts' guest image (not a container image).
int BuildGuest(const ImageArgs& a) {
  const auto start = std::chrono::steady_clock::now();
  const bool cached = !a.rebuild && nx::FindGuestImage();
  const nx::GuestImage image = nx::BuildGuestImage({a.mirror, a.rebuild}, [&](const std::string& stage) {
    if (!a.json_out) std::fprintf(stderr, "  %s\n", stage.c_str());
  });
  if (cached) nx::VerifyGuestImage(image);  // a fresh build's hashes were just computed
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (a.json_out) {
    std::cout << json{{"dir", image.dir},         {"suite", image.suite},
                      {"kernel", image.kernel},   {"mirror", image.mirror},
                      {"packages", image.packages}, {"size_bytes", image.size_bytes},
                      {"rootfs_sha256", image.rootfs_sha256}, {"vmlinux_sha256", image.vmlinux_sha256},
                      {"recipe_sha256", image.recipe_sha256}, {"cached", cached},         {"seconds", seconds}}
                     .dump(2)
              << "\n";
    return emulator::kExitOk;
  }
  std::printf("%s the VM guest image %s (%s, kernel %s, %d packages, %s; rootfs sha256 %s, verified)%s\n",
              cached ? "already built:" : "built", image.dir.c_str(), image.suite.c_str(), image.kernel.c_str(),
              image.packages, Megabytes(image.size_bytes).c_str(), image.rootfs_sha256.substr(0, 12).c_str(),
              cached ? "" : (" in " + std::to_string(static_cast<int>(seconds + 0.5)) + " s").c_str());
  return emulator::kExitOk;
}

int Build(const ImageArgs& a) {
  if (a.suite == "guest") return BuildGuest(a);
  const auto start = std::chrono::steady_clock::now();
  const bool cached = !a.rebuild && nx::PodmanProblem().empty() && nx::FindRouterImage(nx::RouterImageTag(a.suite));
  const nx::RouterImage image = nx::BuildRouterImage({a.suite, a.mirror, a.rebuild}, [&](const std::string& stage) {
    if (!a.json_out) std::fprintf(stderr, "  %s\n", stage.c_str());
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (a.json_out) {
    json out = ToJson(image, nullptr);
    out["cached"] = cached;
    out["seconds"] = seconds;
    std::cout << out.dump(2) << "\n";
  } else {
    Print(image, cached ? "already built:" : "built", cached ? 0 : seconds);
    if (cached) std::printf("(--rebuild builds it again from the archive)\n");
  }
  return emulator::kExitOk;
}

int List(bool json_out) {
  if (const std::string problem = nx::PodmanProblem(); !problem.empty()) throw emulator::InputError(problem);
  const std::vector<nx::RouterImage> images = nx::ListRouterImages();
  if (json_out) {
    json out = json::array();
    for (const nx::RouterImage& image : images) out.push_back(ToJson(image, nullptr));
    std::cout << out.dump(2) << "\n";
    return emulator::kExitOk;
  }
  if (images.empty()) {
    std::printf("no router images in %s; build one: mrclab image build bookworm\n", nx::ContainerStorageRoot().c_str());
    return emulator::kExitOk;
  }
  std::printf("%-36s %-12s %-8s %-10s %s\n", "IMAGE", "ID", "SIZE", "SUITE", "FRR PACKAGE");
  for (const nx::RouterImage& image : images)
    std::printf("%-36s %-12s %-8s %-10s %s\n", image.reference.c_str(), image.id.c_str(),
                Megabytes(image.size_bytes).c_str(), image.suite.empty() ? "-" : image.suite.c_str(),
                image.frr_package.empty() ? "-" : image.frr_package.c_str());
  return emulator::kExitOk;
}

int Load(const std::string& archive, bool json_out) {
  const nx::RouterImage image = nx::LoadRouterImage(archive);
  const nx::RouterImageProbe frr = nx::ProbeRouterImage(image.reference);
  if (json_out) {
    std::cout << ToJson(image, &frr).dump(2) << "\n";
  } else {
    Print(image, "loaded", 0);
    std::printf("FRR %s; a lab file runs switches from it with: images: [{match: {...}, image: %s}]\n",
                frr.frr_version.c_str(), image.reference.c_str());
  }
  return emulator::kExitOk;
}

int Remove(const std::string& reference) {
  if (const std::string problem = nx::PodmanProblem(); !problem.empty()) throw emulator::InputError(problem);
  if (!nx::FindRouterImage(reference))
    throw emulator::InputError("no image '" + reference + "' in mrclab's image store (mrclab image list)");
  nx::RemoveRouterImage(reference);
  std::printf("removed %s\n", reference.c_str());
  return emulator::kExitOk;
}

}  // namespace

void AddImageCommand(CLI::App& app, int& exit_status) {
  auto a = std::make_shared<ImageArgs>();
  auto* image = app.add_subcommand("image", "Router images: FRR versions a lab's switches can run as containers");
  image->require_subcommand(1);
  std::string suites;
  for (const nx::RouterSuite& s : nx::RouterSuites())
    suites += "  " + s.name + std::string(s.name.size() < 10 ? 10 - s.name.size() : 1, ' ') + "FRR " + s.frr + "\n";
  image->footer(
      "A lab file runs switches from an image instead of this machine's FRR:\n"
      "  images:\n"
      "    - match: {role: spine}\n"
      "      image: mrclab/frr:trixie      # or archive: my-router.tar (podman save)\n"
      "Images live in mrclab's own store (" + nx::ContainerStorageRoot() + "), apart from the machine's podman.\n"
      "Suites mrclab builds from Debian's archive:\n" + suites);

  auto* build = image->add_subcommand("build", "Build the router image of a Debian suite (cached: built once)");
  build->add_option("suite", a->suite,
                    "Debian suite of a router image: bookworm (FRR 8.4) or trixie (FRR 10.3); or guest: the "
                    "VM hosts' guest image")
      ->required();
  build->add_option("--mirror", a->mirror,
                    "Debian archive to build from; a snapshot.debian.org URL pins its state "
                    "(e.g. http://snapshot.debian.org/archive/debian/20251101T000000Z)")
      ->capture_default_str();
  build->add_flag("--rebuild", a->rebuild, "Build again even if the image exists");
  build->add_flag("--json", a->json_out, "Print the image as JSON");
  build->footer(
      "debootstrap --variant=minbase SUITE, then apt-get install frr frr-pythontools in it, trimmed and\n"
      "archived with sorted names, numeric owners and times clamped to the suite's Release date, then\n"
      "podman import as localhost/mrclab/frr:SUITE. Needs root and network access to the mirror;\n"
      "about a minute. The image's labels record the FRR package, the mirror and the sha256 of its\n"
      "root filesystem; the installed packages are listed in " + nx::ContainerStorageRoot() + "/packages/SUITE.txt.\n\n"
      "mrclab image build guest: the guest image of VM hosts (runtimes: [{runtime: vm}] in a lab file):\n"
      "debootstrap bookworm with rdma-core, ibverbs-utils, rdmacm-utils and perftest, and Debian's kernel\n"
      "uncompressed for qemu's PVH boot with only the modules a VM host needs (virtio, 9p, rdma_rxe), in\n"
      "" + nx::GuestImageRoot() + "/bookworm; its sha256 (rootfs, vmlinux) is checked before every use.");
  build->callback([a, &exit_status] { exit_status = Build(*a); });

  auto* list = image->add_subcommand("list", "The router images in mrclab's store");
  list->add_flag("--json", a->json_out, "Print them as JSON");
  list->callback([a, &exit_status] { exit_status = List(a->json_out); });

  auto* load = image->add_subcommand("load", "Load your own router image from an archive (podman save output)");
  load->add_option("archive", a->archive, "Image archive (docker-archive or oci-archive)")->required();
  load->add_flag("--json", a->json_out, "Print the image as JSON");
  load->footer("The image needs FRR's daemons in /usr/lib/frr, /usr/bin/vtysh and /bin/sleep; frr-reload.py\n"
               "(frr-pythontools) and python3 too for config_change faults. An image in the machine's own\n"
               "podman: podman save -o my-router.tar IMAGE && mrclab image load my-router.tar");
  load->callback([a, &exit_status] { exit_status = Load(a->archive, a->json_out); });

  auto* rm = image->add_subcommand("rm", "Remove a router image from mrclab's store");
  rm->add_option("image", a->reference, "Image name or ID (mrclab image list)")->required();
  rm->callback([a, &exit_status] { exit_status = Remove(a->reference); });
}

}  // namespace mrclab::harness
