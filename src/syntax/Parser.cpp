//===- Parser.cpp - The recursive-descent parser -------------------------===//
//
// Each parse function carries its grammar line. On a syntax error the
// parser reports once and throws Bail; the statement loop (or the top level)
// catches it and skips to a point where parsing can resume, so an error
// never produces a cascade of follow-on errors.
//
//===----------------------------------------------------------------------===//
#include "keel/syntax/Parser.h"

#include "keel/support/Codes.h"
#include "keel/syntax/Lexer.h"

#include <charconv>
#include <utility>

namespace keel::syntax {
namespace {

struct Bail {}; // thrown after an error has been reported

class Parser {
public:
  Parser(const SourceManager &sources, FileId file, DiagnosticEngine &diags,
         std::vector<Token> tokens, ParseLimits limits, uint32_t nesting = 0)
      : sources_(sources), file_(file), diags_(diags), toks_(std::move(tokens)), limits_(limits),
        nesting_(nesting) {}

  // program = (fn | test)*
  Program parseProgram() {
    Program program;
    program.file = file_;
    while (!at(Tok::Eof)) {
      size_t start = pos_;
      try {
        if (at(Tok::KwFn))
          program.functions.push_back(parseFunction());
        else if (at(Tok::KwTest))
          program.tests.push_back(parseTest());
        else if (isUnsupportedKeyword(cur().kind))
          unsupported(cur().span, "`" + text(cur()) + "` items");
        else
          fail("expected `fn` or `test` at the top level, found " + describe(cur()));
      } catch (const Bail &) {
        recoverTopLevel(start);
      }
    }
    return program;
  }

  /// Parses one whole expression from the token list (string interpolation).
  ExprPtr parseStandaloneExpr() {
    inInterpolation_ = true;
    ExprPtr e = parseExpr();
    if (!at(Tok::Eof))
      fail("expected the end of the interpolated expression, found " + describe(cur()));
    return e;
  }

private:
  //===-- Token access ---------------------------------------------------===//
  const Token &cur() const { return toks_[pos_]; }
  const Token &peekAt(size_t n) const {
    return toks_[std::min(pos_ + n, toks_.size() - 1)];
  }
  bool at(Tok t) const { return cur().kind == t; }
  Token take() {
    Token t = cur();
    if (!at(Tok::Eof))
      ++pos_;
    return t;
  }
  bool accept(Tok t) {
    if (!at(t))
      return false;
    take();
    return true;
  }
  std::string text(const Token &t) const { return std::string(sources_.slice(t.span)); }
  std::string describe(const Token &t) const {
    switch (t.kind) {
    case Tok::Eof: return inInterpolation_ ? "the end of the interpolation" : "end of file";
    case Tok::Name: return "name `" + text(t) + "`";
    case Tok::Int:
    case Tok::Float: return "number `" + text(t) + "`";
    case Tok::String: return "a string";
    default: return "`" + text(t) + "`";
    }
  }
  Span spanFrom(Span start) const {
    size_t last = pos_ > 0 ? pos_ - 1 : 0;
    return {file_, start.begin, std::max(start.begin, toks_[last].span.end)};
  }

  //===-- Limits -----------------------------------------------------------===//

  /// One level of nesting (a bracket, a block, a call, an index, a prefix
  /// operator) for as long as it lives; past the limit, E0013 at `at`.
  class Nest {
  public:
    Nest(Parser &p, Span at) : p_(p) {
      if (p_.nesting_ >= p_.limits_.maxNesting) {
        p_.diags_.error(code::E0013, at,
                        "nesting too deep: more than " + std::to_string(p_.limits_.maxNesting) +
                            " levels of brackets, blocks, calls and prefix operators")
            .note("the limit keeps every pass of the compiler within its stack; `--max-nesting N` changes it");
        p_.lastErrorToken_ = p_.pos_;
        p_.skipGroup(); // recovery resumes after the whole bracketed group
        throw Bail{};
      }
      ++p_.nesting_;
    }
    ~Nest() { --p_.nesting_; }
    Nest(const Nest &) = delete;
    Nest &operator=(const Nest &) = delete;

  private:
    Parser &p_;
  };

