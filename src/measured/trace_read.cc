// src/measured/trace_read.cc — the streaming reader of PyTorch profiler traces
// (flopwise/torch_trace.h). Owns: what the reader keeps of each event (each event is read into a small record
// and the rest of its text skipped) and the interning that keeps those records small; the byte source (a
// file, or a gzip stream inflated chunk by chunk through zlib, with the bomb guard) and the pull parser over
// it that keeps no document, and the walk to the event array, are trace_source.h's. Memory is the kept
// records, not the file: a trace of N events costs O(N) small records, and the JSON text is never held beyond
// one buffer.
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "flopwise/errors.h"
#include "flopwise/torch_trace.h"
#include "old_trace.h"
#include "trace_census_facts.h"
#include "trace_source.h"
#ifdef FLOPWISE_TRACE_SIMDJSON_BENCH
#include "trace_simdjson_event.h"
#endif

namespace flopwise {
namespace {

using namespace std::string_view_literals;
using namespace trace_read;

// What the reader keeps, and the interning tables that make each kept event a small record.
class Builder {
 public:
  explicit Builder(TorchTrace& t) : t_(t) {}

  uint32_t name(const std::string& s) {
    auto [it, fresh] = names_.try_emplace(s, static_cast<uint32_t>(t_.names.size()));
    if (fresh) t_.names.push_back(s);
    return it->second;
  }
  uint32_t thread(const std::string& pid, const std::string& tid) {
    if (last_thread_ >= 0 && pid == last_pid_ && tid == last_tid_) return static_cast<uint32_t>(last_thread_);
    last_pid_ = pid, last_tid_ = tid;
    last_thread_ = static_cast<int64_t>(thread_slow(pid, tid));
    return static_cast<uint32_t>(last_thread_);
  }
  uint32_t thread_slow(const std::string& pid, const std::string& tid) {
    return thread_key(key_.assign(pid).append("/").append(tid));
  }
  uint32_t thread_key(const std::string& key) {  // "pid/tid"
    auto [it, fresh] = threads_.try_emplace(key, static_cast<uint32_t>(t_.threads.size()));
    if (fresh) t_.threads.push_back(key);
    return it->second;
  }
  // Distinct calls by a hash of their fields; equal hashes are compared field by field.
  int32_t call(AtenCall& c) {
    uint64_t h = 1469598103934665603ull;
    auto mix = [&](uint64_t x) { h = (h ^ x) * 1099511628211ull; };
    auto mix_s = [&](const std::string& x) { mix(std::hash<std::string>()(x)); };
    mix_s(c.op);
    for (const auto& x : c.types) mix_s(x);
    for (const auto& arg : c.dims) {
      mix(0x9e3779b97f4a7c15ull);
      for (const auto& shape : arg) {
        mix(0x51ed270b1f3e7a5bull);
        for (int64_t d : shape) mix(static_cast<uint64_t>(d));
      }
    }
    for (const auto& x : c.concrete) mix_s(x);
    auto& bucket = calls_[h];
    for (int32_t i : bucket) {
      const AtenCall& o = t_.calls[static_cast<size_t>(i)];
      if (o.op == c.op && o.types == c.types && o.dims == c.dims && o.concrete == c.concrete) return i;
    }
    int32_t ix = static_cast<int32_t>(t_.calls.size());
    t_.calls.push_back(std::move(c));
    bucket.push_back(ix);
    return ix;
  }

 private:
  TorchTrace& t_;
  std::unordered_map<std::string, uint32_t> names_, threads_;
  std::unordered_map<uint64_t, std::vector<int32_t>> calls_;
  std::string key_, last_pid_, last_tid_;
  int64_t last_thread_ = -1;
};

// One event's fields, reused from event to event.
struct RawEvent {
  std::string ph, cat, name, pid, tid, id, hier, kernel;
  double ts = 0, dur = 0;
  bool has_ts = false, has_dur = false;
  int64_t ext = -1, device = -1, allocated = -1, corr = -1;
  bool has_dims = false;
  AtenCall call;
  // Read with TraceReadOptions::census: what the census reads besides.
  bool cat_string = false, dur_given = false, launch = false;  // launch: kept as a TraceLaunch
  uint32_t name_id = UINT32_MAX;                               // the name's index, once interned
  uint32_t gpu_index = UINT32_MAX;                             // kept in the GPU table: its index
  census::Args census;
  void clear() {
    ph.clear(), cat.clear(), name.clear(), pid.clear(), tid.clear(), id.clear(), hier.clear(), kernel.clear();
    has_ts = has_dur = has_dims = false;
    ext = device = allocated = corr = -1;
    call.types.clear(), call.dims.clear(), call.concrete.clear();
  }
  void clear_census() {
    cat_string = dur_given = launch = false;
    name_id = gpu_index = UINT32_MAX;
    census.clear();
  }
};

class TraceReader {
 public:
  TraceReader(const std::string& path, const TraceReadOptions& opts)
      : src_(path, opts), p_(src_, path), b_(t_), path_(path), census_(opts.census) {
    t_.path = path;
  }
  // A worker of the parallel reader: a batch "[event, event, ...]" of the trace at `path`, `base` its offset.
  TraceReader(std::string_view batch, const std::string& path, int64_t base, bool census)
      : src_(batch), p_(src_, path, base), b_(t_), path_(path), census_(census) {}

