// Runs the ns-3 test suites of the model: mrclab_ns3_model_tests --suite=NAME, --list, ...
// (ns3::TestRunner's options; ctest runs one suite per test).
#include "ns3/test.h"

int main(int argc, char* argv[]) { return ns3::TestRunner::Run(argc, argv); }