  /// At an opening bracket, skips to just past its matching closing one
  /// (or to the end of the file).
  void skipGroup() {
    if (!at(Tok::LParen) && !at(Tok::LBracket) && !at(Tok::LBrace))
      return;
    bool opening = true; // the bracket itself; the first token outside the group stops
    skipBalanced(~size_t{0}, [&](Tok) { return std::exchange(opening, false) ? Stop::No : Stop::Here; });
  }

  /// Past kMaxExpressionHeight, E0014 at `at` (the operator that made the
  /// expression too deep).
  void checkHeight(uint32_t height, Span at) {
    if (height <= kMaxExpressionHeight)
      return;
    diags_.error(code::E0014, at,
                 "expression too long: more than " + std::to_string(kMaxExpressionHeight) +
                     " operations deep")
        .note("split it with `let`: every pass of the compiler recurses over an expression");
    lastErrorToken_ = pos_;
    throw Bail{};
  }
  /// Sets a new node's height from its children's, then checks it.
  template <typename T> std::unique_ptr<T> sealed(std::unique_ptr<T> e, Span at) {
    uint32_t below = 0;
    auto see = [&](const Expr *child) {
      if (child)
        below = std::max(below, child->height);
    };
    const Expr &n = *e;
    switch (n.kind) {
    case ExprKind::Int: case ExprKind::Float: case ExprKind::Bool: case ExprKind::Name: break;
    case ExprKind::Unary: see(n.as<UnaryExpr>()->operand.get()); break;
    case ExprKind::Binary: see(n.as<BinaryExpr>()->lhs.get()); see(n.as<BinaryExpr>()->rhs.get()); break;
    case ExprKind::Cast: see(n.as<CastExpr>()->operand.get()); break;
    case ExprKind::Call: for (const Arg &a : n.as<CallExpr>()->args) see(a.value.get()); break;
    case ExprKind::Index:
      see(n.as<IndexExpr>()->base.get());
      for (const ExprPtr &x : n.as<IndexExpr>()->indices) see(x.get());
      break;
    case ExprKind::Array: for (const ExprPtr &x : n.as<ArrayExpr>()->elements) see(x.get()); break;
    case ExprKind::String: for (const StringPart &part : n.as<StringExpr>()->parts) see(part.expr.get()); break;
    }
    e->height = below + 1;
    checkHeight(e->height, at);
    return e;
  }

  static bool isFloatConstant(const std::string &name) { return name == "inf" || name == "nan"; }
  /// A NAME that a declaration introduces: not `inf` or `nan`, which are
  /// literals.
  Token declaredName(const char *what) {
    if (at(Tok::Name) && isFloatConstant(text(cur())))
      fail("`" + text(cur()) + "` is a float constant (" + (text(cur()) == "inf" ? "infinity" : "not a number") +
           "), not " + what + ": choose another name");
    return expect(Tok::Name, what);
  }

  //===-- Errors -----------------------------------------------------------===//
  [[noreturn]] void fail(std::string message) { failAt(cur().span, std::move(message)); }
  [[noreturn]] void failAt(Span span, std::string message) {
    // The lexer has already reported its invalid tokens, and a token that
    // already stopped one construct (a missing `}` seen by nested blocks)
    // is reported once.
    if (cur().kind != Tok::Error && pos_ != lastErrorToken_)
      diags_.error(code::E0010, span, std::move(message));
    lastErrorToken_ = pos_;
    throw Bail{};
  }
  Token expect(Tok t, std::string_view what = {}) {
    if (at(t))
      return take();
    std::string wanted = what.empty() ? "`" + std::string(tokenSpelling(t)) + "`" : std::string(what);
    fail("expected " + wanted + ", found " + describe(cur()));
  }
  [[noreturn]] void unsupported(Span span, const std::string &what) {
    // Step over the refused keyword, so recovery does not stop at it and
    // report it again as the start of the next statement.
    if (cur().span.begin == span.begin && cur().span.end == span.end)
      take();
    diags_.error(code::E0011, span, what + " are not supported in Keel")
        .note("Keel implements a subset of Sailfin: functions, tests, scalars and tensors "
              "(see ../shared/spec/README.md section 2)");
    throw Bail{};
  }

