//===- Lexer.cpp ----------------------------------------------------------===//
//
// token  = name | number | string | punct
// name   = [A-Za-z_][A-Za-z0-9_]*
// number = digit (digit | "_")* ("." digit (digit | "_")*)? (("e"|"E") ("+"|"-")? digit+)?
//          ("1..n" lexes as 1, .., n: a "." followed by "." ends the number)
// string = '"' (char | escape | "${" ... "}")* '"'
//
//===----------------------------------------------------------------------===//
#include "keel/syntax/Lexer.h"

#include "keel/support/Codes.h"
#include "keel/support/Text.h"

#include <cstdio>
#include <string>

namespace keel {

std::span<const DiagnosticCodeInfo> allDiagnosticCodes() {
#define KEEL_DIAGNOSTIC_CODE_ROW(Code, Meaning) DiagnosticCodeInfo{#Code, Meaning},
  static constexpr DiagnosticCodeInfo kCodes[] = {KEEL_DIAGNOSTIC_CODES(KEEL_DIAGNOSTIC_CODE_ROW)};
#undef KEEL_DIAGNOSTIC_CODE_ROW
  return kCodes;
}

} // namespace keel

namespace keel::syntax {

std::string_view tokenSpelling(Tok t) {
  switch (t) {
#define KEEL_TOKEN_CASE(Name, Spelling)                                        \
  case Tok::Name:                                                              \
    return Spelling;
    KEEL_TOKENS(KEEL_TOKEN_CASE)
#undef KEEL_TOKEN_CASE
  }
  return "?";
}

bool isUnsupportedKeyword(Tok t) { return t >= Tok::KwStruct && t <= Tok::KwSpawn; }

namespace {

bool isNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isNameChar(char c) { return isNameStart(c) || isDigit(c); }

Tok keywordOrName(std::string_view word) {
  for (Tok t = Tok::KwFn; t <= Tok::KwSpawn; t = static_cast<Tok>(static_cast<int>(t) + 1))
    if (tokenSpelling(t) == word)
      return t;
  return Tok::Name;
}

class Lexer {
public:
  Lexer(const SourceManager &sources, FileId file, DiagnosticEngine &diags, uint32_t begin,
        uint32_t end)
      : text_(sources.text(file)), file_(file), diags_(diags), pos_(begin),
        end_(std::min<uint32_t>(end, static_cast<uint32_t>(text_.size()))) {
    // A UTF-8 byte-order mark at the start of a file is not text.
    if (pos_ == 0 && text_.substr(0, 3) == "\xEF\xBB\xBF")
      pos_ = 3;
  }

  std::vector<Token> run() {
    std::vector<Token> tokens;
    for (;;) {
      skipTrivia();
      if (pos_ >= end_) {
        tokens.push_back({Tok::Eof, {file_, end_, end_}});
        return tokens;
      }
      tokens.push_back(next());
    }
  }

private:
  char peek(uint32_t ahead = 0) const { return pos_ + ahead < end_ ? text_[pos_ + ahead] : '\0'; }
  Span span(uint32_t from) const { return {file_, from, pos_}; }

  void skipTrivia() {
    while (pos_ < end_) {
      char c = peek();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (c == '/' && peek(1) == '/') {
        while (pos_ < end_ && peek() != '\n')
          ++pos_;
      } else if (c == '/' && peek(1) == '*') {
        uint32_t start = pos_;
        pos_ += 2;
        while (pos_ < end_ && !(peek() == '*' && peek(1) == '/'))
          ++pos_;
        if (pos_ >= end_) {
          diags_.error(code::E0005, {file_, start, start + 2}, "unterminated block comment")
              .help("close it with `*/`");
          return;
        }
        pos_ += 2;
      } else {
        return;
      }
    }
  }

  Token next() {
    uint32_t start = pos_;
    char c = peek();
    if (isNameStart(c)) {
      while (isNameChar(peek()))
        ++pos_;
      return {keywordOrName(text_.substr(start, pos_ - start)), span(start)};
    }
    if (isDigit(c))
      return number(start);
    if (c == '"')
      return string(start);
    return punct(start);
  }

  Token number(uint32_t start) {
    bool isFloat = false, bad = false;
    auto digits = [&] {
      bool any = false;
      while (isDigit(peek()) || peek() == '_') {
        any |= isDigit(peek());
        ++pos_;
      }
      return any;
    };
    digits();
    if (peek() == '.' && isDigit(peek(1))) {
      isFloat = true;
      ++pos_;
      digits();
    }
    if ((peek() == 'e' || peek() == 'E') &&
        (isDigit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && isDigit(peek(2))))) {
      isFloat = true;
      pos_ += (peek(1) == '+' || peek(1) == '-') ? 2 : 1;
      digits();
    }
    // A number running into a name ("12abc", "1.5f") is one malformed token.
    while (isNameChar(peek())) {
      bad = true;
      ++pos_;
    }
    std::string_view t = text_.substr(start, pos_ - start);
    if (!bad && (t.back() == '_' || t.find("__") != std::string_view::npos ||
                 t.find("_.") != std::string_view::npos || t.find("._") != std::string_view::npos))
      bad = true;
    if (bad) {
      diags_.error(code::E0004, span(start), "malformed number literal `" + std::string(t) + "`")
          .note("numbers are digits with `_` between them (`1_000`), an optional fraction "
                "(`3.14`) and an optional exponent (`1.0e-6`); there are no suffixes");
      return {Tok::Error, span(start)};
    }
    return {isFloat ? Tok::Float : Tok::Int, span(start)};
  }

