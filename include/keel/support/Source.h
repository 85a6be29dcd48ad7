//===- keel/support/Source.h - Source files and spans ---------*- C++ -*-===//
//
// Every AST node and IR operation carries a Span: a file and a half-open
// byte range [begin, end). Lines and columns are computed on demand, both
// 1-based, columns counted in bytes (tabs count as one).
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_SUPPORT_SOURCE_H
#define KEEL_SUPPORT_SOURCE_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace keel {

using FileId = uint32_t;
inline constexpr FileId kNoFile = ~FileId{0};

struct Span {
  FileId file = kNoFile;
  uint32_t begin = 0, end = 0;

  bool valid() const { return file != kNoFile; }
  /// The smallest span covering both (same file).
  Span to(Span other) const { return {file, begin, other.end > end ? other.end : end}; }
};

struct LineColumn {
  uint32_t line = 0, column = 0;
};

/// Spans hold 32-bit offsets: a source file is at most 2 GiB - 1 bytes.
inline constexpr uint64_t kMaxSourceBytes = (uint64_t{1} << 31) - 1;

/// Reads the file at `path` into `text`; false with `error` set when it
/// cannot be opened or read, is a directory, or holds more than `limit`
/// bytes (reading stops there, so an endless device is refused quickly).
bool readFileBounded(const std::string &path, uint64_t limit, std::string &text, std::string &error);

/// Writes `contents` to `path` all or nothing: into a temporary file beside
/// it, then renamed over it; false with `error` set (and no file left
/// behind) when anything fails.
bool writeFileAtomically(const std::string &path, std::string_view contents, std::string &error);

class SourceManager {
public:
  /// Registers a buffer under a display name; returns its id.
  FileId add(std::string name, std::string text);
  /// Reads a file; nullopt (and `error` set) when it cannot be read, is a
  /// directory, or is longer than kMaxSourceBytes.
  std::optional<FileId> load(const std::string &path, std::string &error);

  std::string_view name(FileId f) const { return files_[f].name; }
  std::string_view text(FileId f) const { return files_[f].text; }
  std::string_view slice(Span s) const {
    return text(s.file).substr(s.begin, s.end - s.begin);
  }
  LineColumn lineColumn(FileId f, uint32_t offset) const;
  /// The text of 1-based line `line`, without its newline.
  std::string_view lineText(FileId f, uint32_t line) const;
  uint32_t lineCount(FileId f) const {
    return static_cast<uint32_t>(files_[f].lineStarts.size());
  }
  /// The one-character span at 1-based `line`:`column` of the file loaded
  /// under `name` (a location recorded in IR); invalid when there is none.
  Span spanAt(std::string_view name, uint32_t line, uint32_t column) const;

private:
  struct File {
    std::string name, text;
    std::vector<uint32_t> lineStarts;
  };
  std::vector<File> files_;
};

} // namespace keel

#endif // KEEL_SUPPORT_SOURCE_H