  /// Skips tokens after an error, keeping brackets balanced, until `stop`
  /// says so for a token outside all brackets: Here (stop before it) or
  /// After (consume it, then stop). Always consumes at least one token when
  /// the error left the parser where the construct started.
  enum class Stop { No, Here, After };
  template <typename StopFn> void skipBalanced(size_t start, StopFn stop) {
    if (pos_ == start)
      take();
    int depth = 0;
    while (!at(Tok::Eof)) {
      Tok k = cur().kind;
      Stop s = depth == 0 ? stop(k) : Stop::No;
      if (s == Stop::After)
        take();
      if (s != Stop::No)
        return;
      if (k == Tok::LBrace || k == Tok::LParen || k == Tok::LBracket)
        ++depth;
      if ((k == Tok::RBrace || k == Tok::RParen || k == Tok::RBracket) && depth > 0)
        --depth;
      take();
    }
  }

  /// Skips to the next `fn` or `test`.
  void recoverTopLevel(size_t start) {
    skipBalanced(start, [](Tok k) { return k == Tok::KwFn || k == Tok::KwTest ? Stop::Here : Stop::No; });
  }

  static bool startsStatement(Tok k) {
    switch (k) {
    case Tok::KwLet: case Tok::KwIf: case Tok::KwFor: case Tok::KwWhile: case Tok::KwLoop:
    case Tok::KwReturn: case Tok::KwBreak: case Tok::KwContinue: case Tok::KwAssert:
    case Tok::KwFn: case Tok::KwTest:
      return true;
    default:
      return isUnsupportedKeyword(k); // reported on their own
    }
  }

  /// Skips past the statement in error: to a `;` (consumed), a `}` that
  /// closes the block, or the keyword that starts the next statement.
  void recoverStatement(size_t start) {
    skipBalanced(start, [](Tok k) {
      if (k == Tok::Semi)
        return Stop::After;
      return k == Tok::RBrace || startsStatement(k) ? Stop::Here : Stop::No;
    });
  }

  //===-- Declarations -----------------------------------------------------===//

  // fn = "fn" NAME ("<" NAME,* ">")? "(" (NAME ":" type),* ")" ("->" type)? effects? requires? block
  FunctionDecl parseFunction() {
    FunctionDecl fn;
    Span start = take().span;
    if (at(Tok::LParen))
      unsupported(start, "anonymous functions (lambdas)");
    Token name = declaredName("a function name");
    fn.name = text(name);
    fn.nameSpan = name.span;
    // dimension parameters = "<" NAME,* ">"
    if (accept(Tok::Less)) {
      while (!at(Tok::Greater)) {
        Token d = declaredName("a dimension parameter");
        fn.dimParams.push_back({text(d), d.span});
        if (!accept(Tok::Comma))
          break;
      }
      expect(Tok::Greater, "`,` or `>` to close the dimension parameters");
    }
    expect(Tok::LParen);
    while (!at(Tok::RParen)) {
      Param p;
      Token pn = declaredName("a parameter name");
      p.name = text(pn);
      p.nameSpan = pn.span;
      expect(Tok::Colon, "`:` and the parameter's type");
      p.type = parseType();
      fn.params.push_back(std::move(p));
      if (!accept(Tok::Comma))
        break;
    }
    expect(Tok::RParen, "`,` or `)`");
    if (accept(Tok::Arrow))
      fn.returnType = parseType();
    // effects = "![" NAME,* "]"
    if (at(Tok::Bang)) {
      take();
      expect(Tok::LBracket, "`[` after `!` (effects are written `![io, gpu]`)");
      while (!at(Tok::RBracket)) {
        Token e = expect(Tok::Name, "an effect name");
        fn.effects.push_back({text(e), e.span});
        if (!accept(Tok::Comma))
          break;
      }
      expect(Tok::RBracket, "`,` or `]`");
    }
    // requires = "requires" pred (("," | "&&") pred)*
    if (accept(Tok::KwRequires)) {
      do
        fn.refinements.push_back(parsePredicate());
      while (accept(Tok::Comma) || accept(Tok::AmpAmp));
    }
    fn.body = parseBlock();
    fn.span = spanFrom(start);
    return fn;
  }

  // test = "test" STRING block
  TestDecl parseTest() {
    TestDecl t;
    Span start = take().span;
    Token name = expect(Tok::String, "the test's name as a string");
    auto str = parseStringToken(name);
    for (StringPart &part : str->parts) {
      if (part.expr)
        failAt(name.span, "a test's name cannot interpolate values");
      t.name += part.text;
    }
    t.nameSpan = name.span;
    t.body = parseBlock();
    t.span = spanFrom(start);
    return t;
  }

