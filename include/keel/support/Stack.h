//===- keel/support/Stack.h - Running on a stack of known size -*- C++ -*-===//
//
// Keel's passes recurse over expression trees, and a long expression chain
// (a sum of 100,000 terms is a valid program) makes a deep tree. The
// driver runs every command on a thread with a large stack, and the
// parser bounds how deep a tree may be (docs/reliability.md), so that no
// input overflows the compiler's stack.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_SUPPORT_STACK_H
#define KEEL_SUPPORT_STACK_H

#include <cstddef>
#include <functional>

namespace keel {

/// The stack the driver gives the compiler: 1 GiB of address space, of
/// which only what a command uses is ever touched.
inline constexpr size_t kCompilerStackBytes = size_t{1} << 30;

/// Runs `body` on a new thread with a stack of `bytes` and returns its
/// result; runs it on the calling thread if no such thread can be made.
int runWithStack(size_t bytes, const std::function<int()> &body);

} // namespace keel

#endif // KEEL_SUPPORT_STACK_H
