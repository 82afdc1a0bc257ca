//===- TextNesting.h - Bracket depth of IR text, before parsing -*- C++ -*-===//
//
// MLIR's parser recurses once per nested region, attribute, type or
// parenthesis, with no limit of its own: IR nested a few thousand levels
// deep overflows the stack (SIGSEGV) before any diagnostic. The drivers
// (attn-opt, attn-translate) measure the depth first and refuse deeper text
// with a clear error. Real attn IR nests fewer than 20 levels.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNC_SUPPORT_TEXTNESTING_H
#define ATTNC_SUPPORT_TEXTNESTING_H

#include <cstddef>
#include <string>
#include <string_view>

namespace attnc {

/// The deepest IR nesting the drivers parse.
inline constexpr std::size_t kMaxIrNesting = 512;

/// The deepest nesting of (), [], {} and <> in `text`, outside string
/// literals and `//` comments (the `>` of `->` and of `>=` closes nothing;
/// every `<` opens, so the count errs on the deep side). An unbalanced
/// closer does not make it negative.
inline std::size_t irNestingDepth(std::string_view text) {
  std::size_t depth = 0, deepest = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      // A string literal: skip to its closing quote, past escapes.
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      continue;
    }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n')
        ++i;
      continue;
    }
    bool opens = c == '(' || c == '[' || c == '{' || c == '<';
    bool closes = c == ')' || c == ']' || c == '}' ||
                  (c == '>' && !(i > 0 && text[i - 1] == '-') &&
                   !(i + 1 < text.size() && text[i + 1] == '='));
    if (opens && ++depth > deepest)
      deepest = depth;
    else if (closes && depth > 0)
      --depth;
  }
  return deepest;
}

/// The drivers' refusal of `text` named `name`, or "" when it nests at
/// most kMaxIrNesting levels.
inline std::string irNestingError(std::string_view name,
                                  std::string_view text) {
  std::size_t depth = irNestingDepth(text);
  if (depth <= kMaxIrNesting)
    return "";
  return std::string(name) + ": not supported: IR nested " +
         std::to_string(depth) +
         " levels deep (brackets, braces, parentheses), more than the " +
         std::to_string(kMaxIrNesting) + " the parser takes";
}

} // namespace attnc

#endif // ATTNC_SUPPORT_TEXTNESTING_H
