// src/import/onnx_scopes.cc — module scopes of imported nodes (onnx_scopes.h, and scope_from_node_name of
// flopwise/onnx_import.h): exporters' node names joined into dotted module paths, torch.onnx's metadata read,
// the module of a dynamo export's function read from its name.
#include "onnx_scopes.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <vector>

#include "flopwise/limits.h"
#include "flopwise/onnx_import.h"

namespace flopwise {

namespace onnx_detail {

namespace {

// Parses a python-style list of strings as written by torch's exporter metadata: "['', 'layer1']".
std::vector<std::string> parse_str_list(const std::string& s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    char q = s[i];
    if (q != '\'' && q != '"') {
      ++i;
      continue;
    }
    size_t j = s.find(q, i + 1);
    if (j == std::string::npos) break;
    out.push_back(s.substr(i + 1, j - i - 1));
    i = j + 1;
  }
  return out;
}

// Scope levels and classes from torch.onnx's node metadata (name_scopes: each level's attribute name;
// class_hierarchy: the root's class, then each level's).
std::pair<StringList, StringList> scope_from_metadata(const std::string& name_scopes,
                                                      const std::string* class_hierarchy) {
  auto names = parse_str_list(name_scopes);
  std::vector<std::string> scope, classes;
  std::string path;
  for (const auto& part : names) {
    if (part.empty()) continue;
    if (scope.size() > static_cast<size_t>(limits().max_scope_depth)) break;  // see scope_from_node_name
    // torch writes each level's attribute name; join into dotted paths.
    path = path.empty() ? part : path + "." + part;
    scope.push_back(path);
  }
  if (class_hierarchy) {
    auto qualified = parse_str_list(*class_hierarchy);
    // The first class is the root module; scope levels follow.
    if (!qualified.empty() && qualified.size() == names.size()) qualified.erase(qualified.begin());
    for (auto& cls : qualified) {
      auto dot = cls.rfind('.');
      classes.push_back(dot == std::string::npos ? cls : cls.substr(dot + 1));
    }
    classes.resize(scope.size());
  }
  return {std::move(scope), std::move(classes)};
}

// A dotted path as torch writes it into a function's name: dots as '_'.
std::string mangled(std::string s) {
  std::replace(s.begin(), s.end(), '.', '_');
  return s;
}

// dynamo's getattr chain "getattr_getattr_L__self___blocks___0_____0___conv_dw" -> "blocks.0.0.conv_dw"
// (levels apart by 3 or more '_'); empty when the text is no such chain.
std::string path_of_getattr(std::string_view t) {
  while (t.rfind("getattr_", 0) == 0) t.remove_prefix(8);
  if (t.rfind("L__self___", 0) != 0) return {};
  t.remove_prefix(10);
  std::string out;
  for (size_t i = 0; i < t.size();) {
    size_t j = std::min(t.find("___", i), t.size());
    std::string_view seg = t.substr(i, j - i);
    while (!seg.empty() && seg.back() == '_') seg.remove_suffix(1);
    if (!seg.empty()) (out += out.empty() ? "" : ".") += seg;
    for (i = j; i < t.size() && t[i] == '_';) ++i;
  }
  return out;
}

// The dotted path whose mangled form is `path`'s (a getattr chain's levels may hold mangled dots too,
// "layer2.0.downsample_0"): the head of a parameter's name, else a child of the caller's scope, else `path`.
std::string unmangled(const std::string& path, const std::string& caller,
                      const std::vector<std::string>& args) {
  const std::string text = mangled(path);
  for (const auto& a : args)
    if (a.size() > text.size() && a[text.size()] == '.' && mangled(a.substr(0, text.size())) == text)
      return a.substr(0, text.size());
  const std::string m = mangled(caller);
  if (!caller.empty() && text.size() > m.size() && text.compare(0, m.size(), m) == 0 && text[m.size()] == '_')
    return caller + "." + path.substr(m.size() + 1);
  return path;
}

}  // namespace

std::optional<ModuleFunction> module_of_function(const std::string& name, const std::string& caller_scope,
                                                 const std::vector<std::string>& args) {
  // The class: the first '_'-separated word that starts upper-case (module paths are lower-case).
  size_t p = 0;
  while (p < name.size() && !std::isupper(static_cast<unsigned char>(name[p]))) {
    p = name.find('_', p);
    p = p == std::string::npos ? name.size() : p + 1;
  }
  const size_t end = name.find('_', p);
  if (p >= name.size() || end == std::string::npos) return std::nullopt;
  std::string text = name.substr(end + 1);
  const size_t counter = text.rfind('_');  // "_1": the call's number, always written
  if (counter == std::string::npos || counter + 1 == text.size() ||
      text.find_first_not_of("0123456789", counter + 1) != std::string::npos)
    return std::nullopt;
  text.erase(counter);
  if (text.empty()) return std::nullopt;
  std::string path = path_of_getattr(text);
  return ModuleFunction{unmangled(path.empty() ? text : path, caller_scope, args), name.substr(p, end - p)};
}

StringList ScopeNames::of_name(const std::string& name) {
  size_t slash = name.rfind('/');
  if (name.empty() || name[0] != '/' || slash == 0) return {};
  std::string_view dir(name.data(), slash);
  if (dir == last_dir_) return last_scope_;
  last_dir_.assign(dir);
  auto [it, fresh] = scope_of_dir_.try_emplace(last_dir_);
  if (fresh) it->second = scope_from_node_name(name);
  last_scope_ = it->second;
  return last_scope_;
}

const std::pair<StringList, StringList>& ScopeNames::of_metadata(const std::string& name_scopes,
                                                                 const std::string* class_hierarchy) {
  std::string key = name_scopes + '\n' + (class_hierarchy ? *class_hierarchy : std::string("\n"));
  auto [hit, fresh] = scope_of_metadata_.try_emplace(key);
  if (fresh) hit->second = scope_from_metadata(name_scopes, class_hierarchy);
  return hit->second;
}

void ScopeNames::apply_class_hints(Graph& g) const {
  if (class_hints_.empty()) return;
  // Nodes sharing a scope (and classes) list share the completed one too.
  std::map<std::pair<const void*, const void*>, StringList> done;
  for (auto& n : g.nodes) {
    auto [it, fresh] = done.try_emplace({n.scope.id(), n.scope_classes.id()});
    if (fresh) {
      std::vector<std::string> classes = n.scope_classes;
      classes.resize(n.scope.size());
      for (size_t i = 0; i < n.scope.size(); ++i)
        if (classes[i].empty())
          if (auto h = class_hints_.find(n.scope[i]); h != class_hints_.end()) classes[i] = h->second;
      it->second = std::move(classes);
    }
    n.scope_classes = it->second;
  }
}

}  // namespace onnx_detail