  // A worker of the range reader: the events of the plain file at `path` from the element at byte `from`.
  TraceReader(const std::string& path, int64_t from, bool census)
      : src_(path, from), p_(src_, path, from), b_(t_), path_(path), census_(census) {}

  // What a worker read, for merge().
  struct Part {
    TorchTrace t;
    int64_t skipped_no_time = 0, negative = 0;
    bool saw_ort = false;
    census::CensusFacts census;
  };
  // What a range worker read, and where it stopped.
  struct Range {
    Part part;
    bool ended = false;  // at the array's ']': `at` is the byte after it
    int64_t at = -1;     // else the first element at or after its end (where the next range starts, if real)
    std::exception_ptr error;
  };
  Range read_range(int64_t to, const std::atomic<bool>& cancel) {
    Range r;
    try {
      r.ended = events_until(to, &cancel);
      r.at = p_.offset();
    } catch (...) {
      r.error = std::current_exception();
    }
    r.part = Part{records(), skipped_no_time_, negative_, saw_ort_, std::move(census_facts_)};
    return r;
  }
  Part read_batch() {
    each_event(p_, [&] { event(); });
    return Part{records(), skipped_no_time_, negative_, saw_ort_, std::move(census_facts_)};
  }

  TorchTrace read() {
    if (p_.ws() == -1) throw InputError(path_ + ": empty file: not a PyTorch profiler trace");
    walk_trace(
        p_, path_, [&] { events(); }, [&](const std::string& key) { member(key); });
    TorchTrace t = records();
    if (t.cpu.empty() && t.gpu.empty()) {
      if (saw_ort_)
        throw InputError(path_ +
                         ": an ONNX Runtime profile, not a PyTorch trace (flopwise run MODEL.onnx --profile "
                         "reads it)");
      throw InputError(path_ + ": no cpu_op or kernel events: not a PyTorch profiler trace (" +
                       std::to_string(t.events) + " events read)");
    }
    if (skipped_no_time_ > 0)
      t.warnings.push_back(std::to_string(skipped_no_time_) +
                           " event(s) without a numeric ts or dur skipped");
    if (negative_ > 0)
      t.warnings.push_back(std::to_string(negative_) + " event(s) with a negative duration skipped");
    if (census_) t.census = std::make_shared<const census::CensusFacts>(std::move(census_facts_));
    return t;
  }

  // The categories read, the event keys read and the args keys; the rest is skipped.
  static bool relevant(const std::string& cat) {
    switch (cat.empty() ? 0 : cat[0]) {
      case 'c':
        return cat == "cpu_op"sv || cat == "cuda_runtime"sv || cat == "cuda_driver"sv ||
               cat == "cpu_instant_event"sv;
      case 'u':
        return cat == "user_annotation"sv;
      case 'p':
        return cat == "python_function"sv;
      case 'k':
      case 'K':
        return cat == "kernel"sv || cat == "Kernel"sv;
      case 'g':
        return cat == "gpu_memcpy"sv || cat == "gpu_memset"sv;
      case 'f':
        return cat == "fwdbwd"sv;
      case 'o':
      case 'O':
        return cat == "operator"sv || cat == "Operator"sv;  // Operator: torch 1.8-1.10's Kineto
      case 'M':
        return cat == "Memcpy"sv || cat == "Memset"sv;
      case 'R':
        return cat == "Runtime"sv;
      case 'N':
      case 'S':
        return cat == "Node"sv || cat == "Session"sv;  // an ONNX Runtime profile: named in the error
      default:
        return false;
    }
  }

