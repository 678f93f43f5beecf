// src/pt2/signature_json.cc — the program JSON's graph signature (input and output specs; torch 2.1's
// maps too), range constraints, module call graph, payload configs and nn_module_stack text.
#include <algorithm>
#include <array>
#include <unordered_map>

#include "pt2/json_reader.h"

namespace flopwise::pt2 {

namespace {
enum class ArgForm { Union, Tensor, CustomObj, Token, Constant };
struct SpecKind {
  std::string_view member;
  int kind;  // InputKind or OutputKind
  ArgForm form;
};
constexpr std::array<SpecKind, 7> kInputKinds{{
    {"user_input", static_cast<int>(InputKind::UserInput), ArgForm::Union},
    {"parameter", static_cast<int>(InputKind::Parameter), ArgForm::Tensor},
    {"buffer", static_cast<int>(InputKind::Buffer), ArgForm::Tensor},
    {"tensor_constant", static_cast<int>(InputKind::TensorConstant), ArgForm::Tensor},
    {"custom_obj", static_cast<int>(InputKind::CustomObj), ArgForm::CustomObj},
    {"token", static_cast<int>(InputKind::Token), ArgForm::Token},
    {"constant_input", static_cast<int>(InputKind::ConstantInput), ArgForm::Constant},
}};
constexpr std::array<SpecKind, 8> kOutputKinds{{
    {"user_output", static_cast<int>(OutputKind::UserOutput), ArgForm::Union},
    {"loss_output", static_cast<int>(OutputKind::LossOutput), ArgForm::Tensor},
    {"buffer_mutation", static_cast<int>(OutputKind::BufferMutation), ArgForm::Tensor},
    {"gradient_to_parameter", static_cast<int>(OutputKind::GradientToParameter), ArgForm::Tensor},
    {"gradient_to_user_input", static_cast<int>(OutputKind::GradientToUserInput), ArgForm::Tensor},
    {"user_input_mutation", static_cast<int>(OutputKind::UserInputMutation), ArgForm::Tensor},
    {"token", static_cast<int>(OutputKind::Token), ArgForm::Token},
    {"parameter_mutation", static_cast<int>(OutputKind::ParameterMutation), ArgForm::Tensor},
}};

template <size_t N>
const SpecKind* spec_kind(std::string_view member, const std::array<SpecKind, N>& table) {
  for (const SpecKind& k : table)
    if (k.member == member) return &k;
  return nullptr;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// One spec's fields: "arg" in its form; "<x>_name" the target; "persistent"; a constant's "name", "value".
struct SpecFields {
  Argument arg;
  std::string_view target;
  bool persistent = true;
};
SpecFields read_spec_fields(JsonReader& r, Value v, ArgForm form) {
  SpecFields s;
  for (auto field : object(v)) {
    std::string_view k = field.key;
    Value fv = field.value;
    if (k == "arg" || k == "value") {
      if (form == ArgForm::Union || form == ArgForm::Constant) {
        s.arg = r.argument(fv);
      } else {
        s.arg = r.tensor_argument(fv);  // {"name": ...} (a custom object's class read below)
        if (form == ArgForm::Token) s.arg.kind = ArgKind::Token;
        if (form == ArgForm::CustomObj) s.arg.kind = ArgKind::CustomObj;
      }
    } else if (k == "persistent") {
      s.persistent = fv.is_null() || JsonReader::boolean(fv);
    } else if (k == "name" || ends_with(k, "_name")) {
      s.target = r.str(fv);
    }
  }
  return s;
}

template <class Spec, class Kind, size_t N>
Spec read_spec(JsonReader& r, Value v, const std::array<SpecKind, N>& table, const char* what) {
  for (auto field : object(v)) {
    std::string_view member = field.key;
    const SpecKind* k = spec_kind(member, table);
    if (!k)
      r.fail(std::string("an ") + what + " spec of kind '" + std::string(member) +
             "' this reader does not know");
    SpecFields f = read_spec_fields(r, field.value, k->form);
    Spec s;
    s.kind = static_cast<Kind>(k->kind);
    s.arg = std::move(f.arg);
    s.target = f.target;
    if constexpr (std::is_same_v<Spec, InputSpec>) s.persistent = f.persistent;
    return s;
  }
  r.fail(std::string("an empty ") + what + " spec");
}

// torch 2.1's signature: maps from placeholder (or output) names; specs are put in graph order later.
void read_legacy_signature(JsonReader& r, simdjson::dom::object v) {
  auto add_input = [&](InputKind kind, std::string_view name, std::string_view target) {
    InputSpec s;
    s.kind = kind;
    s.arg.kind = ArgKind::Tensor;
    s.arg.s = name;
    s.target = target;
    r.p_.inputs.push_back(s);
  };
  auto add_output = [&](OutputKind kind, std::string_view name, std::string_view target) {
    OutputSpec s;
    s.kind = kind;
    s.arg.kind = ArgKind::Tensor;
    s.arg.s = name;
    s.target = target;
    r.p_.outputs.push_back(s);
  };
  for (auto field : v) {
    std::string_view k = field.key;
    Value fv = field.value;
    if (k == "user_inputs")
      for (Value n : array(fv)) add_input(InputKind::UserInput, r.str(n), {});
    else if (k == "user_outputs")
      for (Value n : array(fv)) add_output(OutputKind::UserOutput, r.str(n), {});
    else if (k == "inputs_to_parameters")
      for (auto f : object(fv)) add_input(InputKind::Parameter, r.p_.strings.intern(f.key), r.str(f.value));
    else if (k == "inputs_to_buffers")
      for (auto f : object(fv)) add_input(InputKind::Buffer, r.p_.strings.intern(f.key), r.str(f.value));
    else if (k == "buffers_to_mutate")
      for (auto f : object(fv))
        add_output(OutputKind::BufferMutation, r.p_.strings.intern(f.key), r.str(f.value));
    else if (k == "backward_signature" && !fv.is_null()) {
      for (auto b : object(fv)) {
        std::string_view bk = b.key;
        Value bv = b.value;
        if (bk == "loss_output")
          add_output(OutputKind::LossOutput, r.str(bv), {});
        else if (bk == "gradients_to_parameters")
          for (auto f : object(bv))
            add_output(OutputKind::GradientToParameter, r.p_.strings.intern(f.key), r.str(f.value));
        else if (bk == "gradients_to_user_inputs")
          for (auto f : object(bv))
            add_output(OutputKind::GradientToUserInput, r.p_.strings.intern(f.key), r.str(f.value));
      }
    }
  }
}
}  // namespace

void read_signature(JsonReader& r, Value v) {
  bool current = false;
  simdjson::dom::object o = object(v);
  for (auto field : o) {
    std::string_view k = field.key;
    if (k == "input_specs") {
      current = true;
      for (Value s : array(field.value))
        r.p_.inputs.push_back(read_spec<InputSpec, InputKind>(r, s, kInputKinds, "input"));
    } else if (k == "output_specs") {
      current = true;
      for (Value s : array(field.value))
        r.p_.outputs.push_back(read_spec<OutputSpec, OutputKind>(r, s, kOutputKinds, "output"));
    }
  }
  if (current) return;
  read_legacy_signature(r, o);
  r.legacy_signature = true;
}

void read_range_constraints(JsonReader& r, Value v) {
  for (auto field : object(v)) {
    std::string_view symbol = r.p_.strings.intern(field.key);
    RangeConstraint c;
    for (auto f : object(field.value)) {
      std::string_view k = f.key;
      if (k == "min_val")
        c.min = r.bound(f.value);
      else if (k == "max_val")
        c.max = r.bound(f.value);
    }
    r.p_.range_constraints.emplace_back(symbol, c);
  }
}

void read_module_call_graph(JsonReader& r, Value v) {
  for (Value e : array(v)) {
    ModuleCallEntry m;
    for (auto field : object(e)) {
      std::string_view k = field.key;
      Value fv = field.value;
      if (k == "fqn") {
        m.fqn = r.str(fv);
      } else if (k == "signature" && !fv.is_null()) {
        for (auto sf : object(fv)) {
          Value sv = sf.value;
          if (sf.key == "forward_arg_names" && !sv.is_null())
            for (Value n : array(sv)) m.forward_arg_names.push_back(r.str(n));
        }
      }
    }
    r.p_.module_call_graph.push_back(std::move(m));
  }
}

// {"config": {fqn: {"path_name", "is_param", "use_pickle", "tensor_meta": TensorMeta | null}}}
void JsonReader::read_payload_config(Value root) {
  for (auto field : object(root)) {
    if (field.key != "config") continue;
    for (auto entry : object(field.value)) {
      Payload pl;
      pl.name = p_.strings.intern(entry.key);
      for (auto f : object(entry.value)) {
        std::string_view k = f.key;
        Value fv = f.value;
        if (k == "path_name")
          pl.path = str(fv);
        else if (k == "is_param")
          pl.is_param = boolean(fv);
        else if (k == "tensor_meta" && !fv.is_null())
          pl.meta = tensor_meta(fv);
      }
      p_.payloads.push_back(std::move(pl));
    }
  }
}

std::vector<ModuleFrame> parse_module_stack(std::string_view text) {
  static const std::array<bool, 256> kMarks = [] {  // the characters the split looks at
    std::array<bool, 256> t{};
    for (unsigned char c : std::string_view("([)],")) t[c] = true;
    return t;
  }();
  std::vector<ModuleFrame> frames;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view item = text.substr(start, end - start);
    std::string_view parts[3];
    int n = 0, depth = 0;
    size_t from = 0;
    for (size_t i = 0; i < item.size() && n < 2; ++i) {  // the type, after the second comma, is not split
      char c = item[i];
      if (!kMarks[static_cast<unsigned char>(c)]) continue;
      if (c == '(' || c == '[')
        ++depth;
      else if (c == ')' || c == ']')
        --depth;
      else if (depth == 0)
        parts[n++] = item.substr(from, i - from), from = i + 1;
    }
    if (n == 2)
      frames.push_back({parts[0], parts[1], item.substr(from)});
    else if (!item.empty())
      frames.push_back({item, {}, {}});
    start = end + 1;
  }
  return frames;
}

}  // namespace flopwise::pt2
