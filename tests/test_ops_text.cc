// tests/test_ops_text.cc — text family: StringNormalizer, TfIdfVectorizer, RegexFullMatch. String processing
// counts 0 FLOPs; TfIdfVectorizer counts 1 per output element in IDF/TFIDF modes (weight scaling), 0 in TF
// mode.
#include "op_test_util.h"

using namespace fwtest;

namespace {
Attribute strings(std::vector<std::string> v) {
  Attribute a;
  a.kind = Attribute::Kind::Strings;
  a.strings = std::move(v);
  return a;
}
}  // namespace

TEST_CASE("text ops") {
  const auto stop = strings({"monday"});
  const auto idx7 = A::ints({0, 1, 2, 3, 4, 5, 6});
  const std::vector<OpCase> cases = {
      // label, op, inputs, attrs, expected shapes, MACs, FLOPs
      // StringNormalizer: stop words drop a data-dependent number of elements.
      {"strnorm case only keeps shape",
       "StringNormalizer",
       {"4:string"},
       {{"case_change_action", A::s("LOWER")}},
       {"4"},
       0,
       0},
      {"strnorm stopwords", "StringNormalizer", {"4:string"}, {{"stopwords", stop}}, {"?"}, 0, 0},
      {"strnorm 1xC stopwords", "StringNormalizer", {"1x6:string"}, {{"stopwords", stop}}, {"1x?"}, 0, 0},
      {"strnorm empty stopwords keep shape",
       "StringNormalizer",
       {"1x6:string"},
       {{"stopwords", strings({})}},
       {"1x6"}},
      {"strnorm symbolic", "StringNormalizer", {"C:string"}, {}, {"C"}, 0, 0},
      {"strnorm symbolic 1xC", "StringNormalizer", {"?xC:string"}, {}, {"1xC"}},
      {"strnorm unknown rank", "StringNormalizer", {"*:string"}, {}, {"*"}, 0, 0},
      {"strnorm batch 2", "StringNormalizer", {"2x3:string"}, {}, {"!"}},
      {"strnorm rank 3", "StringNormalizer", {"1x2x3:string"}, {}, {"!"}},
      // TfIdfVectorizer: output [max(ngram_indexes) + 1] or [B, max + 1].
      {"tfidf 1-D",
       "TfIdfVectorizer",
       {"12:int32"},
       {{"ngram_indexes", idx7}, {"mode", A::s("TF")}},
       {"7"},
       0,
       0},
      {"tfidf batch",
       "TfIdfVectorizer",
       {"2x6:int32"},
       {{"ngram_indexes", idx7}, {"mode", A::s("TF")}},
       {"2x7"},
       0,
       0},
      {"tfidf max index", "TfIdfVectorizer", {"12:int64"}, {{"ngram_indexes", A::ints({4, 0, 2})}}, {"5"}},
      {"tfidf tfidf mode",
       "TfIdfVectorizer",
       {"2x6:int64"},
       {{"ngram_indexes", idx7}, {"mode", A::s("TFIDF")}},
       {"2x7"},
       0,
       14},  // 2*7 weight multiplies
      {"tfidf symbolic",
       "TfIdfVectorizer",
       {"Bx6:int64"},
       {{"ngram_indexes", idx7}, {"mode", A::s("IDF")}},
       {"Bx7"},
       0,
       kUnknown},
      {"tfidf unknown rank", "TfIdfVectorizer", {"*:int64"}, {{"ngram_indexes", idx7}}, {"*"}},
      {"tfidf rank 3", "TfIdfVectorizer", {"2x3x4:int64"}, {{"ngram_indexes", idx7}}, {"!"}},
      {"tfidf negative index", "TfIdfVectorizer", {"6:int64"}, {{"ngram_indexes", A::ints({0, -1})}}, {"!"}},
      {"tfidf no indexes", "TfIdfVectorizer", {"6:int64"}, {}, {"!"}},
      // RegexFullMatch (opset 20): boolean, same shape.
      {"regex", "RegexFullMatch", {"3x2:string"}, {{"pattern", A::s("a.*")}}, {"3x2"}, 0, 0, "", 20},
      {"regex symbolic", "RegexFullMatch", {"N:string"}, {{"pattern", A::s("a.*")}}, {"N"}, 0, 0, "", 20},
      {"regex unknown rank", "RegexFullMatch", {"*:string"}, {{"pattern", A::s("a.*")}}, {"*"}, 0, 0, "", 20},
  };
  for (const auto& tc : cases) check_case(tc);
}

TEST_CASE("text ops set their element types") {
  CHECK(run_op("StringNormalizer", {"4:string"}).out(0).dtype == DType::String);
  CHECK(run_op("TfIdfVectorizer", {"4:int64"}, {{"ngram_indexes", A::ints({0})}}).out(0).dtype ==
        DType::Float32);
  CHECK(run_op("RegexFullMatch", {"4:string"}, {}, 1, "", 20).out(0).dtype == DType::Bool);
}
