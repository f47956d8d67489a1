// qemu's machine protocol (QMP) of a VM host, served on VM_DIR/qmp.sock: what faults need of
// the VM itself. A link fault on a VM host's link takes the leaf's tap down and drops the
// carrier of the guest's NIC (set_link), as unplugging a cable does at both ends: the guest's
// kernel and rdma_rxe see the port go down.
//
//   faults (link_down, switch_down of its leaf, plane_down) ─► QmpSetLink ─► qmp.sock ─► qemu
//     ─► virtio-net link status ─► the guest's carrier (and rxe's port state)
#pragma once

#include <string>

namespace mrclab::emulator::netns {

// "VM_DIR/qmp.sock".
std::string QmpSocketPath(const std::string& vm_dir);

// Sets the link of the VM's NIC `nic` (its port index, 0..) up or down. Throws
// std::runtime_error naming the socket when qemu cannot be reached or refuses (a VM deployed by
// an mrclab without QMP: redeploy the lab).
void QmpSetLink(const std::string& vm_dir, int nic, bool up);

}  // namespace mrclab::emulator::netns