  enum class Key { Other, Ph, Cat, Name, Pid, Tid, Ts, Dur, Id, Args };
  static Key event_key(std::string_view k) {
    switch (k.size()) {
      case 2:
        return k == "ph"sv ? Key::Ph : k == "ts"sv ? Key::Ts : k == "id"sv ? Key::Id : Key::Other;
      case 3:
        return k == "cat"sv   ? Key::Cat
               : k == "pid"sv ? Key::Pid
               : k == "tid"sv ? Key::Tid
               : k == "dur"sv ? Key::Dur
                              : Key::Other;
      case 4:
        return k == "name"sv ? Key::Name : k == "args"sv ? Key::Args : Key::Other;
      default:
        return Key::Other;
    }
  }
  enum class Arg { Other, Ext, Hier, Corr, Dims, Types, Concrete, Allocated, Device, Kernel, Census };
  static Arg arg_key(std::string_view k) {
    switch (k.size()) {
      case 6:
        return k == "device"sv ? Arg::Device : k == "kernel"sv ? Arg::Kernel : Arg::Other;
      case 9:
        return k == "Device Id"sv ? Arg::Device : Arg::Other;
      case 10:
        return k == "Input Dims"sv ? Arg::Dims : k == "Input type"sv ? Arg::Types : Arg::Other;
      case 11:
        return k == "External id"sv || k == "external id"sv ? Arg::Ext
               : k == "correlation"sv                       ? Arg::Corr
                                                            : Arg::Other;
      case 15:
        return k == "Concrete Inputs"sv   ? Arg::Concrete
               : k == "Total Allocated"sv ? Arg::Allocated
                                          : Arg::Other;
      case 16:
        return k == "Module Hierarchy"sv ? Arg::Hier : Arg::Other;
      default:
        return Arg::Other;
    }
  }

 private:
  Source src_;
  TraceParser p_;
  TorchTrace t_;  // all but the event tables, kept in blocks while read
  Blocks<TraceEvent> cpu_, gpu_;
  Blocks<TraceLaunch> launches_;
  Builder b_;

  TorchTrace records() {
    t_.cpu = cpu_.take(), t_.gpu = gpu_.take(), t_.launches = launches_.take();
    return std::move(t_);
  }
  // For benchmarks and checks: FLOPWISE_TRACE_THREADS=0 reads a large trace on one thread too, =N reads any
  // trace with N workers; FLOPWISE_TRACE_BATCH_KB sets the batch size (default 8 MiB).
  static int env_int(const char* name, int otherwise) {
    const char* v = std::getenv(name);
    return v && *v ? std::atoi(v) : otherwise;
  }
  int threads_ = env_int("FLOPWISE_TRACE_THREADS", -1);
  size_t batch_bytes_ = static_cast<size_t>(std::max(1, env_int("FLOPWISE_TRACE_BATCH_KB", 8192))) << 10;
  std::string path_, key_;
  RawEvent e_;
  int64_t skipped_no_time_ = 0, negative_ = 0;
  bool saw_ort_ = false;
  bool census_ = false;  // TraceReadOptions::census
  census::CensusFacts census_facts_;
  census::Arg census_arg_ = census::Arg::Other;  // of the args key census_key() last read

  void member(const std::string& key) {
    if (key == "deviceProperties"sv)
      devices();
    else if (census_ && key == "distributedInfo"sv)
      census::read_distributed(p_, key_, &census_facts_.rank, &census_facts_.world_size);
    else
      p_.skip();
  }
  void devices() {
    if (p_.ws() != '[') return p_.skip();
    if (!p_.open('[', ']')) return;
    int devices = 0;  // the first one's name and memory are kept
    do {
      if (p_.ws() != '{') {
        p_.skip();
        continue;
      }
      ++devices;
      std::string name;
      int64_t mem = 0;
      if (p_.open('{', '}')) {
        do {
          p_.string(key_);
          p_.expect(':');
          if (key_ == "name"sv)
            p_.text(name);
          else if (key_ == "totalGlobalMem"sv)
            mem = p_.integer().value_or(0);
          else
            p_.skip();
        } while (p_.more('}'));
      }
      if (devices == 1) t_.device = name, t_.device_memory = mem;
    } while (p_.more(']'));
  }

