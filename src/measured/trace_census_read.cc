// src/measured/trace_census_read.cc — the census reader of PyTorch profiler traces (flopwise/trace_census.h):
// one streaming pass over the JSON (trace_source.h's byte source, pull parser and walk to the event array),
// keeping of each timed event its name, category, time, correlation and stream, and the collective an NCCL
// kernel records; of the document, distributedInfo's rank and world size and the first device's name.
#include <string_view>
#include <unordered_map>

#include "flopwise/errors.h"
#include "flopwise/trace_census.h"
#include "trace_census_facts.h"
#include "trace_source.h"

namespace flopwise {
namespace {

using namespace std::string_view_literals;
using trace_read::each_event;
using trace_read::Source;
using trace_read::TraceParser;
using trace_read::walk_trace;

class CensusReader {
 public:
  CensusReader(const std::string& path, CensusKeep keep)
      : src_(path, TraceReadOptions{}), p_(src_, path), path_(path), keep_(keep) {
    c_.path = path;
  }

  TraceCensus read() {
    walk_trace(
        p_, path_, [&] { each_event(p_, [&] { event(); }); }, [&](const std::string& key) { member(key); });
    if (timed_ == 0) throw InputError(path_ + ": no timed events: not a PyTorch profiler trace");
    return std::move(c_);
  }

 private:
  Source src_;
  TraceParser p_;
  std::string path_, key_, cat_, name_;
  TraceCensus c_;
  std::unordered_map<std::string, uint32_t> names_, cats_;
  CensusKeep keep_;
  census::Args args_;  // of the event being read
  int64_t timed_ = 0;  // kept or not

  // The document's members besides traceEvents: distributedInfo's rank and world size, the first device's
  // name.
  void member(const std::string& key) {
    if (key == "distributedInfo"sv)
      census::read_distributed(p_, key_, &c_.rank, &c_.world_size);
    else if (key == "deviceProperties"sv)
      devices();
    else
      p_.skip();
  }
  void devices() {
    if (p_.ws() != '[') return p_.skip();
    if (!p_.open('[', ']')) return;
    do {
      if (p_.ws() != '{' || !c_.device.empty()) {
        p_.skip();
        continue;
      }
      if (!p_.open('{', '}')) continue;
      do {
        p_.string(key_);
        p_.expect(':');
        if (key_ == "name"sv)
          p_.text(c_.device);
        else
          p_.skip();
      } while (p_.more('}'));
    } while (p_.more(']'));
  }

  static uint32_t intern(std::unordered_map<std::string, uint32_t>& ix, std::vector<std::string>& table,
                         const std::string& s) {
    auto [it, fresh] = ix.try_emplace(s, static_cast<uint32_t>(table.size()));
    if (fresh) table.push_back(s);
    return it->second;
  }

  void event() {
    CensusEvent e;
    args_.clear();
    bool has_cat = false, has_dur = false, has_ts = false, dur_given = false;
    cat_.clear(), name_.clear();
    if (p_.open('{', '}')) {
      do {
        std::string_view k = p_.key();
        if (k == "cat"sv) {
          p_.expect(':');
          if (p_.ws() == '"') {
            p_.text(cat_);
            has_cat = true;
          } else {
            p_.skip();
          }
        } else if (k == "name"sv) {
          p_.expect(':');
          p_.text(name_);
        } else if (k == "ts"sv) {
          p_.expect(':');
          has_ts = p_.finite_number(&e.ts);
        } else if (k == "dur"sv) {
          p_.expect(':');
          dur_given = true;
          has_dur = p_.finite_number(&e.dur);
        } else if (k == "args"sv) {
          p_.expect(':');
          census::read_args(p_, &args_.corr, args_);
        } else {
          p_.expect(':');
          p_.skip();
        }
      } while (p_.more('}'));
    }
    if (!has_cat || !dur_given || cat_ == "Trace"sv) return;
    if (!has_dur || !has_ts || e.dur < 0) {
      ++c_.skipped;
      return;
    }
    ++timed_;
    e.corr = args_.corr, e.stream = args_.stream;
    if (keep_ == CensusKeep::GpuSide && e.stream == -1 && e.corr < 0 &&
        std::string_view(name_).substr(0, 12) != "ProfilerStep"sv)  // census_steps' names
      return;
    e.name = intern(names_, c_.names, name_);
    e.cat = static_cast<uint16_t>(intern(cats_, c_.cats, cat_));
    if (args_.is_coll) {
      e.coll = static_cast<int32_t>(c_.collectives.size());
      c_.collectives.push_back(args_.collective());
    }
    c_.events.push_back(e);
  }
};

}  // namespace

TraceCensus read_trace_census(const std::string& path, CensusKeep keep) {
  return CensusReader(path, keep).read();
}

}  // namespace flopwise
