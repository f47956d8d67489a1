#!/usr/bin/env bash
# Checks that a prefetch hint survives the optimiser (mrc/core/prefetch.h): a function whose
# only work is hints must still be called, and RingQueue::Prefetch must still prefetch. With
# __builtin_prefetch, GCC counted the hints as no side effect, found such functions pure and
# deleted every call to them that it did not inline, so the simulation's later prefetch stages
# never ran. Usage: prefetch_codegen.sh CXX SOURCE_DIR. Exit 77 (skipped) off x86-64 and aarch64.
set -euo pipefail
cxx=$1 src=$2
case $(uname -m) in
  x86_64) insn=prefetcht0 ;;
  aarch64) insn=prfm ;;
  *) echo "SKIPPED: no prefetch instruction known for $(uname -m)" >&2; exit 77 ;;
esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/hints.cc" <<'CODE'
#include "mrc/core/prefetch.h"
#include "mrc/core/ring_queue.h"
struct Slot { int words[16]; };
// A hint function kept out of line: what Qp::PrefetchState and Context::Prefetch are to their
// callers in another file.
__attribute__((noinline)) static void OnlyHints(const char* p) {
  mrclab::mrc::PrefetchLine(p);
  mrclab::mrc::PrefetchLine(p + 64);
}
extern "C" void CallsOnlyHints(const char* p) { OnlyHints(p); }
extern "C" void CallsRingPrefetch(const mrclab::mrc::RingQueue<Slot>& q) { q.Prefetch(); }
CODE
# The body of function $2 in the disassembly $1: its instructions, one a line.
body() { awk -v f="<$2>:" '$2 == f { on = 1; next } on && NF == 0 { exit } on { print }' "$1"; }
status=0
for opt in -O2 -O3; do
  "$cxx" -std=c++20 "$opt" -I"$src" -c "$tmp/hints.cc" -o "$tmp/hints.o"
  objdump -d --no-show-raw-insn "$tmp/hints.o" > "$tmp/hints.s"
  calls=$(body "$tmp/hints.s" CallsOnlyHints)
  if ! grep -qE "call|jmp|$insn" <<<"$calls"; then
    echo "FAIL ($opt): the call to a function of hints alone was deleted; CallsOnlyHints is:" >&2
    echo "$calls" >&2
    status=1
  fi
  ring=$(body "$tmp/hints.s" CallsRingPrefetch)
  if (( $(grep -c "$insn" <<<"$ring" || true) < 2 )) && ! grep -qE "call|jmp" <<<"$ring"; then
    echo "FAIL ($opt): RingQueue::Prefetch prefetches nothing; CallsRingPrefetch is:" >&2
    echo "$ring" >&2
    status=1
  fi
done
[[ $status == 0 ]] && echo "prefetch hints survive -O2 and -O3 ($cxx)"
exit $status