  void events() {
#ifdef FLOPWISE_TRACE_SIMDJSON_BENCH  // bench/trace_read_bench only: batches parsed by simdjson
    if (bench_trace::in_batches<TraceReader>(p_, path_, e_, t_.events, [&] { keep(); })) return;
#endif
    // A large plain file is read in ranges on all cores; a large gzip one is inflated here and parsed by
    // workers from four cores on (on two, the inflating thread and one worker share them: no faster).
    const unsigned cores = std::thread::hardware_concurrency();
    const bool large = threads_ > 0 || (threads_ != 0 && src_.large());
    if (large && !src_.gzip() && (cores >= 2 || threads_ > 0)) return events_ranges();
    if (large && (cores >= 4 || threads_ > 0)) return events_parallel();
    events_sequential();
  }
  void events_sequential() {
    if (!p_.open('[', ']')) return;
    events_until(INT64_MAX, nullptr);
  }
  // From an element of the event array to the first element at or after byte `to` (false), or to the end of
  // the array (true, its ']' read).
  bool events_until(int64_t to, const std::atomic<bool>* cancel) {
    for (;;) {
      int c = p_.ws();
      if (p_.offset() >= to || (cancel && *cancel)) return false;
      ++t_.events;
      if (c == '{')
        event();
      else
        p_.skip();
      if (!p_.more(']')) return true;
    }
  }

  // A large plain file, on all cores: the rest of the file is cut into ranges, each starting at a line that
  // opens an object (profilers write an event per line, or several lines each); this thread reads the first
  // range, a worker each other one, each to the first element at or past its range's end. A range whose
  // start the range before it lands on exactly starts at an element of the array, so its records are
  // those one thread reads there; a start not landed on (an object inside an event, a one-line file) is read
  // again here from where the range before it stopped. Parts are merged in order: the records, and any
  // error, are one thread's.
  void events_ranges() {
    if (!p_.open('[', ']')) return;
    const int64_t size = src_.size();
    const size_t parts = threads_ > 0 ? static_cast<size_t>(std::min(threads_, 63)) + 1
                                      : std::max(2u, std::min(8u, std::thread::hardware_concurrency()));
    std::vector<int64_t> starts;  // starts[k]: where range k starts; starts[0] is this thread's
    starts.push_back(p_.offset());
    for (size_t k = 1; k < parts; ++k) {
      int64_t guess = starts[0] + static_cast<int64_t>((static_cast<double>(size - starts[0]) * k) / parts);
      int64_t at = object_line_after(std::max(guess, starts.back() + 1));
      if (at < 0) break;
      starts.push_back(at);
    }
    starts.push_back(INT64_MAX);
    const size_t ranges = starts.size() - 1;
    std::atomic<bool> cancel{false};
    std::vector<std::future<Range>> work;
    for (size_t k = 1; k < ranges; ++k)
      work.push_back(std::async(std::launch::async, [&, k] {
        return TraceReader(path_, starts[k], census_).read_range(starts[k + 1], cancel);
      }));
    struct Cancel {  // on an error here, the workers stop at their next event
      std::atomic<bool>& c;
      ~Cancel() { c = true; }
    } stop_workers{cancel};
    size_t k = 1;  // the next range
    for (;;) {
      if (events_until(starts[k], nullptr)) return;
      int64_t at = p_.offset();
      while (k < ranges && starts[k] < at) ++k;  // ranges stepped over: not starts of elements
      if (k == ranges) continue;                 // none left: on to the end of the array
      if (starts[k] > at) continue;              // the next start not reached yet
      // Landed on range k's start: its part, and the parts after it that it lands on in turn.
      for (;;) {
        Range r = work[k - 1].get();
        if (r.error) std::rethrow_exception(r.error);
        t_.events += r.part.t.events;
        ++t_.read_parts;
        merge(std::move(r.part));
        if (r.ended) {
          p_.seek(r.at);
          return;
        }
        ++k;
        if (k < ranges && r.at == starts[k]) continue;
        p_.seek(r.at);
        while (k < ranges && starts[k] < r.at) ++k;
        break;
      }
    }
  }
  // The first byte at or after `from` that opens an object as the first non-blank of a line (a raw newline
  // is never inside a JSON string), or -1 within 16 MiB.
  int64_t object_line_after(int64_t from) const {
    std::FILE* f = std::fopen(path_.c_str(), "rb");
    if (!f) return -1;
    int64_t found = -1;
    if (fseeko(f, static_cast<off_t>(from), SEEK_SET) == 0) {
      std::vector<char> buf(64 << 10);
      int64_t off = from;
      bool line_start = false;
      while (found < 0 && off < from + (int64_t{16} << 20)) {
        size_t n = std::fread(buf.data(), 1, buf.size(), f);
        if (n == 0) break;
        for (size_t i = 0; i < n; ++i) {
          char c = buf[i];
          if (c == '\n') {
            line_start = true;
          } else if (line_start && c == '{') {
            found = off + static_cast<int64_t>(i);
            break;
          } else if (c != ' ' && c != '\t' && c != '\r') {
            line_start = false;
          }
        }
        off += static_cast<int64_t>(n);
      }
    }
    std::fclose(f);
    return found;
  }

