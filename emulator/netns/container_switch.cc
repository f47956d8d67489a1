#include "emulator/netns/container_switch.h"

#include <set>
#include <stdexcept>

#include "emulator/errors.h"
#include "emulator/netns/frr_daemons.h"
#include "emulator/netns/namespaces.h"
#include "emulator/netns/podman.h"
#include "emulator/netns/processes.h"

namespace mrclab::emulator::netns {
namespace {

// What to run to get an image a lab names but this machine does not have.
std::string HowToGet(const std::string& reference) {
  for (const RouterSuite& s : RouterSuites())
    if (reference == RouterImageTag(s.name) || "localhost/" + reference == RouterImageTag(s.name))
      return "build it: mrclab image build " + s.name;
  return "load its archive (mrclab image load FILE) or name one of: mrclab image list";
}

}  // namespace

SwitchImages PrepareRouterImages(const ResolvedLab& lab) {
  SwitchImages out;
  std::map<std::string, std::string> loaded;  // archive -> reference
  for (const ResolvedNode* sw : lab.Switches()) {
    if (!sw->image) continue;
    if (const std::string problem = PodmanProblem(); !problem.empty())
      throw LabError(lab.source, sw->image->field, problem);
    const ResolvedNode::Image& want = *sw->image;
    std::string reference = want.reference;
    if (want.is_archive) {
      if (!loaded.count(want.reference)) {
        try {
          loaded[want.reference] = LoadRouterImage(want.reference).reference;
        } catch (const std::exception& e) {
          throw LabError(lab.source, want.field, e.what());
        }
      }
      reference = loaded[want.reference];
    }
    out.reference[sw->name] = reference;
    if (out.image.count(reference)) continue;
    std::optional<RouterImage> image = FindRouterImage(reference);
    if (!image)
      throw LabError(lab.source, want.field,
                     "no image '" + reference + "' in mrclab's image store (" + ContainerStorageRoot() + "); " +
                         HowToGet(reference));
    try {
      out.frr[reference] = ProbeRouterImage(reference);
    } catch (const std::exception& e) {
      throw LabError(lab.source, want.field, "'" + reference + "' cannot run a switch: " + e.what());
    }
    out.image[reference] = *image;
  }
  return out;
}

std::vector<std::string> ImageDaemons(const ResolvedLab& lab, const RouterImageProbe& frr) {
  std::vector<std::string> daemons = DaemonsFor(lab);
  // FRR 9 and later: static routes (and more) are configured through mgmtd, started after zebra.
  if (frr.has_mgmtd) daemons.insert(daemons.begin() + 1, "mgmtd");
  return daemons;
}

void StartSwitchContainers(const ResolvedLab& lab, const LabPaths& paths, const SwitchImages& images, Journal& journal) {
  std::vector<const ResolvedNode*> switches;
  std::vector<std::vector<std::string>> runs;
  for (const ResolvedNode* sw : lab.Switches()) {
    if (!sw->image) continue;
    const std::string name = ContainerName(lab.name, sw->name);
    journal.RecordContainer(name);
    switches.push_back(sw);
    // FRR's forwarding setting writes /proc/sys, which is read-only in a container: set it here.
    runs.push_back(Podman({"run", "--detach", "--name", name,
                           "--label", std::string(kLabLabel) + "=" + lab.name,
                           "--network", "ns:" + NetnsPath(sw->netns),
                           "--uts", "ns:" + paths.UtsPath(sw->name),
                           "--pid", "host",
                           "--cap-add", "NET_ADMIN,NET_RAW,SYS_ADMIN",
                           "--sysctl", "net.ipv6.conf.all.forwarding=1",
                           "--volume", paths.root + ":" + paths.root,
                           images.reference.at(sw->name), "/bin/sleep", "infinity"}));
  }
  const std::vector<CommandResult> results = RunAllAndWait(runs, kPodmanParallel);
  for (size_t i = 0; i < results.size(); ++i)
    if (results[i].status != 0)
      throw std::runtime_error(switches[i]->name + ": podman run " + images.reference.at(switches[i]->name) + ": " +
                               results[i].output.substr(0, results[i].output.find('\n')));
}

int RemoveSwitchContainers(const std::string& lab_name, const std::vector<JournalEntry>& journal,
                           std::vector<std::string>& problems) {
  std::set<std::string> names;
  for (const JournalEntry& e : journal)
    if (e.kind == "container") names.insert(e.what);
  if (names.empty()) return 0;  // a lab of namespace switches only: podman plays no part
  for (const std::string& name : LabContainers(lab_name)) names.insert(name);
  std::string why;
  if (!RemoveContainers({names.begin(), names.end()}, &why)) {
    problems.push_back(why);
    return static_cast<int>(names.size() - LabContainers(lab_name).size());
  }
  return static_cast<int>(names.size());
}

}  // namespace mrclab::emulator::netns
