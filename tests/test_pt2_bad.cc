// tests/test_pt2_bad.cc — bad .pt2 archives and bad programs: each refused with one line (an InputError)
// naming the archive, the node or key, never a crash. One table of zip damage, one of program damage;
// tests/fuzz/pt2 holds the same kinds of file for the fuzz target (tests/fuzz/fuzz_pt2.cc).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "flopwise/errors.h"
#include "pt2/program.h"
#include "pt2_util.h"

using namespace flopwise;
using namespace flopwise::pt2;
using pt2test::make_pt2;
using pt2test::make_zip;

namespace {
// The one-line message reading `bytes` gives (or "ok").
std::string error_of(const std::string& bytes, const std::string& program = "") {
  try {
    read_pt2_bytes(bytes, "bad.pt2", program);
    return "ok";
  } catch (const InputError& e) {
    std::string m = e.what();
    CHECK(m.find('\n') == std::string::npos);
    return m;
  }
}
std::string json_error(const std::string& json) { return error_of(make_pt2({{"model", json}})); }

void put32_at(std::string& s, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) s[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// A program of one graph: `nodes`, `values` (tensor_values), graph inputs x (and y) and output `out`.
std::string program(const std::string& nodes, const std::string& values = "", const std::string& out = "b",
                    const std::string& extra_root = "") {
  std::string tv =
      R"J("x": {"dtype": 7, "sizes": [{"as_int": 2}], "requires_grad": false, "device": {"type": "cpu"}},
    "a": {"dtype": 7, "sizes": [{"as_int": 2}], "requires_grad": false, "device": {"type": "cpu"}},
    "b": {"dtype": 7, "sizes": [{"as_int": 2}], "requires_grad": false, "device": {"type": "cpu"}})J";
  return R"J({"graph_module": {"graph": {"inputs": [{"as_tensor": {"name": "x"}}], "outputs": [{"as_tensor": {"name": ")J" +
         out + R"J("}}], "nodes": [)J" + nodes + R"J(], "tensor_values": {)J" +
         (values.empty() ? tv : values) +
         R"J(}, "sym_int_values": {}, "sym_bool_values": {}},
   "signature": {"input_specs": [{"user_input": {"arg": {"as_tensor": {"name": "x"}}}}], "output_specs": []},
   "module_call_graph": []}, "range_constraints": {}, "schema_version": {"major": 8, "minor": 20})J" +
         extra_root + "}";
}
std::string node(const std::string& in, const std::string& out,
                 const std::string& target = "torch.ops.aten.relu.default") {
  return R"J({"target": ")J" + target +
         R"J(", "inputs": [{"name": "self", "arg": {"as_tensor": {"name": ")J" + in +
         R"J("}}}], "outputs": [{"as_tensor": {"name": ")J" + out + R"J("}}], "metadata": {}})J";
}
}  // namespace

TEST_CASE("pt2 bad: a good program reads (the tables below damage it)") {
  CHECK(json_error(program(node("x", "a") + "," + node("a", "b"))) == "ok");
}

TEST_CASE("pt2 bad: damaged zip archives") {
  std::string good = make_pt2({{"model", program(node("x", "a") + "," + node("a", "b"))}});
  const size_t eocd = good.size() - 22;
  struct Row {
    const char* label;
    std::string bytes;
    const char* message;  // the start of the message after "bad.pt2: "
  };
  std::string bad_dir = good, bad_local = good, huge = good, overlap = good, past_end = good;
  put32_at(bad_dir, eocd + 16, 0x7fffffff);   // central directory offset past the end
  put32_at(past_end, eocd + 12, 0x00ffffff);  // central directory size past the end
  // the first entry's local header offset points into the middle of the file
  size_t dir_at = static_cast<size_t>(static_cast<unsigned char>(good[eocd + 16])) |
                  static_cast<size_t>(static_cast<unsigned char>(good[eocd + 17])) << 8;
  put32_at(bad_local, dir_at + 42, 7);
  put32_at(overlap, dir_at + 42 + 46 + std::string("model/archive_format").size(), 0);  // 2nd entry at 0
  // the program's entry declares 4 GiB (stored: both sizes), more than the archive holds
  size_t prog = good.rfind("model/models/model.json") - 46;
  put32_at(huge, prog + 20, 0xfffffff0u);
  put32_at(huge, prog + 24, 0xfffffff0u);
  const Row rows[] = {
      {"empty", "", "not a zip archive (0 bytes, too short)"},
      {"not a zip", std::string(100, 'x'),
       "not a zip archive (no end-of-central-directory record; truncated?)"},
      {"truncated", good.substr(0, good.size() / 2), "not a zip archive (no end-of-central-directory record"},
      {"directory offset past the end", bad_dir, "bad zip central directory (offset 2147483647"},
      {"directory size past the end", past_end, "bad zip central directory"},
      {"local header offset wrong", bad_local,
       "zip entry 'model/archive_format' lies outside|overlapping zip entries"},
      {"overlapping entries", overlap, "overlapping zip entries"},
      {"huge declared size", huge, "zip entry 'model/models/model.json' lies outside the archive's data"},
  };
  for (const Row& r : rows) {
    std::string label = r.label;
    CAPTURE(label);
    std::string m = error_of(r.bytes);
    std::string want = r.message;
    bool found = false;
    for (size_t at = 0; at <= want.size();) {  // alternatives separated by '|'
      size_t bar = want.find('|', at);
      if (bar == std::string::npos) bar = want.size();
      found = found || m.find("bad.pt2: " + want.substr(at, bar - at)) == 0;
      at = bar + 1;
    }
    CHECK_MESSAGE(found, m);
  }
}