  // pred = dim ("==" | "!=" | "<" | "<=" | ">" | ">=") dim
  Predicate parsePredicate() {
    Predicate p;
    p.lhs = parseDim();
    switch (cur().kind) {
    case Tok::EqEq: case Tok::NotEq: case Tok::Less: case Tok::LessEq: case Tok::Greater:
    case Tok::GreaterEq:
      p.op = take().kind;
      break;
    default:
      fail("expected a comparison (==, !=, <, <=, >, >=) in the refinement, found " +
           describe(cur()));
    }
    p.rhs = parseDim();
    p.span = p.lhs->span.to(p.rhs->span);
    return p;
  }

  //===-- Types and dimensions ---------------------------------------------===//

  // type = NAME | "Tensor" "<" NAME "," "[" dim,* "]" ">"
  TypeExpr parseType() {
    TypeExpr t;
    Token name = expect(Tok::Name, "a type");
    t.span = name.span;
    if (text(name) == "Tensor" && at(Tok::Less)) {
      take();
      t.kind = TypeExpr::Kind::Tensor;
      Token dtype = expect(Tok::Name, "the tensor's element type");
      t.name = text(dtype);
      t.nameSpan = dtype.span;
      expect(Tok::Comma, "`,` and the tensor's shape");
      expect(Tok::LBracket, "the shape in brackets, e.g. `[B, S, D]`");
      while (!at(Tok::RBracket)) {
        t.dims.push_back(parseDim());
        if (!accept(Tok::Comma))
          break;
      }
      expect(Tok::RBracket, "`,` or `]`");
      Token close = expect(Tok::Greater, "`>` to close the tensor type");
      t.span = t.span.to(close.span);
      return t;
    }
    t.name = text(name);
    t.nameSpan = name.span;
    return t;
  }

  // dim = term (("+" | "-") term)* ; term = factor (("*" | "/" | "%") factor)*
  // factor = INT | NAME | "(" dim ")"
  std::unique_ptr<Dim> parseDim() {
    auto lhs = parseDimTerm();
    while (at(Tok::Plus) || at(Tok::Minus)) {
      Dim::Kind k = take().kind == Tok::Plus ? Dim::Kind::Add : Dim::Kind::Sub;
      lhs = dimBinary(k, std::move(lhs), parseDimTerm());
    }
    return lhs;
  }
  std::unique_ptr<Dim> parseDimTerm() {
    auto lhs = parseDimFactor();
    while (at(Tok::Star) || at(Tok::Slash) || at(Tok::Percent)) {
      Tok op = take().kind;
      Dim::Kind k = op == Tok::Star ? Dim::Kind::Mul : op == Tok::Slash ? Dim::Kind::Div : Dim::Kind::Mod;
      lhs = dimBinary(k, std::move(lhs), parseDimFactor());
    }
    return lhs;
  }
  std::unique_ptr<Dim> parseDimFactor() {
    auto d = std::make_unique<Dim>();
    d->span = cur().span;
    if (at(Tok::Int)) {
      d->kind = Dim::Kind::Int;
      d->value = parseIntText(take());
    } else if (at(Tok::Name)) {
      d->kind = Dim::Kind::Name;
      d->name = text(take());
    } else if (at(Tok::LParen)) {
      Nest nest(*this, cur().span);
      Span open = take().span;
      d = parseDim();
      Token close = expect(Tok::RParen, "`)`");
      d->span = open.to(close.span);
    } else {
      fail("expected a dimension (a number, a shape variable or `(`), found " + describe(cur()));
    }
    return d;
  }
  std::unique_ptr<Dim> dimBinary(Dim::Kind k, std::unique_ptr<Dim> l, std::unique_ptr<Dim> r) {
    auto d = std::make_unique<Dim>();
    d->kind = k;
    d->span = l->span.to(r->span);
    d->height = std::max(l->height, r->height) + 1;
    checkHeight(d->height, d->span);
    d->lhs = std::move(l);
    d->rhs = std::move(r);
    return d;
  }
  int64_t parseIntText(const Token &t) {
    std::string digits;
    for (char c : sources_.slice(t.span))
      if (c != '_')
        digits += c;
    int64_t v = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc() || p != digits.data() + digits.size())
      failAt(t.span, "dimension `" + text(t) + "` does not fit in 64 bits");
    return v;
  }

  //===-- Statements -------------------------------------------------------===//

