// Router images: container images with FRR that a lab's switches run from (`images:` in a lab
// file). mrclab builds them from Debian's archive (`mrclab image build SUITE`) into its own
// image store (podman.h), or loads a user's archive (`podman save` output).
//
//   mrclab image build trixie ─► build_router_image.sh (debootstrap, apt-get install frr, trim,
//        tar) ─► podman import ─► localhost/mrclab/frr:trixie  (labels: suite, frr version,
//        sha256 of the root filesystem archive, mirror)
//   deploy ─► ProbeRouterImage: what FRR it has (version, whether mgmtd runs beside zebra)
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mrclab::emulator::netns {

// The Debian suites `mrclab image build` knows, and what FRR each packages.
struct RouterSuite {
  std::string name;   // "bookworm"
  std::string frr;    // "8.4"
};
const std::vector<RouterSuite>& RouterSuites();

// "localhost/mrclab/frr:SUITE": the image built from SUITE.
std::string RouterImageTag(const std::string& suite);
inline constexpr const char* kDebianMirror = "http://deb.debian.org/debian";

// "VALUE" of a build script's line "KEY VALUE" (build_router_image.sh, build_guest_image.sh).
std::string ScriptValue(const std::string& output, const std::string& key);

struct RouterImage {
  std::string reference;  // as a lab names it: a tag, "localhost/..." or an ID
  std::string id;         // podman's image ID (12 hex digits)
  std::string suite, frr_package, rootfs_sha256, mirror;  // labels of images mrclab built
  uint64_t size_bytes = 0;
  std::string created;
};

// The image a reference names in mrclab's image store, if there is one.
std::optional<RouterImage> FindRouterImage(const std::string& reference);
std::vector<RouterImage> ListRouterImages();

struct RouterImageBuild {
  std::string suite;
  std::string mirror = kDebianMirror;  // e.g. a snapshot.debian.org URL, to pin the archive's state
  bool rebuild = false;                // build even if the tag exists
};
// Builds (or finds, unless rebuild) the image of a suite; `stage` hears each step. Throws
// InputError for an unknown suite or missing tools, std::runtime_error when a step fails (its
// log's last lines). Nothing is left behind but the image.
RouterImage BuildRouterImage(const RouterImageBuild& build, const std::function<void(const std::string&)>& stage);

// Loads an image archive (`podman save` output) into mrclab's store; returns the image.
RouterImage LoadRouterImage(const std::string& archive);

// Removes an image from mrclab's store; throws std::runtime_error with podman's reason.
void RemoveRouterImage(const std::string& reference);

// What a switch running the image needs to know: FRR's version and the daemons it has beyond
// those the lab runs (FRR 9 and later route static configuration through mgmtd).
struct RouterImageProbe {
  std::string frr_version;  // "10.3"
  bool has_mgmtd = false;
};
// Runs the image once (no network) and asks its zebra; throws std::runtime_error saying what is
// missing (no FRR daemons in /usr/lib/frr, no vtysh, no /bin/sleep).
RouterImageProbe ProbeRouterImage(const std::string& reference);

}  // namespace mrclab::emulator::netns
