// Switches that run as containers from a router image (`images:` in a lab file) instead of with
// this machine's FRR. The container joins the namespaces mrclab made for the switch (network,
// UTS) and shares the machine's PID namespace, so FRR's pid files hold PIDs that mrclab checks
// and signals like any other daemon's; the lab's state folder is mounted at the same path, so
// the daemons' sockets, logs and configuration are where a namespace switch has them. Links,
// SRv6 behaviours, sysctls and faults are made from outside, as for any switch.
//
//   deploy ─► PrepareRouterImages: archives loaded, each image probed once (FRR version, mgmtd)
//          ─► StartSwitchContainers: journal "container NAME" first, then podman run (sleep)
//          ─► podman exec --detach NAME: zebra, then the others   (frr_daemons.h)
//          ─► vtysh inside the container enters the configuration (frr_template.h)
//   destroy ─► podman rm --force: every journalled container, and any labelled with the lab
#pragma once

#include <map>
#include <string>

#include "emulator/netns/lab_state.h"
#include "emulator/netns/router_images.h"
#include "emulator/resolved_lab.h"

namespace mrclab::emulator::netns {

struct SwitchImages {
  std::map<std::string, std::string> reference;  // node -> the image it runs (an archive: what it loaded)
  std::map<std::string, RouterImage> image;      // reference -> the image
  std::map<std::string, RouterImageProbe> frr;   // reference -> its FRR
};

// The images of the lab's container switches, ready to run. Throws InputError when podman is
// missing, LabError naming the images entry when an image is absent, or lacks FRR.
SwitchImages PrepareRouterImages(const ResolvedLab& lab);

// The daemons a switch runs from an image: the lab's, with mgmtd after zebra if the image has it.
std::vector<std::string> ImageDaemons(const ResolvedLab& lab, const RouterImageProbe& frr);

// Starts the containers of the lab's container switches (no FRR daemon yet), several at a
// time, each recorded in the journal before any is made.
void StartSwitchContainers(const ResolvedLab& lab, const LabPaths& paths, const SwitchImages& images, Journal& journal);

// How many podman commands deploy runs at a time.
inline constexpr int kPodmanParallel = 8;

// Removes the lab's containers: those journalled and any labelled with the lab. Returns how many
// were removed; problems are appended.
int RemoveSwitchContainers(const std::string& lab_name, const std::vector<JournalEntry>& journal,
                           std::vector<std::string>& problems);

}  // namespace mrclab::emulator::netns
