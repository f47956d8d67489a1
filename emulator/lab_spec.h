// Lab files (labs/*.yaml) parsed into a LabSpec: the user's intent, not yet resolved.
//
// Contract: ParseLabFile/ParseLabText either return a spec in which every name is valid and
// unique, every link names existing nodes and distinct interfaces, and the clos block is
// sane — or throw LabError naming the file, the field (a YAML path such as
// "links[3].endpoints[1]") and the reason. Parsing touches no kernel state.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "emulator/errors.h"

namespace mrclab::emulator {

// "FILE: FIELD: REASON" — one line, fit for an SRE's terminal (control characters escaped).
class LabError : public Error {
 public:
  LabError(std::string file, std::string field, std::string reason);
  const std::string& file() const { return file_; }
  const std::string& field() const { return field_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string file_, field_, reason_;
};

enum class NodeKind { kSwitch, kHost };
enum class SwitchRole { kSpine, kLeaf };  // a leaf is a switch with host ports
enum class Routing { kBgp, kStatic };

struct ClosSpec {
  int planes = 0;
  int spines_per_plane = 0;
  int leaves_per_plane = 0;
  int hosts = 0;
  int hosts_per_leaf = 0;
};

struct NodeSpec {
  std::string name;
  NodeKind kind = NodeKind::kSwitch;
  std::optional<int> plane;             // switches only; default 0
  std::optional<SwitchRole> role;       // switches only; default: leaf if it has host links
};

struct EndpointSpec {
  std::string node;
  std::string interface;
};

struct LinkSpec {
  EndpointSpec a, b;
};

// Which nodes an entry of `sysctls:`, `frr_config:` or `images:` applies to (`match:`); all given must hold,
// none given matches every node.
struct NodeMatch {
  std::optional<std::string> node;      // this node
  std::optional<NodeKind> kind;         // switches or hosts
  std::optional<SwitchRole> role;       // spines or leaves
  std::optional<int> plane;             // switches of this plane
};

// Kernel settings for the nodes a selector matches (`sysctls:` in a lab file): what real switches
// tune, such as the ECMP hash policy or the neighbour table's limits. Only net.* settings, which
// every network namespace has its own copy of; applied after mrclab's own, in file order.
struct SysctlSpec {
  std::string field;                    // "sysctls[2]", for errors found when they are applied
  NodeMatch match;
  std::vector<std::pair<std::string, std::string>> settings;  // "net.ipv6.fib_multipath_hash_policy" -> "0"
};

// The switches' own FRR configuration (`frr_config:`): an integrated frr.conf as a Jinja2
// template rendered with the switch's plan (emulator/netns/frr_template.py), or as a plain file;
// instead of the one mrclab generates. A later entry wins for a switch two entries match.
struct FrrConfigSpec {
  std::string field;                    // "frr_config[1].template"
  NodeMatch match;
  std::string path;                     // as resolved against the lab file's folder
  bool is_template = false;
};

// Switches that run as containers from a router image (`images:`) instead of FRR installed on
// this machine: a tag in mrclab's image store (`mrclab image build` makes them) or an image
// archive (`podman save` output), loaded at deploy. A later entry wins for a switch two match.
struct ImageSpec {
  std::string field;                    // "images[0].image" or "images[0].archive"
  NodeMatch match;
  std::string reference;                // the tag, or the archive's path as resolved against the lab's folder
  bool is_archive = false;
};

// Hosts that run as small VMs with their own kernel (`runtimes:`, runtime: vm) instead of as a
// network namespace: real RDMA endpoints with the kernel's RoCEv2 (rdma_rxe), booted by qemu
// from mrclab's guest image (emulator/netns/vm_hosts.h). A later entry wins for a host two match;
// runtime: netns takes hosts an earlier entry made VMs back.
struct RuntimeSpec {
  std::string field;                    // "runtimes[0]"
  NodeMatch match;
  bool vm = false;                      // runtime: vm | netns
  uint32_t memory_mib = 256;            // memory: 256MiB (VMs only)
  uint32_t cpus = 1;                    // cpus: 1 (VMs only)
};
inline constexpr uint32_t kMinVmMemoryMib = 128, kMaxVmMemoryMib = 16384, kMaxVmCpus = 16;

// A link's MTU (bytes of IPv6 packet): the default, and the range a lab may set with `mtu:`.
inline constexpr uint32_t kDefaultLinkMtu = 1500, kMinLinkMtu = 1280, kMaxLinkMtu = 9216;

// The most links a clos block may generate: twice the paper's 131,072-host, 8-plane fabric
// (2,097,152 links, ~11 GiB simulated). Beyond it no machine here could even plan the lab.
inline constexpr uint64_t kMaxClosLinks = uint64_t{1} << 22;

struct LabSpec {
  std::string name;         // [a-z][a-z0-9-]{0,15}
  std::string source;       // file path (or "<string>") for error messages
  std::optional<ClosSpec> clos;
  Routing routing = Routing::kBgp;
  std::optional<uint64_t> link_rate_bps;  // "1Gbit", "100Mbit", "500kbit", "10Gbit"
  std::optional<uint64_t> link_delay_ns;  // "500ns", "1us", "2.5us"; simulation only
  uint32_t mtu = kDefaultLinkMtu;         // bytes of IPv6 packet on every link (jumbo: 9000)
  std::optional<uint64_t> bfd_interval_ns;  // "300ms", "1s"... ; none: DefaultBfdInterval (resolved_lab.h)
  std::vector<NodeSpec> nodes;  // generated nodes first (if clos), then explicit ones
  std::vector<LinkSpec> links;  // generated links first (if clos), then explicit ones
  std::vector<SysctlSpec> sysctls;
  std::vector<FrrConfigSpec> frr_configs;
  std::vector<ImageSpec> images;
  std::vector<RuntimeSpec> runtimes;
};

LabSpec ParseLabFile(const std::string& path);
// True when `text` names a lab file rather than a deployed lab ("labs/x.yaml", "x.yml",
// "./x"): a lab's name never holds '/' or a .yaml/.yml suffix.
bool IsLabFilePath(const std::string& text);
// Files a lab file names (frr_config, image archives) are found relative to its folder: files_dir, or
// LabFilesDir(source_name) when empty. check_files false: not read (a deployed lab's saved text,
// whose files were checked and used at deploy).
struct ParseOptions {
  std::string files_dir;
  bool check_files = true;
};
LabSpec ParseLabText(const std::string& yaml_text, const std::string& source_name, const ParseOptions& options = {});
// The absolute folder of a lab file (the current directory for "<string>" sources).
std::string LabFilesDir(const std::string& source_name);

// How a lab file's counts are read: a non-negative decimal integer of at most 9 digits (leading
// zeros too: "0319" is 319) no larger than `max`; nullopt if the text is not one.
std::optional<int> ParseLabInteger(const std::string& text, int max);

// "1Gbit" -> 1000000000; at least kMinLinkRateBps. Throws std::invalid_argument with a reason.
constexpr uint64_t kMinLinkRateBps = 100000;
uint64_t ParseRate(const std::string& text);
// "1us" -> 1000 (nanoseconds; units ns, us, ms; decimals allowed down to 1 ns; at most 1 s).
// Throws std::invalid_argument with a reason.
uint64_t ParseDelay(const std::string& text);
// "100Mbit", "1Gbit", "1500kbit", "7bit": the largest decimal unit that divides the rate.
std::string FormatRate(uint64_t rate_bps);

}  // namespace mrclab::emulator