  // A large trace: this thread cuts the event array into batches of about 8 MiB of event text (following
  // strings and nesting, parsing nothing), workers parse the batches, and the parts are merged in batch
  // order: the same records, in the same order, as one thread reads. The queue holds at most two batches per
  // worker.
  void events_parallel() {
    if (!p_.open('[', ']')) return;
    const size_t workers = threads_ > 0 ? static_cast<size_t>(std::min(threads_, 64))
                                        : std::max(1u, std::min(8u, std::thread::hardware_concurrency() - 1));
    struct Batch {
      size_t index;
      std::string text;
      int64_t base;
    };
    std::mutex mu;
    std::condition_variable cv;
    std::deque<Batch> queue;
    std::vector<std::optional<Part>> parts;
    std::exception_ptr error;
    std::atomic<bool> failed{false};
    bool done = false;
    auto work = [&] {
      for (;;) {
        Batch b;
        {
          std::unique_lock<std::mutex> lock(mu);
          cv.wait(lock, [&] { return !queue.empty() || done; });
          if (queue.empty()) return;
          b = std::move(queue.front());
          queue.pop_front();
        }
        cv.notify_all();
        try {
          Part part = TraceReader(b.text, path_, b.base, census_).read_batch();
          std::lock_guard<std::mutex> lock(mu);
          if (parts.size() <= b.index) parts.resize(b.index + 1);
          parts[b.index] = std::move(part);
        } catch (...) {
          {
            std::lock_guard<std::mutex> lock(mu);
            if (!error) error = std::current_exception();
          }
          failed = true;
          cv.notify_all();
        }
      }
    };
    std::vector<std::thread> pool;
    for (size_t i = 0; i < workers; ++i) pool.emplace_back(work);
    size_t next = 0;
    Batch cur{0, "[", p_.offset()};
    auto dispatch = [&] {
      cur.text += ']';
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return queue.size() < 2 * workers || failed; });
      queue.push_back(std::move(cur));
      lock.unlock();
      cv.notify_all();
      cur = Batch{++next, "[", p_.offset()};
    };
    try {
      do {
        ++t_.events;
        if (p_.ws() != '{') {
          p_.skip();
          continue;
        }
        if (cur.text.size() > 1) cur.text += ',';
        p_.capture_object(cur.text);
        if (cur.text.size() >= batch_bytes_) dispatch();
        if (failed) break;
      } while (p_.more(']'));
      if (cur.text.size() > 1) dispatch();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu);
      if (!error) error = std::current_exception();  // the scan's error comes first: it is the earlier byte
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      done = true;
    }
    cv.notify_all();
    for (auto& th : pool) th.join();
    if (error) std::rethrow_exception(error);
    for (auto& part : parts)
      if (part) merge(std::move(*part));
  }

  // A worker's records into this trace: names, threads and calls interned again, events appended.
  void merge(Part&& part) {
    TorchTrace& o = part.t;
    std::vector<uint32_t> names(o.names.size()), threads(o.threads.size());
    std::vector<int32_t> calls(o.calls.size());
    for (size_t i = 0; i < o.names.size(); ++i) names[i] = b_.name(o.names[i]);
    for (size_t i = 0; i < o.threads.size(); ++i) threads[i] = b_.thread_key(o.threads[i]);
    for (size_t i = 0; i < o.calls.size(); ++i) calls[i] = b_.call(o.calls[i]);
    const uint32_t gpu_base = static_cast<uint32_t>(gpu_.size());
    for (TraceEvent e : o.cpu) {
      e.name = names[e.name], e.thread = threads[e.thread];
      if (e.call >= 0) e.call = calls[static_cast<size_t>(e.call)];
      if (e.hier >= 0) e.hier = static_cast<int32_t>(names[static_cast<size_t>(e.hier)]);
      cpu_.push_back(e);
    }
    for (TraceEvent e : o.gpu) {
      e.name = names[e.name], e.thread = threads[e.thread];
      gpu_.push_back(e);
    }
    for (TraceLaunch l : o.launches) {
      l.thread = threads[l.thread];
      if (l.kernel != UINT32_MAX) l.kernel = names[l.kernel];
      launches_.push_back(l);
    }
    t_.flow_starts.insert(t_.flow_starts.end(), o.flow_starts.begin(), o.flow_starts.end());
    t_.flow_ends.insert(t_.flow_ends.end(), o.flow_ends.begin(), o.flow_ends.end());
    for (uint32_t th : o.flow_start_thread) t_.flow_start_thread.push_back(threads[th]);
    for (uint32_t th : o.flow_end_thread) t_.flow_end_thread.push_back(threads[th]);
    for (const auto& [dev, peak] : o.memory_peak) t_.memory_peak[dev] = std::max(t_.memory_peak[dev], peak);
    if (census_) census_facts_.merge(std::move(part.census), names, gpu_base);
    skipped_no_time_ += part.skipped_no_time;
    negative_ += part.negative;
    saw_ort_ = saw_ort_ || part.saw_ort;
  }

  void event() {
    e_.clear();
#ifdef FLOPWISE_TRACE_SIMDJSON_BENCH  // bench/trace_read_bench only: the event parsed by simdjson instead
    if (bench_trace::mode != bench_trace::Mode::Hand) {
      if (bench_trace::parse_event<TraceReader>(p_, e_)) keep();
      return;
    }
#endif
    if (p_.open('{', '}')) {
      do {
        Key k = event_key(p_.key());
        p_.expect(':');
        switch (k) {
          case Key::Ph:
            p_.text(e_.ph);
            break;
          case Key::Cat:
            if (census_) census_cat();
            p_.text(e_.cat);
            if (!relevant(e_.cat)) {  // ac2g and other flows, python frames, traces' own spans: not read
              if (census_) return census_rest();
              return p_.skip_rest_of_object();
            }
            break;
          case Key::Name:
            p_.text(e_.name);
            break;
          case Key::Pid:
            p_.text(e_.pid);
            break;
          case Key::Tid:
            p_.text(e_.tid);
            break;
          case Key::Ts:
            e_.has_ts = p_.finite_number(&e_.ts);
            break;
          case Key::Dur:
            e_.dur_given = true;
            e_.has_dur = p_.finite_number(&e_.dur);
            break;
          case Key::Id:
            p_.text(e_.id);
            break;
          case Key::Args:
            args();
            break;
          case Key::Other:
            p_.skip();
        }
      } while (p_.more('}'));
    }
    keep();
    if (census_) census_event();
  }

  void args() {
    if (p_.ws() != '{') return p_.skip();
    if (!p_.open('{', '}')) return;
    do {
      std::string_view key = p_.key();
      Arg k = arg_key(key);
      if (k == Arg::Other && census_) k = census_key(key);
      p_.expect(':');
      switch (k) {
        case Arg::Ext:
          e_.ext = p_.integer().value_or(-1);
          break;
        case Arg::Hier:
          p_.text(e_.hier);
          break;
        case Arg::Corr:
          e_.corr = p_.integer().value_or(-1);
          break;
        case Arg::Dims:
          dims();
          break;
        case Arg::Types:
          strings(e_.call.types);
          break;
        case Arg::Concrete:
          strings(e_.call.concrete);
          break;
        case Arg::Allocated:
          e_.allocated = p_.integer().value_or(-1);
          break;
        case Arg::Device:
          e_.device = p_.integer().value_or(-1);
          break;
        case Arg::Kernel:
          p_.text(e_.kernel);
          break;
        case Arg::Census:
          census_value();
          break;
        case Arg::Other:
          p_.skip();
      }
    } while (p_.more('}'));
  }

  // ---- the census's facts (TraceReadOptions::census), off the path of a read without them ----

  // An args key the census reads, and not this reader: Arg::Census (census_arg_ says which), else Other.
  [[gnu::noinline]] Arg census_key(std::string_view key) {
    census_arg_ = census::arg_of(key);
    return census_arg_ == census::Arg::Other ? Arg::Other : Arg::Census;
  }
  [[gnu::noinline]] void census_value() { census::read_arg(p_, census_arg_, e_.census); }
  [[gnu::noinline]] void census_cat() { e_.cat_string = p_.ws() == '"'; }
  // The rest of an event this reader does not keep (after its "cat"): what the census reads of it.
  [[gnu::noinline]] void census_rest() {
    while (p_.more('}')) {
      Key k = event_key(p_.key());
      p_.expect(':');
      if (k == Key::Cat) {
        census_cat();
        p_.text(e_.cat);
      } else if (k == Key::Name) {
        p_.text(e_.name);
      } else if (k == Key::Ts) {
        e_.has_ts = p_.finite_number(&e_.ts);
      } else if (k == Key::Dur) {
        e_.dur_given = true;
        e_.has_dur = p_.finite_number(&e_.dur);
      } else if (k == Key::Args) {
        census::read_args(p_, &e_.corr, e_.census);
      } else {
        p_.skip();
      }
    }
    census_event();
  }

  // What the census reader keeps of the event just read (trace_census_read.cc): a timed event, a string cat
  // other than "Trace", numeric ts and dur >= 0.
  bool census_timed() const {
    return e_.cat_string && e_.dur_given && e_.cat != "Trace"sv && e_.has_ts && e_.has_dur && e_.dur >= 0;
  }
  // Ends every event read with the census: its facts kept, e_'s census fields cleared for the next.
  [[gnu::noinline]] void census_event() {
    if (!census_timed()) {
      if (e_.gpu_index != UINT32_MAX) census_facts_.untimed(e_.gpu_index);
    } else {
      e_.census.corr = e_.corr;
      census_facts_.event(e_.name, e_.ts, e_.dur, e_.census, e_.launch, e_.gpu_index,
                          static_cast<uint32_t>(gpu_.size()),
                          [&] { return e_.name_id != UINT32_MAX ? e_.name_id : b_.name(e_.name); });
    }
    e_.clear_census();
  }

  void strings(std::vector<std::string>& out) {
    out.clear();
    if (p_.ws() != '[') return p_.skip();
    if (!p_.open('[', ']')) return;
    do {
      out.emplace_back();
      p_.text(out.back());
      if (out.size() > 100000) p_.fail("an argument list of over 100000 entries");
    } while (p_.more(']'));
  }

  // [[8, 3, 64, 64], [], [[1, 16], [16]]]: per argument a shape, nothing, or a list of shapes.
  void dims() {
    auto& out = e_.call.dims;
    out.clear();
    e_.has_dims = true;
    if (p_.ws() != '[') return p_.skip();
    if (!p_.open('[', ']')) return;
    do {
      out.emplace_back();
      auto& arg = out.back();
      if (p_.ws() != '[') {
        p_.skip();
        continue;
      }
      if (!p_.open('[', ']')) continue;  // [] : no tensor (or a 0-d one: the type says)
      if (p_.ws() == '[') {              // a TensorList
        do {
          arg.emplace_back();
          shape(arg.back());
        } while (p_.more(']'));
      } else {
        arg.emplace_back();
        do {
          arg.back().push_back(p_.integer().value_or(-1));
          if (arg.back().size() > 64) p_.fail("a shape of over 64 dims");
        } while (p_.more(']'));
      }
      if (out.size() > 100000) p_.fail("an argument list of over 100000 entries");
    } while (p_.more(']'));
  }
  void shape(std::vector<int64_t>& s) {
    if (p_.ws() != '[') return p_.skip();
    if (!p_.open('[', ']')) return;
    do {
      s.push_back(p_.integer().value_or(-1));
      if (s.size() > 64) p_.fail("a shape of over 64 dims");
    } while (p_.more(']'));
  }

  // A runtime call: graph launches and capture bounds by name, a launch's kernel where it is recorded.
  TraceLaunch launch() {
    TraceLaunch l{e_.corr, b_.thread(e_.pid, e_.tid), e_.ts};
    l.census = census_ && census_timed() && e_.census.stream < 0;
    e_.launch = true;
    if (!e_.kernel.empty()) l.kernel = b_.name(e_.kernel);
    static constexpr std::pair<std::string_view, LaunchKind> kKinds[] = {
        {"GraphLaunch", LaunchKind::GraphLaunch},  // cudaGraphLaunch, hipGraphLaunch
        {"StreamBeginCapture", LaunchKind::BeginCapture},
        {"StreamEndCapture", LaunchKind::EndCapture}};
    for (const auto& [fragment, kind] : kKinds)
      if (e_.name.find(fragment) != std::string::npos) {
        l.kind = kind;
        break;
      }
    return l;
  }

  void keep() {
    const std::string& cat = e_.cat;
    if (cat == "Node"sv || cat == "Session"sv) saw_ort_ = true;
    if (e_.ph == "i"sv || e_.ph == "I"sv) {
      if (e_.name == "[memory]"sv && e_.allocated >= 0) {
        int64_t dev = e_.device;
        auto& peak = t_.memory_peak[dev];
        peak = std::max(peak, e_.allocated);
      }
      return;
    }
    if (cat == "fwdbwd"sv && (e_.ph == "s"sv || e_.ph == "f"sv)) {
      char* end = nullptr;
      long long id = std::strtoll(e_.id.c_str(), &end, 10);
      if (end == e_.id.c_str() || !e_.has_ts) return;
      uint32_t th = b_.thread(e_.pid, e_.tid);
      if (e_.ph == "s"sv) {
        t_.flow_starts.emplace_back(id, e_.ts);
        t_.flow_start_thread.push_back(th);
      } else {
        t_.flow_ends.emplace_back(id, e_.ts);
        t_.flow_end_thread.push_back(th);
      }
      return;
    }
    if (e_.ph != "X") return;
    if (cat == "cuda_runtime"sv || cat == "cuda_driver"sv || cat == "Runtime"sv) {
      if (e_.corr >= 0 && e_.has_ts) launches_.push_back(launch());
      return;
    }
    TraceKind kind;
    if (cat == "cpu_op"sv || cat == "operator"sv || cat == "Operator"sv)
      kind = TraceKind::CpuOp;
    else if (cat == "user_annotation"sv)
      kind = TraceKind::Annotation;
    else if (cat == "python_function"sv && e_.name.rfind("nn.Module: ", 0) == 0)
      kind = TraceKind::Module;
    else if (cat == "kernel"sv || cat == "Kernel"sv)
      kind = TraceKind::Kernel;
    else if (cat == "gpu_memcpy"sv || cat == "Memcpy"sv)
      kind = TraceKind::Memcpy;
    else if (cat == "gpu_memset"sv || cat == "Memset"sv)
      kind = TraceKind::Memset;
    else
      return;
    if (!e_.has_ts || !e_.has_dur) {
      ++skipped_no_time_;
      return;
    }
    if (e_.dur < 0) {
      ++negative_;
      return;
    }
    TraceEvent ev;
    ev.kind = kind;
    ev.ts = e_.ts;
    ev.dur = e_.dur;
    ev.ext = e_.ext;
    ev.corr = e_.corr;
    if (kind == TraceKind::CpuOp && !e_.hier.empty()) ev.hier = static_cast<int32_t>(b_.name(e_.hier));
    ev.name = b_.name(kind == TraceKind::Module ? e_.name.substr(11) : e_.name);
    if (kind != TraceKind::Module) e_.name_id = ev.name;
    ev.thread = b_.thread(e_.pid, e_.tid);
    if (kind == TraceKind::CpuOp && e_.has_dims && !e_.call.types.empty() &&
        e_.call.types.size() == e_.call.dims.size()) {
      e_.call.op = e_.name;
      old_trace::rename_record_types(e_.call.types);
      ev.call = b_.call(e_.call);
    }
    if (kind == TraceKind::Kernel || kind == TraceKind::Memcpy || kind == TraceKind::Memset) {
      e_.gpu_index = static_cast<uint32_t>(gpu_.size());
      gpu_.push_back(ev);
    } else {
      cpu_.push_back(ev);
    }
  }
};

}  // namespace

TorchTrace read_torch_trace(const std::string& path, const TraceReadOptions& opts) {
  return TraceReader(path, opts).read();
}

}  // namespace flopwise

namespace flopwise {

bool looks_like_torch_trace(const std::string& path) {
  try {
    Source s(path, TraceReadOptions{});
    std::string head(64 << 10, '\0');
    size_t got = 0;
    while (got < head.size()) {
      size_t n = s.read(&head[got], head.size() - got);
      if (n == 0) break;
      got += n;
    }
    head.resize(got);
    size_t i = head.find_first_not_of(" \t\r\n");
    if (i == std::string::npos || (head[i] != '{' && head[i] != '[')) return false;
    return head.find("\"traceEvents\"") != std::string::npos &&
           (head.find("\"cpu_op\"") != std::string::npos || head.find("\"kernel\"") != std::string::npos ||
            head.find("\"deviceProperties\"") != std::string::npos ||
            head.find("\"schemaVersion\"") != std::string::npos);
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace flopwise
