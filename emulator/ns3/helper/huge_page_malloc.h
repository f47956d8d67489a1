// Huge pages for a simulation's heap. A simulation of thousands of hosts keeps hundreds of MiB
// of small objects (ports and their FIFOs, switches, queue pairs, workload ranks) that each
// packet-hop touches at random; on 4 KiB pages most of those touches also miss the TLB. glibc's
// malloc backs its heap with transparent huge pages when the tunable glibc.malloc.hugetlb=1 is
// set, and reads tunables only at start-up: so a simulating process re-executes itself once
// with it set (measured: the 8,192-host ring step 20-25% faster; the 1,024-host one the same),
// and with the heap kept once grown (no trim, 64 MiB top pad; the 8,192-host step's first 2 ms
// simulated about 9% faster again, PERFORMANCE.md).
//
//   main / the drill command ─► ReexecWithHugePageMalloc() ─► exec /proc/self/exe, same
//   arguments, GLIBC_TUNABLES += glibc.malloc.hugetlb=1, trim_threshold, top_pad ─► the same
//   command, huge-page heap
//
// Contract:
//   - Returns at once, changing nothing, when the tunable is already set (so the re-executed
//     process goes on), when MRCLAB_HUGE_PAGES=0 is in the environment (to measure without),
//     or when the kernel's transparent huge pages are "never" or absent.
//   - Otherwise replaces the process (same arguments, environment and open files) and does not
//     return; if the exec fails it returns and the process goes on without huge pages.
//   - Call it before the process has printed anything or started threads.
#pragma once

namespace mrclab::emulator::sim {

void ReexecWithHugePageMalloc();
// Whether this process's malloc asks for huge pages (the tunable is set).
bool HugePageMallocInEffect();

}  // namespace mrclab::emulator::sim
