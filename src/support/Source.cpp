//===- Source.cpp ---------------------------------------------------------===//
#include "keel/support/Source.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

namespace keel {

FileId SourceManager::add(std::string name, std::string text) {
  File f{std::move(name), std::move(text), {0}};
  for (uint32_t i = 0; i < f.text.size(); ++i)
    if (f.text[i] == '\n')
      f.lineStarts.push_back(i + 1);
  files_.push_back(std::move(f));
  return static_cast<FileId>(files_.size() - 1);
}

std::optional<FileId> SourceManager::load(const std::string &path, std::string &error) {
  std::string text;
  if (!readFileBounded(path, kMaxSourceBytes, text, error))
    return std::nullopt;
  return add(path, std::move(text));
}

bool readFileBounded(const std::string &path, uint64_t limit, std::string &text, std::string &error) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    error = "cannot read '" + path + "': " + std::strerror(errno);
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    error = "'" + path + "' is a directory, not a file";
    return false;
  }
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) || S_ISSOCK(st.st_mode)) {
    error = "'" + path + "' is a device or socket, not a file";
    return false;
  }
  std::FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) {
    error = "cannot read '" + path + "': " + std::strerror(errno);
    return false;
  }
  // Read in pieces and stop at the limit: a device such as /dev/zero, or a
  // pipe that never ends, is refused after `limit` bytes, not read to the end.
  text.clear();
  char buffer[1 << 16];
  for (;;) {
    size_t n = std::fread(buffer, 1, sizeof buffer, f);
    if (text.size() + n > limit) {
      std::fclose(f);
      error = "'" + path + "' is too large (more than " + std::to_string(limit) + " bytes)";
      return false;
    }
    text.append(buffer, n);
    if (n < sizeof buffer)
      break;
  }
  bool bad = std::ferror(f);
  std::fclose(f);
  if (bad) {
    error = "cannot read '" + path + "'";
    return false;
  }
  return true;
}

LineColumn SourceManager::lineColumn(FileId f, uint32_t offset) const {
  const std::vector<uint32_t> &starts = files_[f].lineStarts;
  auto it = std::upper_bound(starts.begin(), starts.end(), offset);
  uint32_t line = static_cast<uint32_t>(it - starts.begin());
  return {line, offset - starts[line - 1] + 1};
}

Span SourceManager::spanAt(std::string_view name, uint32_t line, uint32_t column) const {
  for (FileId f = 0; f < files_.size(); ++f) {
    if (files_[f].name != name || line == 0 || line > lineCount(f) || column == 0)
      continue;
    uint32_t offset = files_[f].lineStarts[line - 1] + column - 1;
    if (offset < files_[f].text.size())
      return {f, offset, offset + 1};
  }
  return {};
}

std::string_view SourceManager::lineText(FileId f, uint32_t line) const {
  const File &file = files_[f];
  uint32_t begin = file.lineStarts[line - 1];
  uint32_t end = line < file.lineStarts.size() ? file.lineStarts[line] - 1
                                                : static_cast<uint32_t>(file.text.size());
  std::string_view text = std::string_view(file.text).substr(begin, end - begin);
  if (!text.empty() && text.back() == '\r')
    text.remove_suffix(1);
  return text;
}

bool writeFileAtomically(const std::string &path, std::string_view contents, std::string &error) {
  std::string temp = path + ".tmp." + std::to_string(getpid());
  std::FILE *f = std::fopen(temp.c_str(), "wb");
  if (!f) {
    error = "cannot write " + path + ": " + std::strerror(errno);
    return false;
  }
  bool ok = std::fwrite(contents.data(), 1, contents.size(), f) == contents.size();
  ok &= std::fclose(f) == 0;
  if (!ok || std::rename(temp.c_str(), path.c_str()) != 0) {
    error = "cannot write " + path + ": " + std::strerror(errno);
    std::remove(temp.c_str());
    return false;
  }
  return true;
}

} // namespace keel