TEST_CASE("pt2 bad: a deflated program that lies about its size, and a corrupt deflate stream") {
  std::string json = program(node("x", "a") + "," + node("a", "b"));
  std::string zip = make_zip({{"m/archive_format", "pt2"}, {"m/models/model.json", json, true}});
  size_t eocd = zip.size() - 22;
  size_t dir_at = static_cast<unsigned char>(zip[eocd + 16]) |
                  static_cast<size_t>(static_cast<unsigned char>(zip[eocd + 17])) << 8;
  size_t second = dir_at + 46 + std::string("m/archive_format").size();
  std::string longer = zip;
  put32_at(longer, second + 24, static_cast<uint32_t>(json.size() + 1000));
  CHECK(error_of(longer).find("corrupt deflate data") != std::string::npos);
  std::string garbled = zip;
  size_t data =
      30 + std::string("m/archive_format").size() + 3 + 30 + std::string("m/models/model.json").size();
  for (size_t i = data; i < data + 8; ++i) garbled[i] = '\xff';
  CHECK(error_of(garbled).find("corrupt deflate data") != std::string::npos);
}

TEST_CASE("pt2 bad: programs that break the schema") {
  std::string deep_graph = R"J({"as_graph": {"name": "g", "graph": )J", deep_close;
  for (int i = 0; i < 40; ++i) {
    deep_graph +=
        R"J({"inputs": [], "outputs": [], "tensor_values": {}, "nodes": [{"target": "torch.ops.higher_order.cond", "inputs": [{"name": "", "arg": {"as_graph": {"name": "g", "graph": )J";
    deep_close += "}}}], \"outputs\": [], \"metadata\": {}}]}";
  }
  deep_graph += R"J({"inputs": [], "outputs": [], "nodes": [], "tensor_values": {}})J" + deep_close + "}}";
  std::string deep_arg = "{\"as_int\": 1}";
  for (int i = 0; i < 80; ++i) deep_arg = "{\"as_string_to_argument\": {\"k\": " + deep_arg + "}}";
  auto with_arg = [](const std::string& arg) {
    return program(R"J({"target": "torch.ops.higher_order.cond", "inputs": [{"name": "", "arg": )J" + arg +
                   R"J(}], "outputs": [], "metadata": {}},)J" + node("x", "a") + "," + node("a", "b"));
  };
  struct Row {
    const char* label;
    std::string json;
    const char* message;  // after "bad.pt2: model/models/model.json: "
  };
  const Row rows[] = {
      {"reads what nothing defines", program(node("x", "a") + "," + node("q", "b")),
       "node 1 (torch.ops.aten.relu.default): reads 'q', which nothing defines"},
      {"defines twice", program(node("x", "a") + "," + node("x", "a") + "," + node("a", "b")),
       "node 1 (torch.ops.aten.relu.default): defines 'a' twice"},
      {"out of order (or a cycle)", program(node("a", "b") + "," + node("b", "a")),
       "node 0 (torch.ops.aten.relu.default): reads 'a' before the node that defines it (a program's graph "
       "is in "
       "topological order as serialized: this one is out of order or has a cycle)"},
      {"output defined by nothing", program(node("x", "a") + "," + node("a", "b"), "", "zz"),
       "graph output 'zz' is defined by nothing"},
      {"tensor without its value", program(node("x", "a") + "," + node("a", "c")),
       "node 1 (torch.ops.aten.relu.default): tensor 'c' has no entry in tensor_values"},
      {"node without target", program(R"J({"inputs": [], "outputs": [], "metadata": {}})J"),
       "node 0: a node without 'target'"},
      {"target of the wrong type", program(R"J({"target": 5, "inputs": [], "outputs": [], "metadata": {}})J"),
       "node 0: key 'target': malformed or unexpected JSON (The JSON element does not have the requested "
       "type.)"},
      {"a size beyond 64 bits",
       program(
           node("x", "a") + "," + node("a", "b"),
           R"J("x": {"dtype": 7, "sizes": [{"as_int": 99999999999999999999}], "device": {"type": "cpu"}})J"),
       "key 'tensor_values': malformed or unexpected JSON (The JSON number is too large or too small to fit "
       "within the requested type.)"},
      {"NaN where a string is wanted (Python's tokens are parsed again as marked strings)",
       program(R"J({"target": NaN, "inputs": [], "outputs": [], "metadata": {}})J"),
       "node 0: key 'target': malformed or unexpected JSON (The JSON element does not have the requested "
       "type.)"},
      {"a negative size past 64 bits",
       program(
           node("x", "a") + "," + node("a", "b"),
           R"J("x": {"dtype": 7, "sizes": [{"as_int": -99999999999999999999}], "device": {"type": "cpu"}})J"),
       "key 'tensor_values': malformed or unexpected JSON (The JSON number is too large or too small to fit "
       "within the requested type.)"},
      {"a negative size",
       program(node("x", "a") + "," + node("a", "b"),
               R"J("x": {"dtype": 7, "sizes": [{"as_int": -4}], "device": {"type": "cpu"}})J"),
       "key 'tensor_values': a negative size -4"},
      {"a tensor value without dtype",
       program(node("x", "a"), R"J("x": {"sizes": [], "device": {"type": "cpu"}})J"),
       "key 'tensor_values': a tensor value without 'dtype'"},
      {"subgraphs nested too deep", with_arg(deep_graph), "subgraphs nested deeper than 32"},
      {"arguments nested too deep", with_arg(deep_arg), "arguments nested deeper than 64"},
      {"a subgraph's node of the wrong type (named while the subgraph lives; fuzz: "
       "crash_subgraph_error_context)",
       with_arg(R"J({"as_graph": {"name": "g", "graph": {"inputs": [], "outputs": [], "tensor_values": {},
         "nodes": [{"name": "inner", "target": "torch.ops.aten.relu.default", "inputs": 5}]}}})J"),
       "node 0 'inner' (torch.ops.aten.relu.default): key 'inputs': malformed or unexpected JSON (The JSON "
       "element "
       "does not have the requested type.)"},
      {"not JSON", "{\"graph_module\": [1, 2", "malformed or unexpected JSON"},
      {"no graph_module", R"J({"schema_version": {"major": 8, "minor": 1}})J",
       "not an exported program (no 'graph_module')"},
      {"an unknown input spec",
       R"J({"graph_module": {"graph": {"inputs": [], "outputs": [], "nodes": [], "tensor_values": {}},
        "signature": {"input_specs": [{"future_kind": {}}], "output_specs": []}}, "schema_version": {"major": 8, "minor": 1}})J",
       "key 'signature': an input spec of kind 'future_kind' this reader does not know"},
      {"a spec naming no input",
       R"J({"graph_module": {"graph": {"inputs": [], "outputs": [], "nodes": [], "tensor_values": {}},
        "signature": {"input_specs": [{"parameter": {"arg": {"name": "p"}, "parameter_name": "w"}}], "output_specs": []}},
        "schema_version": {"major": 8, "minor": 1}})J",
       "graph signature: input spec names 'p', which is no input of the graph"},
  };
  const std::string head = "bad.pt2: model/models/model.json: ";
  for (const Row& r : rows) {
    std::string label = r.label;
    CAPTURE(label);
    std::string m = json_error(r.json);
    CHECK(m.substr(0, head.size()) == head);
    CHECK_MESSAGE(m.find(r.message) != std::string::npos, m);
  }
}

TEST_CASE("pt2 bad: the fuzz seeds (tests/fuzz/pt2) read or are refused with one line") {
  int read = 0, refused = 0;
  for (const auto& f :
       std::filesystem::directory_iterator(std::string(FLOPWISE_SOURCE_DIR) + "/tests/fuzz/pt2")) {
    CAPTURE(f.path().string());
    try {
      Program p = read_pt2_file(f.path().string());
      ++read;
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).find('\n') == std::string::npos);
      ++refused;
    }
  }
  // good_current, good_deflated, good_nonfinite, legacy, real_hop_cond, real_mlp, crash_full_int_nan,
  // oom_while_loop_unending
  CHECK(read == 8);
  CHECK(refused >= 7);
}