  // block = "{" stmt* "}"
  Block parseBlock() {
    Block b;
    Nest nest(*this, cur().span);
    Span start = expect(Tok::LBrace, "`{`").span;
    while (!at(Tok::RBrace) && !at(Tok::Eof) && !at(Tok::KwFn) && !at(Tok::KwTest)) {
      size_t before = pos_;
      try {
        b.stmts.push_back(parseStatement());
      } catch (const Bail &) {
        recoverStatement(before);
      }
    }
    expect(Tok::RBrace, "`}`");
    b.span = spanFrom(start);
    return b;
  }

  StmtPtr parseStatement() {
    Span start = cur().span;
    switch (cur().kind) {
    case Tok::KwLet: return parseLet();
    case Tok::KwIf: return parseIf();
    case Tok::KwFor: {
      // "for" NAME "in" expr ".." expr block
      take();
      auto s = std::make_unique<ForStmt>(start);
      Token var = declaredName("the loop variable");
      s->var = text(var);
      s->varSpan = var.span;
      expect(Tok::KwIn, "`in`");
      s->from = parseExpr();
      expect(Tok::DotDot, "`..` (ranges are written `a..b`)");
      s->to = parseExpr();
      s->body = parseBlock();
      s->span = spanFrom(start);
      return s;
    }
    case Tok::KwWhile: {
      take();
      auto s = std::make_unique<WhileStmt>(start);
      s->cond = parseExpr();
      s->body = parseBlock();
      s->span = spanFrom(start);
      return s;
    }
    case Tok::KwLoop: {
      take();
      auto s = std::make_unique<LoopStmt>(start);
      s->body = parseBlock();
      s->span = spanFrom(start);
      return s;
    }
    case Tok::KwBreak:
      take();
      expect(Tok::Semi, "`;`");
      return std::make_unique<BreakStmt>(spanFrom(start));
    case Tok::KwContinue:
      take();
      expect(Tok::Semi, "`;`");
      return std::make_unique<ContinueStmt>(spanFrom(start));
    case Tok::KwReturn: {
      take();
      auto s = std::make_unique<ReturnStmt>(start);
      if (!at(Tok::Semi))
        s->value = parseExpr();
      expect(Tok::Semi, "`;`");
      s->span = spanFrom(start);
      return s;
    }
    case Tok::KwAssert: {
      // "assert" expr ("," STRING)? ";"
      take();
      auto s = std::make_unique<AssertStmt>(start);
      s->cond = parseExpr();
      if (accept(Tok::Comma)) {
        if (!at(Tok::String))
          fail("expected the assertion's message as a string, found " + describe(cur()));
        s->message = parseStringToken(take());
      }
      expect(Tok::Semi, "`;`");
      s->span = spanFrom(start);
      return s;
    }
    case Tok::LBrace: {
      auto s = std::make_unique<BlockStmt>(start);
      s->block = parseBlock();
      s->span = s->block.span;
      return s;
    }
    default:
      break;
    }
    if (isUnsupportedKeyword(cur().kind))
      unsupported(cur().span, "`" + text(cur()) + "` statements");
    // NAME ("=" | "+=" | "-=" | "*=" | "/=") expr ";"  |  expr ";"
    ExprPtr e = parseExpr();
    switch (cur().kind) {
    case Tok::Assign: case Tok::PlusAssign: case Tok::MinusAssign: case Tok::StarAssign:
    case Tok::SlashAssign: {
      Token op = take();
      auto *target = e->as<NameExpr>();
      if (!target) {
        diags_.error(code::E0012, e->span, "only a variable can be assigned to")
            .help("declare one with `let mut NAME = ...;`");
        throw Bail{};
      }
      auto s = std::make_unique<AssignStmt>(start);
      s->op = op.kind;
      s->name = target->name;
      s->nameSpan = target->span;
      s->value = parseExpr();
      expect(Tok::Semi, "`;`");
      s->span = spanFrom(start);
      return s;
    }
    default:
      break;
    }
    expect(Tok::Semi, "`;` after the expression");
    return std::make_unique<ExprStmt>(spanFrom(start), std::move(e));
  }

