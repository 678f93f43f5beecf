// src/writers/report_io.cc — reader for saved JSON reports (schema "flopwise.report/1", written by
// src/writers/json_report.cc).
#include "flopwise/report_io.h"

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "flopwise/attention.h"
#include "flopwise/errors.h"
#include "flopwise/input_file.h"
#include "flopwise/llm.h"
#include "flopwise/moe.h"

namespace flopwise {

namespace {
using json = nlohmann::json;

struct Reader {
  std::string origin;

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(origin + ": not a flopwise.report/1 JSON report: " + what);
  }
  const json& at(const json& j, const char* key, const std::string& where) const {
    if (!j.is_object() || !j.contains(key)) fail("missing key '" + std::string(key) + "' in " + where);
    return j.at(key);
  }
  Count count(const json& j, const char* key, const std::string& where) const {
    if (!j.is_object() || !j.contains(key)) return Count::unknown();  // added keys are optional
    const json& v = j.at(key);
    if (v.is_null() || v.is_string()) return Count::unknown();  // a string: symbolic, not comparable
    if (!v.is_number_integer()) fail("'" + std::string(key) + "' in " + where + " is not an integer or null");
    return Count{v.get<int64_t>(), true, false};
  }
  Totals totals(const json& j, const std::string& where) const {
    Totals t;
    t.params = count(j, "params", where);
    t.buffers = j.contains("buffers") ? count(j, "buffers", where) : Count{};
    t.macs = count(j, "macs", where);
    t.flops = count(j, "flops", where);
    t.memory_bytes = count(j, "memory_bytes", where);
    t.backward_flops = j.contains("backward_flops") ? count(j, "backward_flops", where) : Count{};
    t.backward_macs = j.contains("backward_macs") ? count(j, "backward_macs", where) : Count{};
    if (j.contains("uncounted_nodes") && j.at("uncounted_nodes").is_number_integer())
      t.uncounted = j.at("uncounted_nodes").get<int64_t>();
    return t;
  }
  Shape shape(const json& j, const std::string& where) const {
    if (j.is_null()) return Shape::unknown_rank();
    if (!j.is_array()) fail("shape of " + where + " is not an array or null");
    std::vector<Dim> dims;
    for (const auto& d : j) {
      if (d.is_number_integer())
        dims.push_back(Dim(d.get<int64_t>()));
      else if (d.is_string())
        dims.push_back(Dim::symbol(d.get<std::string>()));  // "batch", "2*seq": compared as written
      else
        dims.push_back(Dim::unknown());
    }
    return Shape(std::move(dims));
  }
  std::string text(const json& j, const char* key) const {
    return j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>() : std::string();
  }
  int64_t integer(const json& j, const char* key, const std::string& where) const {
    if (!j.contains(key)) return 0;
    if (!j.at(key).is_number_integer()) fail("'" + std::string(key) + "' in " + where + " is not an integer");
    return j.at(key).get<int64_t>();
  }
  // "llm" (--phase, --prompt/--generate): its figures; the formulas' text is not read back.
  std::shared_ptr<const LlmSection> llm(const json& j) const {
    if (!j.is_object()) fail("'llm' is not an object");
    auto s = std::make_shared<LlmSection>();
    const std::string phase = text(j, "phase");
    s->phase = phase == "prefill" ? Phase::Prefill : phase == "decode" ? Phase::Decode : Phase::None;
    if (j.contains("kv_cache") && j.at("kv_cache").is_object()) {
      const json& k = j.at("kv_cache");
      KvCache kv;
      kv.found_by = text(k, "found_by");
      kv.past_dim = text(k, "past_dim");
      kv.seq_dim = text(k, "seq_dim");
      if (k.contains("tensors") && k.at("tensors").is_array())
        for (const auto& t : k.at("tensors"))
          kv.pairs.push_back(
              {text(t, "past"), text(t, "present"), integer(t, "axis", "llm.kv_cache.tensors")});
      kv.bytes_per_token = count(k, "bytes_per_token", "llm.kv_cache");
      s->kv = std::move(kv);
    }
    if (j.contains("generation") && j.at("generation").is_object()) {
      const json& g = j.at("generation");
      const std::string where = "llm.generation";
      Generation gen;
      gen.prompt = integer(g, "prompt", where);
      gen.generated = integer(g, "generated", where);
      auto counts = [&](const char* key, Count* macs, Count* flops, Count* bytes) {
        const json& c = g.contains(key) ? g.at(key) : json();
        const std::string w = where + "." + key;
        *macs = count(c, "macs", w);
        *flops = count(c, "flops", w);
        *bytes = count(c, "memory_bytes", w);
      };
      counts("prefill", &gen.prefill_macs, &gen.prefill_flops, &gen.prefill_bytes);
      counts("decode", &gen.decode_macs, &gen.decode_flops, &gen.decode_bytes);
      counts("total", &gen.total_macs, &gen.total_flops, &gen.total_bytes);
      counts("decode_step", &gen.step_macs, &gen.step_flops, &gen.step_bytes);
      gen.kv_bytes_end = count(g, "kv_bytes_end", where);
      if (g.contains("decode_step")) gen.step_dim = text(g.at("decode_step"), "dim");
      if (g.contains("formulas")) {
        gen.prompt_symbol = text(g.at("formulas"), "prompt_symbol");
        gen.generated_symbol = text(g.at("formulas"), "generated_symbol");
      }
      s->generation = std::move(gen);
    }
    return s;
  }
  std::unique_ptr<ScopeNode> scope(const json& j, int depth) const {
    auto s = std::make_unique<ScopeNode>();
    s->name = at(j, "name", "a scope").get<std::string>();
    std::string where = "scope '" + s->name + "'";
    s->label = j.value("label", s->name);
    if (j.contains("class") && j.at("class").is_string()) s->cls = j.at("class").get<std::string>();
    s->cost = totals(j, where);
    s->depth = depth;
    if (j.contains("children")) {
      const json& ch = j.at("children");
      if (!ch.is_array()) fail("'children' of " + where + " is not an array");
      for (const auto& c : ch) s->children.push_back(scope(c, depth + 1));
    }
    return s;
  }
};

void index_scopes(ScopeNode* s, std::map<std::string, ScopeNode*>& out) {
  out.emplace(s->name, s);
  for (auto& c : s->children) index_scopes(c.get(), out);
}

}  // namespace

