//===- Parser.cpp - Text to tensor IR ------------------------------------===//
//
// module   = func*
// func     = "func" @NAME "(" (VALUE ":" type),* ")" "->" results effects? loc? "{" op* "}"
// effects  = "!" "[" IDENT,* "]"       (support/Effects.h; unknown or repeated: E0300)
// results  = type | "(" type,* ")"
// op       = (VALUE,+ "=")? MNEMONIC ("." CODE)? (@CALLEE)? "(" VALUE,* ")" attrs?
//            ":" type,* loc? region?
//          | "return" VALUE,* loc?
// region   = "{" "^" "(" (VALUE ":" type),* ")" ":" op* "}"
// attrs    = "{" (KEY ("=" (INT | DTYPE | "[" (INT | HEX),* "]"))?),* "}"
//            (the keys and their kinds: Ops.def's KEEL_IR_ATTR rows)
// type     = DTYPE "[" INT,* "]" ("{" INT,* "}")?   (the layout right after `]`)
// loc      = "loc" "(" STRING ":" INT ":" INT ")"
// `//` starts a comment. A value may be used before its definition (the
// verifier reports that); one that is never defined is a parse error.
//
//===----------------------------------------------------------------------===//
#include "keel/ir/Text.h"
#include "keel/ir/Infer.h"
#include "keel/support/Codes.h"
#include "keel/support/Effects.h"
#include "keel/support/Text.h"

#include <algorithm>
#include <charconv>
#include <map>

namespace keel::ir {

namespace {

struct ParseError {};

enum class T { End, Value, Global, Ident, Int, Hex, String, Punct };

struct Tok {
  T kind = T::End;
  std::string text;
  Span span;
};

class IrParser {
public:
  IrParser(const SourceManager &sources, FileId file, DiagnosticEngine &diags)
      : sources_(sources), file_(file), diags_(diags), text_(sources.text(file)) {}

  std::optional<Module> run() {
    Module m;
    try {
      advance(); // the first token may already be malformed (an unterminated string)
      while (cur_.kind != T::End)
        m.functions.push_back(function());
    } catch (const ParseError &) {
      return std::nullopt;
    }
    return m;
  }

private:
  //===-- Lexing ---------------------------------------------------------===//
  static bool wordChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
  }