  Token string(uint32_t start) {
    ++pos_; // opening quote
    int braceDepth = 0;
    while (pos_ < end_) {
      char c = peek();
      if (c == '\n' && braceDepth == 0)
        break;
      if (braceDepth == 0 && c == '"') {
        ++pos_;
        return {Tok::String, span(start)};
      }
      if (c == '\\') {
        pos_ += 2;
        continue;
      }
      if (braceDepth == 0 && c == '$' && peek(1) == '{') {
        braceDepth = 1;
        pos_ += 2;
        continue;
      }
      if (braceDepth > 0 && c == '{')
        ++braceDepth;
      if (braceDepth > 0 && c == '}')
        --braceDepth;
      ++pos_;
    }
    diags_.error(code::E0002, {file_, start, start + 1}, "unterminated string literal")
        .help("close the string with `\"` on the same line");
    return {Tok::Error, span(start)};
  }

  Token punct(uint32_t start) {
    struct P {
      std::string_view text;
      Tok kind;
    };
    // Longest first.
    static constexpr P kPunct[] = {
        {"..", Tok::DotDot},  {"->", Tok::Arrow},     {"=>", Tok::FatArrow}, {"+=", Tok::PlusAssign},
        {"-=", Tok::MinusAssign}, {"*=", Tok::StarAssign}, {"/=", Tok::SlashAssign},
        {"==", Tok::EqEq},    {"!=", Tok::NotEq},     {"<=", Tok::LessEq},   {">=", Tok::GreaterEq},
        {"&&", Tok::AmpAmp},  {"||", Tok::PipePipe},  {"(", Tok::LParen},    {")", Tok::RParen},
        {"[", Tok::LBracket}, {"]", Tok::RBracket},   {"{", Tok::LBrace},    {"}", Tok::RBrace},
        {",", Tok::Comma},    {":", Tok::Colon},      {";", Tok::Semi},      {".", Tok::Dot},
        {"=", Tok::Assign},   {"<", Tok::Less},       {">", Tok::Greater},   {"+", Tok::Plus},
        {"-", Tok::Minus},    {"*", Tok::Star},       {"/", Tok::Slash},     {"%", Tok::Percent},
        {"&", Tok::Amp},      {"|", Tok::Pipe},       {"^", Tok::Caret},     {"~", Tok::Tilde},
        {"!", Tok::Bang},     {"?", Tok::Question},   {"@", Tok::At},        {"#", Tok::Hash},
    };
    std::string_view rest = text_.substr(pos_, end_ - pos_);
    for (const P &p : kPunct) {
      if (rest.substr(0, p.text.size()) == p.text) {
        pos_ += static_cast<uint32_t>(p.text.size());
        return {p.kind, span(start)};
      }
    }
    // Not part of the language: report a whole UTF-8 character once, or one
    // byte that is not well-formed UTF-8, naming it by number.
    std::string_view here = text_.substr(0, end_);
    unsigned char lead = static_cast<unsigned char>(peek());
    size_t length = utf8Length(here, pos_);
    char hex[16];
    if (length == 0) {
      ++pos_;
      std::snprintf(hex, sizeof hex, "0x%02X", lead);
      diags_.error(code::E0001, span(start), std::string("invalid UTF-8: byte ") + hex + " is not part of a character")
          .note("Keel source is UTF-8 text");
      return {Tok::Error, span(start)};
    }
    pos_ += static_cast<uint32_t>(length);
    std::snprintf(hex, sizeof hex, "U+%04X", utf8CodePoint(here, start));
    std::string shown = lead < 0x20 || lead == 0x7F ? std::string("control character ") + hex
                                                     : "`" + std::string(text_.substr(start, pos_ - start)) + "` (" + hex + ")";
    diags_.error(code::E0001, span(start), "unexpected character " + shown);
    return {Tok::Error, span(start)};
  }

  std::string_view text_;
  FileId file_;
  DiagnosticEngine &diags_;
  uint32_t pos_, end_;
};

} // namespace

std::vector<Token> lex(const SourceManager &sources, FileId file, DiagnosticEngine &diags,
                       uint32_t begin, uint32_t end) {
  return Lexer(sources, file, diags, begin, end).run();
}

} // namespace keel::syntax
