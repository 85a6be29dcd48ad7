//===- Source.cpp ---------------------------------------------------------===//
#include "keel/support/Source.h"

#include <algorithm>
#include <fstream>
#include <sstream>

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
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read '" + path + "'";
    return std::nullopt;
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    error = "cannot read '" + path + "'";
    return std::nullopt;
  }
  if (text.str().size() >= (uint64_t{1} << 31)) {
    error = "'" + path + "' is too large (2 GiB or more)";
    return std::nullopt;
  }
  return add(path, text.str());
}

LineColumn SourceManager::lineColumn(FileId f, uint32_t offset) const {
  const std::vector<uint32_t> &starts = files_[f].lineStarts;
  auto it = std::upper_bound(starts.begin(), starts.end(), offset);
  uint32_t line = static_cast<uint32_t>(it - starts.begin());
  return {line, offset - starts[line - 1] + 1};
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

} // namespace keel