  // "let" "mut"? NAME (":" type)? "=" expr ";"
  // "let" "mut"? "(" NAME ("," NAME)* ")" "=" "value_and_grad" "(" NAME ("," arg)* ")" ";"
  StmtPtr parseLet() {
    Span start = take().span;
    auto s = std::make_unique<LetStmt>(start);
    s->isMutable = accept(Tok::KwMut);
    if (accept(Tok::LParen))
      return parseGradientLet(std::move(s), start);
    Token name = declaredName("a variable name");
    s->name = text(name);
    s->nameSpan = name.span;
    if (accept(Tok::Colon))
      s->type = parseType();
    expect(Tok::Assign, "`=` and the initial value");
    s->init = parseExpr();
    expect(Tok::Semi, "`;`");
    s->span = spanFrom(start);
    return s;
  }

  /// The rest of `let (a, b, ...) = value_and_grad(f, args..., wrt: [p, ...]);`
  /// after its `(`: the call becomes `f(args...)` and the `wrt` names.
  StmtPtr parseGradientLet(std::unique_ptr<LetStmt> s, Span start) {
    do {
      Token name = declaredName("a variable name");
      s->names.push_back(text(name));
      s->nameSpans.push_back(name.span);
    } while (accept(Tok::Comma));
    expect(Tok::RParen, "`)` after the names");
    s->name = s->names.front();
    s->nameSpan = s->nameSpans.front();
    expect(Tok::Assign, "`=` and `value_and_grad(...)`");
    ExprPtr init = parseExpr();
    auto *call = init->as<CallExpr>();
    if (!call || call->callee != "value_and_grad")
      failAt(init->span, "`let (...)` binds the value and gradients of `value_and_grad(f, ..., wrt: [...])`, "
                         "the one call that gives several values");
    if (call->args.empty() || !call->args[0].name.empty() || !call->args[0].value->as<NameExpr>())
      failAt(call->span, "`value_and_grad` takes the tensor function to differentiate first, by its name");
    const NameExpr &f = *call->args[0].value->as<NameExpr>();
    auto differentiated = std::make_unique<CallExpr>(call->span, f.name, f.span);
    differentiated->height = call->height;
    bool sawWrt = false;
    for (size_t i = 1; i < call->args.size(); ++i) {
      Arg &a = call->args[i];
      if (a.name != "wrt") {
        differentiated->args.push_back(std::move(a));
        continue;
      }
      auto *list = a.value->as<ArrayExpr>();
      if (sawWrt || !list || list->elements.empty())
        failAt(a.value->span, "`wrt:` takes one list of the parameters to differentiate with respect to: `wrt: [w]`");
      sawWrt = true;
      for (const ExprPtr &e : list->elements) {
        auto *p = e->as<NameExpr>();
        if (!p)
          failAt(e->span, "`wrt:` names parameters of `" + f.name + "`");
        s->wrt.push_back(p->name);
        s->wrtSpans.push_back(p->span);
      }
    }
    if (!sawWrt)
      failAt(call->span, "`value_and_grad` needs `wrt: [...]`, the parameters to differentiate with respect to");
    s->init = std::move(differentiated);
    expect(Tok::Semi, "`;`");
    s->span = spanFrom(start);
    return s;
  }

  // "if" expr block ("else" (if-stmt | block))?
  StmtPtr parseIf() {
    Span start = take().span;
    auto s = std::make_unique<IfStmt>(start);
    s->cond = parseExpr();
    s->thenBlock = parseBlock();
    if (accept(Tok::KwElse)) {
      if (at(Tok::KwIf)) {
        // An `else if` chain recurses in every pass, as a long expression does.
        struct Link {
          uint32_t &chain;
          ~Link() { --chain; }
        } link{++elseIfChain_};
        checkHeight(elseIfChain_, cur().span);
        s->elseStmt = parseIf();
      } else {
        auto b = std::make_unique<BlockStmt>(cur().span);
        b->block = parseBlock();
        b->span = b->block.span;
        s->elseStmt = std::move(b);
      }
    }
    s->span = spanFrom(start);
    return s;
  }

  //===-- Expressions ------------------------------------------------------===//

  // Binary operators, lowest first: || ; && ; == != < <= > >= ; | ; ^ ; & ;
  // + - ; * / %. All left-associative.
  static int precedence(Tok t) {
    switch (t) {
    case Tok::PipePipe: return 1;
    case Tok::AmpAmp: return 2;
    case Tok::EqEq: case Tok::NotEq: case Tok::Less: case Tok::LessEq: case Tok::Greater:
    case Tok::GreaterEq: return 3;
    case Tok::Pipe: return 4;
    case Tok::Caret: return 5;
    case Tok::Amp: return 6;
    case Tok::Plus: case Tok::Minus: return 7;
    case Tok::Star: case Tok::Slash: case Tok::Percent: return 8;
    default: return 0;
    }
  }