AnalysedReport parse_report_json(const std::string& text, const std::string& origin) {
  Reader rd{origin};
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError(origin + ": not valid JSON: " + e.what());
  }
  if (!j.is_object()) rd.fail("the top level is not an object");
  const json& schema = rd.at(j, "schema", "the report");
  if (!schema.is_string() || schema.get<std::string>() != "flopwise.report/1")
    rd.fail("schema is " + schema.dump() + ", expected \"flopwise.report/1\"");
  try {
    AnalysedReport r;
    const json& model = rd.at(j, "model", "the report");
    r.path = model.value("path", origin);
    r.format = model.value("format", "report");
    r.producer = model.value("producer", "");
    if (model.contains("opset") && model.at("opset").is_object())
      for (const auto& [d, v] : model.at("opset").items())
        if (v.is_number_integer()) r.opsets[d == "ai.onnx" ? "" : d] = v.get<int64_t>();
    r.convention = j.value("convention", "default");
    auto io = [&](const char* key, auto& out) {
      if (!j.contains(key)) return;
      for (const auto& v : j.at(key)) {
        std::string name = rd.at(v, "name", key).get<std::string>();
        DType dt = parse_dtype(v.value("dtype", "")).value_or(DType::Undefined);
        out.push_back({name, {dt, rd.shape(v.contains("shape") ? v.at("shape") : json(), name)}});
      }
    };
    io("inputs", r.inputs);
    io("outputs", r.outputs);
    r.totals = rd.totals(rd.at(j, "totals", "the report"), "totals");
    r.scopes = rd.scope(rd.at(j, "scopes", "the report"), 0);
    if (j.contains("op_types"))
      for (const auto& o : j.at("op_types")) {
        OpTypeReport ot;
        ot.op = rd.at(o, "op", "op_types").get<std::string>();
        ot.count = o.value("count", int64_t{0});
        std::string where = "op type '" + ot.op + "'";
        ot.macs = rd.count(o, "macs", where);
        ot.flops = rd.count(o, "flops", where);
        ot.params = rd.count(o, "params", where);
        ot.memory_bytes = rd.count(o, "memory_bytes", where);
        r.op_types.push_back(std::move(ot));
      }
    std::map<std::string, ScopeNode*> by_name;
    index_scopes(r.scopes.get(), by_name);
    if (j.contains("nodes"))
      for (const auto& n : j.at("nodes")) {
        NodeReport nr;
        const std::string name = n.value("name", "");
        nr.name = r.strings.add(name);
        const std::string op = rd.at(n, "op", "nodes").get<std::string>();
        const size_t sep = op.rfind("::");
        nr.op = r.strings.intern(sep == std::string::npos ? std::string_view(op)
                                                          : std::string_view(op).substr(sep + 2));
        nr.domain = r.strings.intern(sep == std::string::npos ? std::string_view()
                                                              : std::string_view(op).substr(0, sep));
        nr.scope = r.strings.intern(n.value("scope", ""));
        if (n.contains("outputs"))
          for (const auto& o : n.at("outputs"))
            nr.outputs.push_back({r.strings.add(o.value("name", "")),
                                  rd.shape(o.contains("shape") ? o.at("shape") : json(), name)});
        std::string where = "node '" + name + "'";
        nr.cost.params = rd.count(n, "params", where);
        nr.cost.macs = rd.count(n, "macs", where);
        nr.cost.flops = rd.count(n, "flops", where);
        nr.cost.memory_bytes = rd.count(n, "memory_bytes", where);
        auto it = by_name.find(std::string(nr.scope));
        if (it != by_name.end() &&
            std::find(it->second->ops.begin(), it->second->ops.end(), nr.op) == it->second->ops.end())
          it->second->ops.emplace_back(nr.op);
        r.nodes.push_back(std::move(nr));
      }
    if (j.contains("unsupported"))
      for (const auto& u : j.at("unsupported"))
        r.unsupported[u.value("op", "")] = u.value("nodes", std::vector<std::string>{});
    if (j.contains("warnings")) r.warnings = j.at("warnings").get<std::vector<std::string>>();
    if (j.contains("llm")) r.llm = rd.llm(j.at("llm"));
    return r;
  } catch (const json::exception& e) {
    rd.fail(e.what());
  }
}

AnalysedReport read_report_json(const std::string& path) {
  const std::string text = read_input_file(path);
  if (text.empty()) throw InputError(path + ": empty file");
  return parse_report_json(text, path);
}

bool looks_like_json_report(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;  // never open a FIFO
  std::ifstream f(path, std::ios::binary);
  char c;
  while (f.get(c))
    if (!std::isspace(static_cast<unsigned char>(c))) return c == '{';
  return false;
}

}  // namespace flopwise
