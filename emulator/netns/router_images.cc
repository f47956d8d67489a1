#include "emulator/netns/router_images.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "emulator/errors.h"
#include "emulator/netns/podman.h"
#include "emulator/netns/processes.h"

namespace mrclab::emulator::netns {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string BuildScript() { return std::string(MRCLAB_SOURCE_DIR) + "/emulator/netns/build_router_image.sh"; }

std::string FirstLine(const std::string& text) {
  const std::string line = text.substr(0, text.find('\n'));
  return line.empty() ? "(no output)" : line;
}

std::string Label(const json& labels, const char* key) {
  return labels.is_object() ? labels.value(key, std::string()) : std::string();
}

RouterImage FromInspect(const std::string& reference, const json& doc) {
  RouterImage image;
  image.reference = reference;
  image.id = doc.value("Id", std::string()).substr(0, 12);
  image.size_bytes = doc.value("Size", uint64_t{0});
  image.created = doc.value("Created", std::string());
  const json labels = doc.contains("Labels") ? doc["Labels"] : json();
  image.suite = Label(labels, "mrclab.suite");
  image.frr_package = Label(labels, "mrclab.frr_package");
  image.rootfs_sha256 = Label(labels, "mrclab.rootfs_sha256");
  image.mirror = Label(labels, "mrclab.mirror");
  return image;
}

// A folder for one build, removed when done (debootstrap's tree is ~300 MB).
class BuildDir {
 public:
  BuildDir() {
    fs::create_directories(ContainerStorageRoot() + "/build");
    std::string pattern = ContainerStorageRoot() + "/build/image-XXXXXX";
    if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create a folder under " + ContainerStorageRoot());
    path_ = pattern;
  }
  ~BuildDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

std::string ScriptValue(const std::string& output, const std::string& key) {
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + " ", 0) == 0) return line.substr(key.size() + 1);
  return "";
}

const std::vector<RouterSuite>& RouterSuites() {
  static const std::vector<RouterSuite> suites = {{"bookworm", "8.4"}, {"trixie", "10.3"}};
  return suites;
}

std::string RouterImageTag(const std::string& suite) { return "localhost/mrclab/frr:" + suite; }

std::optional<RouterImage> FindRouterImage(const std::string& reference) {
  std::string output;
  if (RunPodman({"image", "inspect", reference}, &output) != 0) return std::nullopt;
  const json doc = json::parse(output, nullptr, false);
  if (doc.is_discarded() || !doc.is_array() || doc.empty()) return std::nullopt;
  return FromInspect(reference, doc[0]);
}

std::vector<RouterImage> ListRouterImages() {
  std::string output;
  std::vector<RouterImage> images;
  if (!fs::exists(ContainerStorageRoot() + "/storage")) return images;  // nothing built or loaded yet
  if (RunPodman({"images", "--format", "json"}, &output) != 0)
    throw std::runtime_error("podman images: " + FirstLine(output));
  const json doc = json::parse(output, nullptr, false);
  if (doc.is_discarded() || !doc.is_array()) return images;
  for (const json& entry : doc) {
    const std::string id = entry.value("Id", std::string());
    std::vector<std::string> names;
    if (entry.contains("Names") && entry["Names"].is_array()) names = entry["Names"].get<std::vector<std::string>>();
    if (names.empty()) names.push_back(id.substr(0, 12));
    for (const std::string& name : names)
      if (std::optional<RouterImage> image = FindRouterImage(name)) images.push_back(*image);
  }
  return images;
}

