//===- keel/support/ProgramRoots.h - Where a whole program starts -*- C++ -*-===//
//
// Which of a program's functions a whole-program compilation starts from
// (`keel run`: main; `keel test`: the test blocks; `keel emit`: both).
// Only what they call, directly or not, is lowered and compiled; the rest
// was checked and is left there. The pipeline's request names it and
// instantiation follows it; defined here so both share one definition.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_SUPPORT_PROGRAMROOTS_H
#define KEEL_SUPPORT_PROGRAMROOTS_H

#include <cstdint>

namespace keel {

enum class ProgramRoots : uint8_t {
  Main,         ///< `main`, when the program has one
  Tests,        ///< every test block
  MainAndTests, ///< both: everything the program can run
  Everything,   ///< every function, reached or not (tests of the lowering itself)
};

} // namespace keel

#endif // KEEL_SUPPORT_PROGRAMROOTS_H
