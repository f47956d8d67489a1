// `mrclab report RUN_DIR` and `mrclab compare RUN_A RUN_B ... [--out DIR]`: HTML and Markdown
// reports of drill runs. Both run the Python scripts reports/report.py and reports/compare.py of
// the source tree mrclab was built from with Debian's /usr/bin/python3, pass every argument
// through (so `mrclab report --help` is the script's own help) and return its exit status.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace mrclab::harness {

void AddReportCommands(CLI::App& app, int& exit_status);

// Writes RUN_DIR/report.html and report.md (reports/report.py); returns its exit status.
int WriteReport(const std::string& run_dir);

}  // namespace mrclab::harness
