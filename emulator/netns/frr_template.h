// The lab file's own FRR configurations (`frr_config:`): rendered, checked, and entered into a
// switch's daemons.
//
//   lab file ─► ResolvedNode::frr_config ─► UserFrrConfigs ─┬─ file: read as it is
//                                                           ├─ template: frr_template.py (Jinja2) with
//                                                           │  the switch's plan, lab and generated config
//                                                           └─ vtysh --dryrun: FRR's own parser
//                                                              (the router image's, if it has one)
//   deploy: daemons start with StartupFrrConfigs ─► ApplyFrrConfigs: NODE_DIR/frr.conf, vtysh -f
//           (a switch from a router image gets the generated configuration this way too)
//   a daemon restarted (switch_down reverted, ...) ─► EnterFrrConfig: vtysh -d DAEMON -f frr.conf
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "emulator/netns/frr_tools.h"
#include "emulator/netns/lab_state.h"
#include "emulator/resolved_lab.h"

namespace mrclab::emulator::netns {

// "" when templates can be rendered and checked here; else what is missing and which package.
std::string FrrTemplateProblem(const ResolvedLab& lab);

// node -> the configuration it runs instead of the generated one, for every switch with its own.
// `images`: node -> the router image it runs (loaded: container_switch.h), whose vtysh checks it.
// Nothing is made. Throws LabError naming the lab file's field, the template's file and line
// (Jinja2's message) or the configuration's line and FRR's message.
std::map<std::string, std::string> UserFrrConfigs(const ResolvedLab& lab,
                                                  const std::map<std::string, std::string>& images = {});

// The variables a switch's template sees, as JSON (node, lab, generated).
std::string FrrTemplateVariables(const ResolvedLab& lab, const ResolvedNode& node);

// Writes each switch's text (node -> its configuration) to its node directory's frr.conf and
// enters it into the switch's running daemons (vty sockets there) with the switch's vtysh,
// `parallel` switches at a time: vtysh waits for each line's reply (a leaf's 2,056 static
// routes: 1.1 s, mostly waiting). Says after each round how many are done. Throws Interrupted
// on Ctrl-C, and LabError naming the field, the line and FRR's message when a daemon refuses
// a command.
void ApplyFrrConfigs(const ResolvedLab& lab, const LabPaths& paths, const std::map<std::string, std::string>& configs,
                     const std::map<std::string, std::vector<std::string>>& daemons_of, int parallel,
                     const std::function<void(size_t done)>& on_progress);

// The switch's configuration (node_dir/frr.conf, if it has one) entered again into these
// daemons, restarted since. Throws std::runtime_error with FRR's message.
void EnterFrrConfig(const FrrTools& tools, const std::string& node_dir, const std::vector<std::string>& daemons);

}  // namespace mrclab::emulator::netns