  ExprPtr parseExpr() { return parseBinary(1); }

  ExprPtr parseBinary(int minPrec) {
    ExprPtr lhs = parseUnary();
    for (;;) {
      int prec = precedence(cur().kind);
      if (prec < minPrec || prec == 0)
        return lhs;
      Token op = take();
      ExprPtr rhs = parseBinary(prec + 1);
      Span s = lhs->span.to(rhs->span);
      lhs = sealed(std::make_unique<BinaryExpr>(s, op.kind, op.span, std::move(lhs), std::move(rhs)), op.span);
    }
  }

  // unary = ("-" | "!" | "~") unary | cast
  ExprPtr parseUnary() {
    if (at(Tok::Minus) || at(Tok::Bang) || at(Tok::Tilde)) {
      Nest nest(*this, cur().span);
      Token op = take();
      ExprPtr e = parseUnary();
      Span s = op.span.to(e->span);
      return sealed(std::make_unique<UnaryExpr>(s, op.kind, std::move(e)), op.span);
    }
    return parseCast();
  }

  // cast = postfix ("as" type)*
  ExprPtr parseCast() {
    ExprPtr e = parsePostfix();
    while (at(Tok::KwAs)) {
      take();
      TypeExpr t = parseType();
      Span s = e->span.to(t.span);
      e = sealed(std::make_unique<CastExpr>(s, std::move(e), std::move(t)), s);
    }
    return e;
  }

  // postfix = primary ("(" args ")" | "[" expr,* "]")*
  ExprPtr parsePostfix() {
    ExprPtr e = parsePrimary();
    for (;;) {
      if (at(Tok::LParen)) {
        auto *name = e->as<NameExpr>();
        if (!name)
          fail("only a named function can be called");
        auto call = std::make_unique<CallExpr>(e->span, name->name, name->span);
        Nest nest(*this, cur().span);
        take();
        // args = ((NAME ":")? expr),*
        while (!at(Tok::RParen)) {
          Arg a;
          if (at(Tok::Name) && peekAt(1).kind == Tok::Colon) {
            Token n = take();
            take();
            a.name = text(n);
            a.nameSpan = n.span;
          }
          a.value = parseExpr();
          call->args.push_back(std::move(a));
          if (!accept(Tok::Comma))
            break;
        }
        expect(Tok::RParen, "`,` or `)`");
        call->span = spanFrom(call->span);
        Span callee = call->calleeSpan;
        e = sealed(std::move(call), callee);
      } else if (at(Tok::LBracket)) {
        Nest nest(*this, cur().span);
        Span open = take().span;
        auto idx = std::make_unique<IndexExpr>(e->span, std::move(e));
        while (!at(Tok::RBracket)) {
          idx->indices.push_back(parseExpr());
          if (!accept(Tok::Comma))
            break;
        }
        expect(Tok::RBracket, "`,` or `]`");
        idx->span = spanFrom(idx->span);
        e = sealed(std::move(idx), open);
      } else if (at(Tok::Dot)) {
        unsupported(cur().span, "fields and methods (`.`)");
      } else {
        return e;
      }
    }
  }

