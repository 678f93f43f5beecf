// src/import/onnx_scopes.h — the module scope of an imported node: from its name
// ("/layer1/layer1.0/conv1/Conv") or from torch.onnx's metadata, interned so that the nodes of one module
// share one list; and module classes learnt from inlined functions.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "flopwise/ir.h"

namespace flopwise::onnx_detail {

// The module a function of torch.onnx's dynamo export stands for: torch names it
// "<module path>_<Class>_<attribute path>_<n>" with dots written '_' ("torch_nn_modules_conv_Conv2d_conv1_1":
// scope "conv1", class "Conv2d"), or with the path as dynamo's getattr chain
// ("..._Conv2d_getattr_L__self___layer1___0___conv1_1": "layer1.0.conv1"). The dotted scope is the path read
// back: through a parameter's name among the call's arguments ("layer1.0.conv1.weight"), else under the
// caller's scope, else as written. None when the name has no class.
struct ModuleFunction {
  std::string scope, cls;
};
std::optional<ModuleFunction> module_of_function(const std::string& name, const std::string& caller_scope,
                                                 const std::vector<std::string>& args);

class ScopeNames {
 public:
  // The scope levels of a node named "/a/a.0/conv/Conv": they depend on the name's directory only, so
  // the nodes of one module share one list (interned by directory).
  StringList of_name(const std::string& name);

  // Scope levels and classes from torch.onnx's node metadata (name_scopes: each level's attribute name;
  // class_hierarchy, when given: the root's class, then each level's), interned by their text.
  const std::pair<StringList, StringList>& of_metadata(const std::string& name_scopes,
                                                       const std::string* class_hierarchy);

  // A module class learnt from an inlined function's name, for the scope that called it.
  void hint_class(const std::string& scope, const std::string& cls) { class_hints_[scope] = cls; }

  // Classes learnt from inlined functions, applied once all nodes are imported.
  void apply_class_hints(Graph& g) const;

 private:
  std::unordered_map<std::string, StringList> scope_of_dir_;
  std::string last_dir_ = "\x01";  // matches no directory
  StringList last_scope_;
  std::unordered_map<std::string, std::pair<StringList, StringList>> scope_of_metadata_;
  std::map<std::string, std::string> class_hints_;
};

}  // namespace flopwise::onnx_detail
