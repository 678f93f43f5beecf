// tests/test_bad_input.cc — bad input, the way a user meets it: the CLI on broken files and wrong options.
// Each case checks the documented exit code and that stderr holds one clear line (never a crash, never a
// silent zero).
#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "cli_util.h"

namespace fs = std::filesystem;

namespace {

using Run = fwtest::CliRun;
using fwtest::slurp;

fs::path tmpdir() { return fwtest::scratch_dir("bad_input"); }

Run run_cli(const std::string& args) { return fwtest::run_cli(args, tmpdir()); }

int lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

fs::path write_file(const std::string& name, const std::string& bytes) {
  fs::path p = tmpdir() / name;
  std::ofstream f(p, std::ios::binary);
  f << bytes;
  return p;
}

// A one-node model: X[dims] -> op -> Y, with the op in `domain`.
std::string one_node_model(const std::string& op, const std::string& domain,
                           const std::vector<int64_t>& dims) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* os = m.add_opset_import();
  os->set_domain("");
  os->set_version(17);
  if (!domain.empty()) {
    auto* o2 = m.add_opset_import();
    o2->set_domain(domain);
    o2->set_version(1);
  }
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* in = g->add_input();
  in->set_name("X");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (auto d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  auto* n = g->add_node();
  n->set_name("/block/" + op);
  n->set_op_type(op);
  n->set_domain(domain);
  n->add_input("X");
  n->add_output("Y");
  g->add_output()->set_name("Y");
  return m.SerializeAsString();
}

std::string q(const fs::path& p) { return "\"" + p.string() + "\""; }

}  // namespace

TEST_CASE("bad input files exit 2 with one line") {
  std::string good = one_node_model("Relu", "", {2, 3});
  std::mt19937 rng(42);
  std::string random_bytes(4096, '\0');
  for (auto& c : random_bytes) c = static_cast<char>(rng());
  struct Case {
    const char* label;
    fs::path file;
    const char* needle;  // must appear in the error line
  } cases[] = {
      {"missing file", tmpdir() / "does_not_exist.onnx", "cannot open"},
      {"empty file", write_file("empty.onnx", ""), "empty"},
      {"random bytes", write_file("random.onnx", random_bytes), "not a valid ONNX model"},
      {"truncated model", write_file("truncated.onnx", good.substr(0, good.size() / 2)),
       "not a valid ONNX model"},
      {"json renamed .onnx", write_file("model.onnx", "{\"graph\": {\"node\": []}, \"ir_version\": 8}\n"),
       "not a valid ONNX model"},
      {"a directory", tmpdir(), "not a regular file"},
  };
  for (const auto& c : cases) {
    CAPTURE(std::string(c.label));
    Run r = run_cli(q(c.file));
    CHECK(r.code == 2);
    CHECK(lines(r.err) == 1);
    CHECK_MESSAGE(r.err.find(c.needle) != std::string::npos, r.err);
    CHECK(r.out.empty());
  }
}

TEST_CASE("a negative input dim is an error; an absurd one overflows to unknown") {
  fs::path neg = write_file("neg.onnx", one_node_model("Relu", "", {2, -3}));
  Run r = run_cli(q(neg));
  CHECK(r.code == 2);
  CHECK(lines(r.err) == 1);
  CHECK(r.err.find("negative dim -3") != std::string::npos);

  // 2^62 x 8 elements: the element count overflows int64. The report says so; --strict fails.
  fs::path huge = write_file("huge.onnx", one_node_model("Relu", "", {int64_t{1} << 62, 8}));
  Run ok = run_cli(q(huge) + " --format json");
  CHECK(ok.code == 0);
  CHECK(ok.out.find("overflow") != std::string::npos);
  CHECK(ok.out.find("\"flops\": null") != std::string::npos);
  Run strict = run_cli(q(huge) + " --strict");
  CHECK(strict.code == 3);
}

TEST_CASE("an op from an unknown domain is listed, and --strict makes it exit 3") {
  fs::path m = write_file("custom.onnx", one_node_model("MyOp", "com.example", {2, 3}));
  Run r = run_cli(q(m) + " --format json");
  CHECK(r.code == 0);
  CHECK(r.out.find("\"op\": \"com.example::MyOp\"") != std::string::npos);
  CHECK(r.out.find("com.example") != std::string::npos);
  Run text = run_cli(q(m));
  CHECK(text.out.find("Unsupported ops") != std::string::npos);
  Run strict = run_cli(q(m) + " --strict");
  CHECK(strict.code == 3);
  CHECK(lines(strict.err) == 1);
}

TEST_CASE("bad usage exits 2 with one line") {
  fs::path m = write_file("relu.onnx", one_node_model("Relu", "", {2, 3}));
  const char* bad[] = {
      "--input nosuch:1x2",      // names no input
      "--input X:1xx2",          // malformed shape
      "--input X:2x3:complex7",  // unknown dtype
      "--dim batch=abc",         // not an integer
      "--format yaml",           // unknown format
      "--value X",               // missing '='
  };
  for (const char* args : bad) {
    CAPTURE(std::string(args));
    Run r = run_cli(q(m) + " " + args);
    CHECK(r.code == 2);
    CHECK(lines(r.err) == 1);
  }
  Run none = run_cli("");
  CHECK(none.code == 2);
}

TEST_CASE("a missing external-data file does not matter") {
  // An initializer stored externally in a file that does not exist: only its dims are read.
  onnx::ModelProto m;
  m.ParseFromString(one_node_model("MatMul", "", {2, 3}));
  auto* g = m.mutable_graph();
  g->mutable_node(0)->add_input("W");
  auto* w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  w->add_dims(4);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* e = w->add_external_data();
  e->set_key("location");
  e->set_value("weights_that_do_not_exist.bin");
  fs::path p = write_file("ext.onnx", m.SerializeAsString());
  Run r = run_cli(q(p) + " --format json");
  CHECK(r.code == 0);
  // params 3*4 = 12; MACs 2*4*3 = 24
  CHECK(r.out.find("\"params\": 12") != std::string::npos);
  CHECK(r.out.find("\"macs\": 24") != std::string::npos);
}