  // primary = INT | FLOAT | "true" | "false" | STRING | NAME | "(" expr ")" | "[" expr,* "]"
  ExprPtr parsePrimary() {
    const Token &t = cur();
    switch (t.kind) {
    case Tok::Int: take(); return std::make_unique<IntExpr>(t.span, withoutSeparators(t));
    case Tok::Float: take(); return std::make_unique<FloatExpr>(t.span, withoutSeparators(t));
    case Tok::KwTrue: take(); return std::make_unique<BoolExpr>(t.span, true);
    case Tok::KwFalse: take(); return std::make_unique<BoolExpr>(t.span, false);
    case Tok::String: return parseStringToken(take());
    case Tok::Name:
      take();
      if (isFloatConstant(text(t))) // `inf`, `nan`: literals that take their type from context
        return std::make_unique<FloatExpr>(t.span, text(t));
      return std::make_unique<NameExpr>(t.span, text(t));
    case Tok::LParen: {
      Nest nest(*this, t.span);
      take();
      ExprPtr e = parseExpr();
      Token close = expect(Tok::RParen, "`)`");
      e->span = t.span.to(close.span);
      return e;
    }
    case Tok::LBracket: {
      Nest nest(*this, t.span);
      take();
      auto a = std::make_unique<ArrayExpr>(t.span);
      while (!at(Tok::RBracket)) {
        a->elements.push_back(parseExpr());
        if (!accept(Tok::Comma))
          break;
      }
      expect(Tok::RBracket, "`,` or `]`");
      a->span = spanFrom(t.span);
      return sealed(std::move(a), t.span);
    }
    case Tok::Pipe:
    case Tok::PipePipe:
    case Tok::KwFn: unsupported(t.span, "lambdas");
    default:
      if (isUnsupportedKeyword(t.kind))
        unsupported(t.span, "`" + text(t) + "` expressions");
      fail("expected an expression, found " + describe(t));
    }
  }

  std::string withoutSeparators(const Token &t) const {
    std::string s;
    for (char c : sources_.slice(t.span))
      if (c != '_')
        s += c;
    return s;
  }

  /// Splits a string token into text and `${expr}` parts, resolving escapes
  /// (\" \\ \n \t \$).
  std::unique_ptr<StringExpr> parseStringToken(const Token &t) {
    auto str = std::make_unique<StringExpr>(t.span);
    std::string_view body = sources_.text(file_).substr(t.span.begin + 1, t.span.end - t.span.begin - 2);
    uint32_t base = t.span.begin + 1;
    std::string textPart;
    bool bad = false;
    for (uint32_t i = 0; i < body.size(); ++i) {
      char c = body[i];
      if (c == '\\' && i + 1 < body.size()) {
        char e = body[++i];
        switch (e) {
        case '"': textPart += '"'; break;
        case '\\': textPart += '\\'; break;
        case 'n': textPart += '\n'; break;
        case 't': textPart += '\t'; break;
        case '$': textPart += '$'; break;
        default:
          diags_.error(code::E0003, {file_, base + i - 1, base + i + 1},
                       std::string("unknown escape sequence `\\") + e + "`")
              .note("strings know the escapes \\\" \\\\ \\n \\t and \\$");
          bad = true;
        }
      } else if (c == '$' && i + 1 < body.size() && body[i + 1] == '{') {
        uint32_t open = i;
        int depth = 1;
        uint32_t j = i + 2;
        for (; j < body.size() && depth > 0; ++j)
          depth += body[j] == '{' ? 1 : body[j] == '}' ? -1 : 0;
        if (depth != 0) {
          diags_.error(code::E0003, {file_, base + open, base + open + 2},
                       "`${` without its closing `}` in a string");
          bad = true;
          break;
        }
        uint32_t exprBegin = base + open + 2, exprEnd = base + j - 1;
        if (exprBegin == exprEnd) {
          diags_.error(code::E0003, {file_, base + open, base + j}, "empty interpolation `${}`");
          bad = true;
        } else {
          if (!textPart.empty())
            str->parts.push_back({std::move(textPart), nullptr});
          textPart.clear();
          Parser sub(sources_, file_, diags_, lex(sources_, file_, diags_, exprBegin, exprEnd), limits_, nesting_ + 1);
          try {
            str->parts.push_back({"", sub.parseStandaloneExpr()});
          } catch (const Bail &) {
            bad = true;
          }
        }
        i = j - 1;
      } else {
        textPart += c;
      }
    }
    if (!textPart.empty() || str->parts.empty())
      str->parts.push_back({std::move(textPart), nullptr});
    if (bad)
      throw Bail{};
    return sealed(std::move(str), t.span);
  }

  const SourceManager &sources_;
  FileId file_;
  DiagnosticEngine &diags_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  bool inInterpolation_ = false;
  ParseLimits limits_;
  uint32_t nesting_ = 0;     ///< open Nest levels (including an enclosing string's)
  uint32_t elseIfChain_ = 0; ///< `else if` links above the current `if`
  size_t lastErrorToken_ = ~size_t{0};
};

} // namespace

Program parse(const SourceManager &sources, FileId file, DiagnosticEngine &diags, ParseLimits limits) {
  return Parser(sources, file, diags, lex(sources, file, diags), limits).parseProgram();
}

} // namespace keel::syntax