// A scope path (dotted) longer than this ends the levels: each level repeats its parent's path, so a name of
// long components would make levels whose text grows with the square of the name.
constexpr size_t kMaxScopePathBytes = 4096;

std::vector<std::string> scope_from_node_name(const std::string& name) {
  // Exporter names look like "/layer1/layer1.0/conv1/Conv" or "/layer1/layer1.0/conv1/Conv_1": each
  // component but the last is one module level; levels are full dotted paths, or (older exporters)
  // relative names that we join.
  std::vector<std::string> out;
  if (name.empty() || name[0] != '/') return out;
  std::vector<std::string> parts;
  size_t pos = 1;
  // At most limits().max_scope_depth levels, and one more so that the report, which cuts there, says so:
  // the levels are full paths, so their text grows with the square of the depth.
  const size_t max_levels = static_cast<size_t>(limits().max_scope_depth) + 1;
  while (pos <= name.size() && parts.size() < max_levels) {
    size_t slash = name.find('/', pos);
    if (slash == std::string::npos) break;  // the last component is the op itself
    parts.push_back(name.substr(pos, slash - pos));
    pos = slash + 1;
  }
  // Each component names a module relative to an ancestor: "layer1.0" under "layer1" (the
  // Sequential's own name repeated), "conv.0" under "features.5.conv", "conv1" under "layer1.0".
  // Join by overlapping the longest tail of the current path with the head of the component.
  std::vector<std::string> path;  // dotted segments of the current scope
  for (const auto& p : parts) {
    if (p.empty()) continue;
    std::vector<std::string> seg;
    for (size_t a = 0, b; a <= p.size(); a = b + 1) {
      b = p.find('.', a);
      if (b == std::string::npos) b = p.size();
      seg.push_back(p.substr(a, b - a));
    }
    // The overlap is a few segments in every exporter's names; searching at most 64 keeps a crafted name of
    // many dotted segments per component linear.
    size_t overlap = 0;
    for (size_t k = std::min({path.size(), seg.size() - 1, size_t{64}}); k > 0; --k)
      if (std::equal(path.end() - k, path.end(), seg.begin())) {
        overlap = k;
        break;
      }
    path.insert(path.end(), seg.begin() + overlap, seg.end());
    std::string joined;
    for (size_t i = 0; i < path.size(); ++i) joined += (i ? "." : "") + path[i];
    out.push_back(std::move(joined));
    if (out.back().size() > kMaxScopePathBytes) break;  // deeper levels would repeat a path this long each
  }
  return out;
}

}  // namespace flopwise
