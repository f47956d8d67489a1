// Test and benchmark support (needs root and iproute2): two network namespaces joined by one
// veth pair per plane (single packets on the wire, like lab links: gso_max_segs 1), with IPv6
// addresses fd00:99:<plane>::1/64 (side a) and ::2 (side b), added with nodad so they are
// usable at once. The destructor always deletes both namespaces
// (which deletes the veths); the constructor first sweeps namespaces left by dead processes
// ("<prefix><pid>-a/b" whose pid is gone), so even a crashed run leaves nothing behind for long.
#pragma once

#include <string>
#include <vector>

namespace mrclab::mrc::testing {

bool CanCreateNamespaces();  // root and `ip` available

class VethNamespacePair {
 public:
  // Namespaces are "<prefix><pid>-a" and "<prefix><pid>-b"; throws std::runtime_error on failure
  // after removing whatever it created.
  explicit VethNamespacePair(const std::string& prefix = "mrct-", int planes = 1, int mtu = 1500);
  ~VethNamespacePair();
  VethNamespacePair(const VethNamespacePair&) = delete;
  VethNamespacePair& operator=(const VethNamespacePair&) = delete;

  const std::string& ns_a() const { return ns_a_; }
  const std::string& ns_b() const { return ns_b_; }
  std::string address_a(int plane) const;
  std::string address_b(int plane) const;
  int planes() const { return planes_; }

 private:
  void Cleanup();
  std::string ns_a_, ns_b_;
  int planes_;
};

}  // namespace mrclab::mrc::testing
