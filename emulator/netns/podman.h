// Podman as mrclab runs it, apart from the machine's own podman: its own image and container
// storage (/var/lib/mrclab/containers, native overlay), its own run state (/run/mrclab-podman)
// and its own containers.conf there (runc, cgroupfs, file events, ulimits this machine allows:
// podman's defaults exceed them). No daemon and no registry are involved.
//
//   mrclab ─► Podman({"run", ...}) ─► podman --root ... --runroot ... run ...   (CONTAINERS_CONF set)
#pragma once

#include <string>
#include <vector>

namespace mrclab::emulator::netns {

// Image and container storage: /var/lib/mrclab/containers, or $MRCLAB_CONTAINERS_DIR.
std::string ContainerStorageRoot();

// "" when podman and runc can run here; else what is missing and how to install it.
std::string PodmanProblem();

// The command line of `podman ARGS...` with mrclab's storage and settings.
std::vector<std::string> Podman(const std::vector<std::string>& args);

// Runs `podman ARGS...`, output captured; returns its exit status.
int RunPodman(const std::vector<std::string>& args, std::string* output);

// The container of a lab's switch: "mrclab-LAB-NODE"; labelled mrclab.lab=LAB.
std::string ContainerName(const std::string& lab, const std::string& node);
inline constexpr const char* kLabLabel = "mrclab.lab";

// Removes the containers (their processes killed at once) with one podman command; true when
// all are gone (or never were).
bool RemoveContainers(const std::vector<std::string>& names, std::string* why);

// The containers labelled with this lab, running or not.
std::vector<std::string> LabContainers(const std::string& lab);

}  // namespace mrclab::emulator::netns
