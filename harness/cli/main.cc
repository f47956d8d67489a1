// mrclab: emulation testbed and chaos harness for multi-plane AI training fabrics.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "emulator/errors.h"
#include "emulator/lab_spec.h"
#include "emulator/netns/interrupt.h"
#include "harness/cli/capacity_command.h"
#include "harness/cli/drill_command.h"
#include "harness/cli/fault_command.h"
#include "harness/cli/image_command.h"
#include "harness/cli/lab_commands.h"
#include "harness/cli/perf_command.h"
#include "harness/cli/report_command.h"

int main(int argc, char** argv) {
  namespace emulator = mrclab::emulator;
  CLI::App app{
      "mrclab — boot multi-plane Clos fabrics as network namespaces with FRRouting and SRv6 "
      "uSIDs, run MRC over them, and inject faults.",
      "mrclab"};
  app.require_subcommand(1);
  app.footer(
      "Typical session:\n"
      "  mrclab deploy labs/clos2.yaml        # boot and verify the default lab\n"
      "  mrclab inspect clos2                 # nodes, uSIDs, daemons, BGP state (--json)\n"
      "  mrclab exec clos2 p0-spine0 -- vtysh -c 'show bgp summary'\n"
      "  mrclab perf clos2 host0 host5        # MRC goodput over 32 uSID paths, bytes verified\n"
      "  mrclab destroy clos2                 # remove every trace, even after a crash\n"
      "State lives under /run/mrclab/NAME/. Run `mrclab COMMAND --help` for details.");
  int exit_status = 0;
  mrclab::harness::LabArgs lab_args;
  mrclab::harness::AddLabCommands(app, lab_args, exit_status);
  mrclab::harness::AddPerfCommand(app, exit_status);
  mrclab::harness::AddFaultCommand(app, exit_status);
  mrclab::harness::AddDrillCommand(app, exit_status);
  mrclab::harness::AddCapacityCommand(app, exit_status);
  mrclab::harness::AddReportCommands(app, exit_status);
  mrclab::harness::AddImageCommand(app, exit_status);
  mrclab::emulator::netns::InstallInterruptHandlers();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? emulator::kExitOk : emulator::kExitInputError;
  } catch (const emulator::netns::Interrupted&) {
    std::fprintf(stderr, "mrclab: interrupted; everything made was rolled back\n");
    return emulator::kExitInterrupted;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mrclab: error: %s\n", e.what());
    return emulator::ExitStatusOf(e);  // emulator/errors.h: 2 bad input or environment, 1 failed
  }
  return exit_status;
}