  void advance() {
    lastEnd_ = cur_.span.end;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        ++pos_;
      } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
        while (pos_ < text_.size() && text_[pos_] != '\n')
          ++pos_;
      } else {
        break;
      }
    }
    uint32_t start = static_cast<uint32_t>(pos_);
    cur_ = Tok{};
    if (pos_ >= text_.size()) {
      cur_.span = {file_, start, start};
      return;
    }
    char c = text_[pos_];
    auto word = [&] {
      while (pos_ < text_.size() && wordChar(text_[pos_]))
        ++pos_;
    };
    if (c == '%' || c == '@') {
      ++pos_;
      word();
      if (pos_ == start + 1) // a bare `%` or `@`
        failAt({file_, start, start + 1}, c == '%' ? "`%` must be followed by a value name (`%0`, `%x`)"
                                                   : "`@` must be followed by a function name (`@main`)");
      cur_.kind = c == '%' ? T::Value : T::Global;
    } else if (c == '0' && pos_ + 1 < text_.size() && text_[pos_ + 1] == 'x') {
      pos_ += 2;
      word();
      cur_.kind = T::Hex;
    } else if ((c >= '0' && c <= '9') || (c == '-' && pos_ + 1 < text_.size() && text_[pos_ + 1] >= '0' &&
                                          text_[pos_ + 1] <= '9')) {
      ++pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9')
        ++pos_;
      cur_.kind = T::Int;
    } else if (wordChar(c)) {
      word();
      cur_.kind = T::Ident;
    } else if (c == '"') {
      ++pos_;
      std::string s;
      while (pos_ < text_.size() && text_[pos_] != '"' && text_[pos_] != '\n') {
        if (text_[pos_] == '\\' && pos_ + 1 < text_.size())
          ++pos_;
        s += text_[pos_++];
      }
      if (pos_ >= text_.size() || text_[pos_] != '"')
        failAt({file_, start, start + 1}, "unterminated string");
      ++pos_;
      cur_.kind = T::String;
      cur_.text = s;
      cur_.span = {file_, start, static_cast<uint32_t>(pos_)};
      return;
    } else if (c == '-' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '>') {
      pos_ += 2;
      cur_.kind = T::Punct;
    } else {
      ++pos_;
      cur_.kind = T::Punct;
    }
    cur_.span = {file_, start, static_cast<uint32_t>(pos_)};
    cur_.text = std::string(text_.substr(start, pos_ - start));
  }

  //===-- Helpers ----------------------------------------------------------===//
  [[noreturn]] void failAt(Span at, const std::string &message) {
    diags_.error(code::E0300, at, message);
    throw ParseError{};
  }
  [[noreturn]] void fail(const std::string &message) {
    failAt(cur_.span, message + ", found " + (cur_.kind == T::End ? "end of file" : "`" + cur_.text + "`"));
  }
  bool isPunct(std::string_view p) const { return cur_.kind == T::Punct && cur_.text == p; }
  bool accept(std::string_view p) {
    if (!isPunct(p))
      return false;
    advance();
    return true;
  }
  void expect(std::string_view p) {
    if (!accept(p))
      fail("expected `" + std::string(p) + "`");
  }
  Tok take(T kind, const char *what) {
    if (cur_.kind != kind)
      fail(std::string("expected ") + what);
    Tok t = cur_;
    advance();
    return t;
  }
  int64_t integer() {
    Tok t = take(T::Int, "an integer");
    int64_t v = 0;
    auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc() || p != t.text.data() + t.text.size())
      failAt(t.span, "integer `" + t.text + "` out of range");
    return v;
  }
  std::vector<int64_t> intList(const char *open, const char *close) {
    std::vector<int64_t> v;
    expect(open);
    while (!isPunct(close)) {
      v.push_back(integer());
      if (!accept(","))
        break;
    }
    expect(close);
    return v;
  }

  DType dtype() {
    Tok t = take(T::Ident, "an element type");
    std::optional<DType> d = parseDType(t.text);
    if (!d)
      failAt(t.span, "unknown element type `" + t.text + "`");
    return *d;
  }

  /// A type, and where it is in the text.
  TensorType type(Span *at = nullptr) {
    uint32_t begin = cur_.span.begin;
    TensorType t;
    t.dtype = dtype();
    t.shape = intList("[", "]");
    // A layout is written right after the `]`: `f32[2,3]{0,1}`. A `{` after
    // a space opens a fusion region instead.
    bool layout = isPunct("{") && cur_.span.begin == lastEnd_;
    t.minorToMajor = layout ? intList("{", "}") : TensorType::rowMajor(t.shape.size());
    if (at)
      *at = {file_, begin, lastEnd_};
    return t;
  }

  /// An explicit `loc(...)`, else where `at` is in this file: IR read from
  /// a `.kir` file carries the file's own lines and columns into the exits.
  Location location(Span at) {
    Location l;
    if (!(cur_.kind == T::Ident && cur_.text == "loc")) {
      LineColumn lc = sources_.lineColumn(file_, at.begin);
      return {std::string(sources_.name(file_)), lc.line, lc.column};
    }
    advance();
    expect("(");
    l.file = take(T::String, "a file name").text;
    expect(":");
    l.line = static_cast<uint32_t>(integer());
    expect(":");
    l.column = static_cast<uint32_t>(integer());
    expect(")");
    return l;
  }

  //===-- Values -----------------------------------------------------------===//
  ValueId defineValue(const Tok &name, TensorType type) {
    auto it = names_.find(name.text);
    if (it != names_.end()) {
      if (defined_[it->second])
        failAt(name.span, "value `" + name.text + "` is defined twice");
      fn_->valueTypes[it->second] = std::move(type);
      defined_[it->second] = true;
      return it->second;
    }
    ValueId v = named(name, std::move(type));
    defined_.push_back(true);
    return v;
  }
  /// A new value with the author's name (`%q` is `q`).
  ValueId named(const Tok &name, TensorType type) {
    ValueId v = fn_->newValue(std::move(type));
    names_.emplace(name.text, v);
    fn_->names.resize(v + 1);
    fn_->names[v] = name.text.substr(1);
    return v;
  }
  ValueId useValue(const Tok &name) {
    auto it = names_.find(name.text);
    if (it != names_.end())
      return it->second;
    ValueId v = named(name, TensorType{});
    defined_.push_back(false);
    firstUse_.emplace(v, name.span);
    return v;
  }

  //===-- Functions and operations -------------------------------------------===//
  Function function() {
    Function f;
    fn_ = &f;
    names_.clear();
    defined_.clear();
    firstUse_.clear();
    Tok kw = take(T::Ident, "`func`");
    if (kw.text != "func")
      failAt(kw.span, "expected `func`, found `" + kw.text + "`");
    f.name = take(T::Global, "a function name (@name)").text.substr(1);
    expect("(");
    while (!isPunct(")")) {
      Tok v = take(T::Value, "a parameter (%name)");
      expect(":");
      Span at;
      TensorType t = type(&at);
      f.params.push_back(defineValue(v, std::move(t)));
      f.paramSpans.push_back(at);
      if (!accept(","))
        break;
    }
    expect(")");
    expect("->");
    auto result = [&] {
      Span at;
      f.resultTypes.push_back(type(&at));
      f.resultSpans.push_back(at);
    };
    if (accept("(")) {
      while (!isPunct(")")) {
        result();
        if (!accept(","))
          break;
      }
      expect(")");
    } else {
      result();
    }
    if (accept("!")) {
      expect("[");
      while (!isPunct("]")) {
        Tok e = take(T::Ident, "an effect (gpu, io, ...)");
        std::optional<Effect> effect = parseEffect(e.text);
        if (!effect)
          failAt(e.span, "unknown effect `" + e.text + "` (effects: clock, gpu, io, model, net, rand)");
        if (f.effects.contains(*effect))
          failAt(e.span, "effect `" + e.text + "` is declared twice");
        f.effects.insert(*effect);
        if (!accept(","))
          break;
      }
      expect("]");
    }
    f.loc = location(kw.span);
    f.textSpan = kw.span;
    expect("{");
    while (!isPunct("}")) {
      if (cur_.kind == T::End)
        fail("expected `}` to close @" + f.name);
      f.ops.push_back(op());
    }
    expect("}");
    for (const auto &[v, span] : firstUse_)
      if (!defined_[v])
        failAt(span, "value `%" + f.names[v] + "` is never defined in @" + f.name);
    return f;
  }

  Op op() {
    Op op;
    op.textSpan = cur_.span;
    std::vector<Tok> resultNames;
    if (cur_.kind == T::Value) {
      do
        resultNames.push_back(take(T::Value, "a result (%name)"));
      while (accept(","));
      expect("=");
    }
    Tok mnemonic = take(T::Ident, "an operation");
    op.textSpan = resultNames.empty() ? mnemonic.span : resultNames[0].span.to(mnemonic.span);
    std::string name = mnemonic.text, code;
    if (size_t dot = name.find('.'); dot != std::string::npos) {
      code = name.substr(dot + 1);
      name = name.substr(0, dot);
    }
    std::optional<OpKind> kind = parseOpKind(name);
    if (!kind)
      failAt(mnemonic.span, "unknown operation `" + mnemonic.text + "`");
    op.kind = *kind;
    auto badCode = [&] { failAt(mnemonic.span, "unknown code `" + code + "` for `" + name + "`"); };
    switch (op.kind) {
    case OpKind::Unary: if (auto c = parseUnary(code)) op.unary = *c; else badCode(); break;
    case OpKind::Binary: if (auto c = parseBinary(code)) op.binary = *c; else badCode(); break;
    case OpKind::Compare: if (auto c = parseCompare(code)) op.compare = *c; else badCode(); break;
    case OpKind::Reduce: if (auto c = parseCombiner(code)) op.combiner = *c; else badCode(); break;
    case OpKind::Select: case OpKind::Convert: case OpKind::Constant: case OpKind::Iota:
    case OpKind::BroadcastInDim: case OpKind::Reshape: case OpKind::Transpose: case OpKind::Slice:
    case OpKind::Concatenate: case OpKind::DotGeneral: case OpKind::Copy: case OpKind::Relayout:
    case OpKind::Call: case OpKind::Return: case OpKind::Fusion:
      if (!code.empty())
        badCode();
      break;
    }
    if (op.kind == OpKind::Return) {
      if (!resultNames.empty())
        failAt(mnemonic.span, "`return` has no results");
      if (cur_.kind == T::Value) {
        do
          op.operands.push_back(useValue(take(T::Value, "a value")));
        while (accept(","));
      }
      op.loc = location(op.textSpan);
      return op;
    }
    if (op.kind == OpKind::Call)
      op.callee = take(T::Global, "the callee (@name)").text.substr(1);
    expect("(");
    while (!isPunct(")")) {
      op.operands.push_back(useValue(take(T::Value, "an operand (%name)")));
      if (!accept(","))
        break;
    }
    expect(")");
    encodingTokens_.clear();
    attributes(op, mnemonic.span);
    expect(":");
    do
      op.resultTypes.push_back(type());
    while (accept(","));
    checkEncodingWidths(op);
    if (op.resultTypes.size() != resultNames.size())
      failAt(mnemonic.span, countOf(resultNames.size(), "result name") + " but " +
                                countOf(op.resultTypes.size(), "result type"));
    for (size_t i = 0; i < resultNames.size(); ++i)
      op.results.push_back(defineValue(resultNames[i], op.resultTypes[i]));
    op.loc = location(op.textSpan);
    if (op.kind == OpKind::Fusion)
      region(op);
    return op;
  }

  void region(Op &op) {
    op.region = std::make_unique<Region>();
    expect("{");
    expect("^");
    expect("(");
    while (!isPunct(")")) {
      Tok v = take(T::Value, "a region parameter (%name)");
      expect(":");
      op.region->params.push_back(defineValue(v, type()));
      if (!accept(","))
        break;
    }
    expect(")");
    expect(":");
    while (!isPunct("}")) {
      if (cur_.kind == T::End)
        fail("expected `}` to close the fusion region");
      op.region->ops.push_back(this->op());
    }
    expect("}");
  }

  /// `{key = value, ...}`: each key one of the attributes Ops.def gives
  /// the op's kind (no other key, no alias), once, read by its kind into
  /// its field. Every attribute with a value must be given (a unit one is
  /// present or not); an encoding's width is checked once the result type
  /// is read (checkEncodingWidths).
  void attributes(Op &op, Span mnemonic) {
    const OpInfo &info = opInfo(op.kind);
    uint32_t given = 0;
    if (accept("{")) {
      while (!isPunct("}")) {
        Tok key = take(T::Ident, "an attribute name");
        std::optional<Attr> a = parseAttrKey(key.text);
        if (!a || !info.takes(*a))
          failAt(key.span, std::string(a ? "`" + opName(op) + "` has no attribute `" + key.text + "`"
                                         : "unknown attribute `" + key.text + "`") +
                               " (" + takesText(op) + ")");
        uint32_t bit = 1u << static_cast<unsigned>(*a);
        if (given & bit)
          failAt(key.span, "attribute `" + key.text + "` is given twice");
        given |= bit;
        switch (*a) {
#define KEEL_IR_ATTR(Name, Key, Kind, Field)                                                                \
  case Attr::Name:                                                                                         \
    read##Kind(op.Field);                                                                                  \
    break;
#include "keel/ir/Ops.def"
#undef KEEL_IR_ATTR
        }
        if (!accept(","))
          break;
      }
      expect("}");
    }
    std::string missing;
    size_t count = 0;
    for (size_t i = 0; i < kNumAttrs; ++i) {
      Attr a = static_cast<Attr>(i);
      if (info.takes(a) && !attrIsOptional(a) && !(given & (1u << i))) {
        missing += (missing.empty() ? "`" : ", `") + std::string(attrKey(a)) + "`";
        ++count;
      }
    }
    if (count)
      failAt(mnemonic, "`" + opName(op) + "` needs " + (count == 1 ? "attribute " : "attributes ") +
                           missing + " (" + takesText(op) + ")");
  }
  /// "`transpose` takes perm", for messages.
  static std::string takesText(const Op &op) {
    std::string takes;
    for (size_t a = 0; a < kNumAttrs; ++a)
      if (opInfo(op.kind).takes(static_cast<Attr>(a)))
        takes += (takes.empty() ? "" : ", ") + std::string(attrKey(static_cast<Attr>(a)));
    return "`" + opName(op) + "` takes " + (takes.empty() ? "no attributes" : takes);
  }
  /// A unit attribute is present or not; an order defaults to sequential.
  static bool attrIsOptional(Attr a) {
    static constexpr bool optional[] = {
#define KEEL_IR_ATTR(Name, Key, Kind, Field) std::string_view(#Kind) == "Unit" || std::string_view(#Kind) == "Order",
#include "keel/ir/Ops.def"
#undef KEEL_IR_ATTR
    };
    return optional[static_cast<size_t>(a)];
  }
  static std::optional<Attr> parseAttrKey(std::string_view key) {
    for (size_t a = 0; a < kNumAttrs; ++a)
      if (attrKey(static_cast<Attr>(a)) == key)
        return static_cast<Attr>(a);
    return std::nullopt;
  }
  /// An encoding is written with exactly the hex digits of its dtype's
  /// width (`0x3f800000` for f32, `0x3c00` for f16, `0x1` for pred), as it
  /// is printed: `0x3f8` for f32 is an error, never read as `0x000003f8`.
  void checkEncodingWidths(const Op &op) {
    if (encodingTokens_.empty() || op.resultTypes.empty())
      return;
    DType t = op.resultTypes[0].dtype;
    size_t digits = (static_cast<size_t>(encodingBits(t)) + 3) / 4;
    for (const Tok &h : encodingTokens_)
      if (h.text.size() - 2 != digits)
        failAt(h.span, "encoding `" + h.text + "` has " + countOf(h.text.size() - 2, "hex digit") + ", but an encoding of " +
                           std::string(dtypeName(t)) + " has exactly " + std::to_string(digits));
  }
  void readUnit(bool &set) { set = true; }
  void readOrder(SumOrder &o) {
    expect("=");
    Tok name = take(T::Ident, "`sequential` or `tree`");
    std::optional<SumOrder> parsed = parseSumOrder(name.text);
    if (!parsed)
      failAt(name.span, "unknown order `" + name.text + "` (an order is `sequential` or `tree`)");
    o = *parsed;
  }
  void readInt(int64_t &v) {
    expect("=");
    v = integer();
  }
  void readDType(std::optional<DType> &t) {
    expect("=");
    t = dtype();
  }
  void readIntList(std::vector<int64_t> &v) {
    expect("=");
    v = intList("[", "]");
  }
  void readEncodings(std::vector<uint64_t> &encodings) {
    expect("=");
    expect("[");
    while (!isPunct("]")) {
      Tok h = take(T::Hex, "an encoding (0x...)");
      uint64_t bits = 0;
      auto [p, ec] = std::from_chars(h.text.data() + 2, h.text.data() + h.text.size(), bits, 16);
      if (h.text.size() == 2 || ec != std::errc() || p != h.text.data() + h.text.size())
        failAt(h.span, "malformed encoding `" + h.text + "`");
      encodings.push_back(bits);
      encodingTokens_.push_back(h);
      if (!accept(","))
        break;
    }
    expect("]");
  }

  const SourceManager &sources_;
  FileId file_;
  DiagnosticEngine &diags_;
  std::string_view text_;
  size_t pos_ = 0;
  Tok cur_;
  uint32_t lastEnd_ = 0; ///< where the previous token ended
  Function *fn_ = nullptr;
  std::map<std::string, ValueId> names_;
  std::vector<bool> defined_;
  std::map<ValueId, Span> firstUse_;
  std::vector<Tok> encodingTokens_; ///< the current op's `value` encodings
};

} // namespace

std::optional<Module> parse(const SourceManager &sources, FileId file, DiagnosticEngine &diags) {
  return IrParser(sources, file, diags).run();
}

} // namespace keel::ir
