//===- Options.cpp - The option table, --help texts and usage errors -----===//
#include "Options.h"

#include <cstdio>
#include <vector>

namespace keel::driver {

namespace {

struct OptionRow {
  std::string_view spelling, value, commands, help;
};

constexpr OptionRow kOptions[] = {
#define KEEL_OPTION(SPELLING, VALUE, COMMANDS, HELP) {SPELLING, VALUE, COMMANDS, HELP},
#include "Options.def"
};

struct CommandRow {
  std::string_view name;
  char letter;
  std::string_view synopsis, summary;
};

constexpr CommandRow kCommands[] = {
    {"check", 'c', "keel check [OPTIONS] FILE...",
     "Parses and checks .sfn files, proving every shape rule, and reports every error."},
    {"run", 'r',
     "keel run [OPTIONS] FILE\n"
     "       keel run [OPTIONS] FILE --entry F --arg NAME=FILE.npy|NAME=random:SEED... [--bind N=4] [--out DIR]",
     "Runs the program's main (the exit status is main's int), or a tensor function on .npy or random inputs."},
    {"test", 't', "keel test [OPTIONS] FILE", "Runs each test block of FILE in a process of its own and reports each by name."},
    {"emit", 'e',
     "keel emit --loop|--llvm|--llvm-opt [OPTIONS] FILE\n"
     "       keel emit --linalg|--stablehlo [OPTIONS] FILE --entry F [--bind N=4] [--main --arg NAME=SPEC...]",
     "Prints the loop IR or LLVM IR of a program, or a tensor function as MLIR linalg or StableHLO."},
    {"ir", 'i', "keel ir [OPTIONS] FILE --entry F [--bind N=4,...]",
     "Prints the tensor IR of a function instantiated at the given sizes."},
    {"opt", 'o', "keel opt [OPTIONS] IRFILE", "Parses, verifies and prints tensor IR text, after the passes asked for."},
    {"cache", 'k', "keel cache [--clear] [--cache-dir DIR]",
     "Prints where the compile cache is, its entries and their size (bounded by $KEEL_CACHE_MAX_SIZE, default 1G); "
     "--clear empties it."},
};

const CommandRow *command(std::string_view name) {
  for (const CommandRow &c : kCommands)
    if (c.name == name)
      return &c;
  return nullptr;
}

} // namespace

OptionClass classifyOption(std::string_view commandName, std::string_view arg) {
  if (arg.size() < 2 || arg[0] != '-')
    return OptionClass::NotAnOption;
  if (arg == "--help" || arg == "-h")
    return OptionClass::Help;
  const CommandRow *c = command(commandName);
  std::string_view name = arg.substr(0, arg.find('='));
  for (const OptionRow &o : kOptions) {
    if (!c || o.commands.find(c->letter) == std::string_view::npos || o.spelling != name)
      continue;
    // --NAME=VALUE only for the options written so.
    if (name.size() == arg.size() || (!o.value.empty() && o.value[0] == '='))
      return OptionClass::Known;
  }
  usageError(commandName, "unknown option '" + std::string(arg) + "'");
  return OptionClass::Unknown;
}

std::string helpText(std::string_view commandName) {
  const CommandRow *c = command(commandName);
  if (!c)
    return "";
  std::string out = "usage: " + std::string(c->synopsis) + "\n\n" + std::string(c->summary) + "\n\noptions:\n";
  std::vector<std::pair<std::string, std::string_view>> rows;
  size_t width = 0;
  for (const OptionRow &o : kOptions) {
    if (o.commands.find(c->letter) == std::string_view::npos || o.help.substr(0, 10) == "test only:")
      continue;
    std::string left = std::string(o.spelling) + (o.spelling == "--help" ? ", -h" : "");
    if (!o.value.empty())
      left += o.value[0] == '=' ? std::string(o.value) : " " + std::string(o.value);
    width = std::max(width, left.size());
    rows.push_back({left, o.help});
  }
  for (const auto &[left, help] : rows)
    out += "  " + left + std::string(width + 2 - left.size(), ' ') + std::string(help) + "\n";
  return out;
}

int usageError(std::string_view commandName, const std::string &message) {
  std::fflush(stdout);
  std::fprintf(stderr, "keel %.*s: error: %s\nsee 'keel %.*s --help'\n", static_cast<int>(commandName.size()),
               commandName.data(), message.c_str(), static_cast<int>(commandName.size()), commandName.data());
  return 2;
}

} // namespace keel::driver