RouterImage BuildRouterImage(const RouterImageBuild& build, const std::function<void(const std::string&)>& stage) {
  bool known = false;
  std::string suites;
  for (const RouterSuite& s : RouterSuites()) {
    known |= s.name == build.suite;
    suites += (suites.empty() ? "" : ", ") + s.name + " (FRR " + s.frr + ")";
  }
  if (!known) throw InputError("unknown suite '" + build.suite + "'; mrclab builds router images from " + suites);
  if (const std::string problem = PodmanProblem(); !problem.empty()) throw InputError(problem);
  if (access("/usr/sbin/debootstrap", X_OK) != 0)
    throw InputError("debootstrap is missing: building router images needs the Debian package debootstrap (run .ci/setup)");
  if (geteuid() != 0) throw InputError("building a router image needs root (debootstrap, chroot); run it with sudo");
  const std::string tag = RouterImageTag(build.suite);
  const std::optional<RouterImage> cached = FindRouterImage(tag);
  if (cached && !build.rebuild) return *cached;

  BuildDir dir;
  const std::string archive = dir.path() + "/rootfs.tar";
  std::string output;
  stage("debootstrap " + build.suite + " from " + build.mirror + ", FRR from its archive");
  if (RunAndWait({"/bin/bash", BuildScript(), build.suite, build.mirror, dir.path(), archive}, &output) != 0)
    throw std::runtime_error("building the " + build.suite + " router image failed: " + output);
  std::string sum;
  if (RunAndWait({"sha256sum", archive}, &sum) != 0) throw std::runtime_error("sha256sum " + archive + ": " + sum);
  sum = sum.substr(0, sum.find(' '));
  stage("podman import as " + tag);
  const std::string frr = ScriptValue(output, "frr");
  if (RunPodman({"import",
                 "--change", "CMD [\"/bin/sleep\", \"infinity\"]",
                 "--change", "LABEL mrclab.suite=" + build.suite,
                 "--change", "LABEL mrclab.frr_package=" + frr,
                 "--change", "LABEL mrclab.rootfs_sha256=" + sum,
                 "--change", "LABEL mrclab.mirror=" + build.mirror,
                 archive, tag},
                &output) != 0)
    throw std::runtime_error("podman import " + tag + ": " + FirstLine(output));
  std::error_code ec;
  fs::create_directories(ContainerStorageRoot() + "/packages", ec);
  fs::copy_file(archive + ".packages", ContainerStorageRoot() + "/packages/" + build.suite + ".txt",
                fs::copy_options::overwrite_existing, ec);
  std::optional<RouterImage> image = FindRouterImage(tag);
  if (!image) throw std::runtime_error("podman import " + tag + " left no image");
  // The image it replaces, unless a container still runs from it (then it stays, untagged).
  if (cached && cached->id != image->id) RunPodman({"rmi", cached->id}, &output);
  return *image;
}

RouterImage LoadRouterImage(const std::string& archive) {
  if (const std::string problem = PodmanProblem(); !problem.empty()) throw InputError(problem);
  if (!fs::is_regular_file(archive)) throw InputError(archive + ": no such image archive");
  std::string output;
  if (RunPodman({"load", "--quiet", "--input", archive}, &output) != 0)
    throw InputError(archive + ": podman cannot load it: " + FirstLine(output));
  // "Loaded image: localhost/x:y" or "Loaded image(s): ..." (one per line).
  const std::string marker = ": ";
  std::string reference;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("Loaded image", 0) == 0 && line.find(marker) != std::string::npos)
      reference = line.substr(line.find(marker) + marker.size());
  if (const size_t comma = reference.find(','); comma != std::string::npos) reference.resize(comma);
  std::optional<RouterImage> image = reference.empty() ? std::nullopt : FindRouterImage(reference);
  if (!image) throw InputError(archive + ": podman loaded no image from it: " + FirstLine(output));
  return *image;
}

void RemoveRouterImage(const std::string& reference) {
  std::string output;
  if (RunPodman({"rmi", reference}, &output) != 0)
    throw std::runtime_error("podman rmi " + reference + ": " + FirstLine(output));
}

RouterImageProbe ProbeRouterImage(const std::string& reference) {
  std::string output;
  const int status = RunPodman({"run", "--rm", "--network", "none", "--entrypoint", "/bin/sh", reference, "-c",
                                "test -x /usr/lib/frr/zebra && test -x /usr/bin/vtysh && test -x /bin/sleep || "
                                "{ echo 'it lacks FRR (/usr/lib/frr/zebra, /usr/bin/vtysh) or /bin/sleep'; exit 1; }; "
                                "/usr/lib/frr/zebra --version | head -n 1; test -x /usr/lib/frr/mgmtd && echo mgmtd; true"},
                               &output);
  if (status != 0) throw std::runtime_error(FirstLine(output));
  RouterImageProbe probe;
  const std::string first = FirstLine(output);  // "zebra version 10.3"
  const size_t at = first.rfind(' ');
  probe.frr_version = at == std::string::npos ? first : first.substr(at + 1);
  probe.has_mgmtd = output.find("\nmgmtd") != std::string::npos;
  return probe;
}

}  // namespace mrclab::emulator::netns
