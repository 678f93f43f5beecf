// src/pt2/json_text.cc — a program's JSON text into simdjson's DOM (json_reader.h's parse_json_text): the
// parse, and the one rewrite a refused text gets: Python's NaN, Infinity, -Infinity and integers past 64
// bits, outside strings, written as marked strings (kMarker + the token) that JsonReader reads as numbers.
#include <algorithm>
#include <string>

#include "pt2/json_reader.h"

namespace flopwise::pt2 {

namespace {
bool digit(char c) { return c >= '0' && c <= '9'; }
bool number_char(char c) { return digit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'; }

// The marked string of `token`, as JSON text.
void put_marked(std::string& out, std::string_view token) {
  out += "\"\\u0000";
  out.append(kMarker.substr(1));
  out.append(token);
  out += '"';
}

// The length of the number or non-finite word at text[i] (outside a string), and whether to mark it.
size_t token_at(std::string_view text, size_t i, bool& mark) {
  mark = false;
  for (std::string_view word : {"NaN", "Infinity", "-Infinity"})
    if (text.substr(i, word.size()) == word) return mark = true, word.size();
  size_t end = i;
  while (end < text.size() && number_char(text[end])) ++end;
  size_t digits = 0;
  for (size_t k = i; k < end; ++k) digits += digit(text[k]);
  mark = digits >= 20 && digits + (text[i] == '-') == end - i;  // an integer simdjson may refuse
  return end > i ? end - i : 1;
}

// The text with Python's tokens marked; `count` says how many.
std::string rewrite(std::string_view text, size_t& count) {
  std::string out;
  out.reserve(text.size() + text.size() / 8 + simdjson::SIMDJSON_PADDING);
  count = 0;
  for (size_t i = 0; i < text.size();) {
    char c = text[i];
    if (c == '"') {  // a string, copied whole (escapes included)
      size_t j = i + 1;
      while (j < text.size() && text[j] != '"') j += text[j] == '\\' ? 2 : 1;
      j = std::min(j + 1, text.size());
      out.append(text.substr(i, j - i));
      i = j;
    } else if (c == 'N' || c == 'I' || c == '-' || digit(c)) {
      bool mark = false;
      size_t n = token_at(text, i, mark);
      if (mark)
        put_marked(out, text.substr(i, n)), ++count;
      else
        out.append(text.substr(i, n));
      i += n;
    } else {
      out += c, ++i;
    }
  }
  return out;
}
}  // namespace

Value parse_json_text(simdjson::dom::parser& parser, std::string_view padded, bool& rewritten) {
  rewritten = false;
  Value root;
  auto first = parser.parse(padded.data(), padded.size(), false).get(root);
  if (!first) return root;
  size_t count = 0;
  std::string text = rewrite(padded, count);
  if (count == 0) throw simdjson::simdjson_error(first);
  size_t n = text.size();
  text.resize(n + simdjson::SIMDJSON_PADDING, '\0');
  if (parser.parse(text.data(), n, false).get(root)) throw simdjson::simdjson_error(first);
  rewritten = true;  // the DOM holds copies of its strings: `text` may go
  return root;
}

}  // namespace flopwise::pt2
