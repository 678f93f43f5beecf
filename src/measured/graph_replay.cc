// src/measured/graph_replay.cc — kernels replayed from CUDA/HIP graphs joined to the ops of their capture
// (flopwise/graph_replay.h): the capture traces read through execution_details.json, the captured graphs
// found, each graph launch's kernels matched by name and order, and the capture's ops copied beside them.
#include "flopwise/graph_replay.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "flopwise/errors.h"

namespace flopwise {

namespace {

namespace fs = std::filesystem;

// One captured graph: the launches (indices in its capture's launches, in time order) that no GPU event ran.
struct CapturedGraph {
  size_t capture = 0;
  std::vector<uint32_t> launches;
};

// One graph launch of the execution trace: the GPU events its correlation names, in time order.
struct Replay {
  int64_t corr = -1;
  double ts = 0;
  std::vector<uint32_t> gpu;
};

std::vector<CapturedGraph> captured_graphs(const std::vector<CaptureTrace>& caps) {
  std::vector<CapturedGraph> out;
  for (size_t ci = 0; ci < caps.size(); ++ci) {
    const TorchTrace& c = caps[ci].trace;
    std::unordered_set<int64_t> ran;
    for (const TraceEvent& g : c.gpu)
      if (g.corr >= 0) ran.insert(g.corr);
    std::vector<uint32_t> ix(c.launches.size());
    std::iota(ix.begin(), ix.end(), 0u);
    std::stable_sort(ix.begin(), ix.end(),
                     [&](uint32_t a, uint32_t b) { return c.launches[a].ts < c.launches[b].ts; });
    bool bounded = std::any_of(c.launches.begin(), c.launches.end(),
                               [](const TraceLaunch& l) { return l.kind == LaunchKind::BeginCapture; });
    bool open = !bounded;
    CapturedGraph cur{ci, {}};
    for (uint32_t i : ix) {
      const TraceLaunch& l = c.launches[i];
      if (l.kind == LaunchKind::BeginCapture || l.kind == LaunchKind::EndCapture) {
        if (open && !cur.launches.empty()) out.push_back(cur);
        cur.launches.clear();
        open = l.kind == LaunchKind::BeginCapture;
      } else if (open && l.kernel != UINT32_MAX && !ran.count(l.corr)) {
        cur.launches.push_back(i);
      }
    }
    if (open && !cur.launches.empty()) out.push_back(cur);
  }
  return out;
}

std::vector<Replay> replays_of(const TorchTrace& ex) {
  std::vector<Replay> out;
  std::unordered_map<int64_t, size_t> at;
  for (const TraceLaunch& l : ex.launches)
    if (l.kind == LaunchKind::GraphLaunch && at.try_emplace(l.corr, out.size()).second)
      out.push_back({l.corr, l.ts, {}});
  if (out.empty()) return out;
  for (uint32_t i = 0; i < ex.gpu.size(); ++i)
    if (auto it = at.find(ex.gpu[i].corr); it != at.end()) out[it->second].gpu.push_back(i);
  for (Replay& r : out)
    std::stable_sort(r.gpu.begin(), r.gpu.end(),
                     [&](uint32_t a, uint32_t b) { return ex.gpu[a].ts < ex.gpu[b].ts; });
  out.erase(std::remove_if(out.begin(), out.end(), [](const Replay& r) { return r.gpu.empty(); }), out.end());
  std::stable_sort(out.begin(), out.end(), [](const Replay& a, const Replay& b) { return a.ts < b.ts; });
  return out;
}

// Pairs (GPU event, captured launch) of a replay and a graph, in order: a kernel pairs with the next launch
// of its name within a few positions (a kernel the capture lacks, or one more in it, does not derail the
// rest).
std::vector<std::pair<uint32_t, uint32_t>> align_replay(const TorchTrace& ex, const Replay& r,
                                                        const TorchTrace& c, const CapturedGraph& g) {
  constexpr size_t kLookahead = 8;
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  size_t p = 0;
  for (uint32_t gi : r.gpu) {
    const TraceEvent& k = ex.gpu[gi];
    if (k.kind != TraceKind::Kernel) continue;
    const std::string& name = ex.names[k.name];
    for (size_t q = p; q < g.launches.size() && q < p + kLookahead; ++q)
      if (c.names[c.launches[g.launches[q]].kernel] == name) {
        pairs.emplace_back(gi, g.launches[q]);
        p = q + 1;
        break;
      }
  }
  return pairs;
}

// A capture's names and calls interned into the execution trace's tables, once each.
class Remap {
 public:
  Remap(TorchTrace& ex, const TorchTrace& c)
      : ex_(ex), c_(c), names_(c.names.size(), UINT32_MAX), calls_(c.calls.size(), -2) {
    for (uint32_t i = 0; i < ex.names.size(); ++i) index_.emplace(ex.names[i], i);
  }
  uint32_t name(uint32_t i) {
    if (names_[i] == UINT32_MAX) {
      auto [it, fresh] = index_.try_emplace(c_.names[i], static_cast<uint32_t>(ex_.names.size()));
      if (fresh) ex_.names.push_back(c_.names[i]);
      names_[i] = it->second;
    }
    return names_[i];
  }
  int32_t call(int32_t i) {
    if (i < 0) return i;
    int32_t& at = calls_[static_cast<size_t>(i)];
    if (at == -2) {
      at = static_cast<int32_t>(ex_.calls.size());
      ex_.calls.push_back(c_.calls[static_cast<size_t>(i)]);
    }
    return at;
  }

 private:
  TorchTrace& ex_;
  const TorchTrace& c_;
  std::unordered_map<std::string, uint32_t> index_;
  std::vector<uint32_t> names_;
  std::vector<int32_t> calls_;
};

bool step_label(const std::string& s) { return s.rfind("ProfilerStep#", 0) == 0; }

// The capture's CPU events that enclose a paired launch, copied at the replay's time onto threads of their
// own (one per capture thread), and each paired GPU event pointed at a new launch among them.
void place(TorchTrace& ex, const CaptureTrace& cap, Remap& rm, const Replay& r,
           const std::vector<std::pair<uint32_t, uint32_t>>& pairs, int64_t& next_corr, size_t copy_no) {
  const TorchTrace& c = cap.trace;
  const double shift = r.ts - c.launches[pairs.front().second].ts;
  std::map<uint32_t, std::vector<double>> launch_ts;  // capture thread -> paired launches' times
  for (const auto& pr : pairs) launch_ts[c.launches[pr.second].thread].push_back(c.launches[pr.second].ts);
  std::map<uint32_t, uint32_t> thread_of;
  for (auto& [th, v] : launch_ts) {
    std::sort(v.begin(), v.end());
    thread_of[th] = static_cast<uint32_t>(ex.threads.size());
    ex.replay_thread_ts[thread_of[th]] = r.ts;
    ex.threads.push_back("graph replay " + std::to_string(copy_no) + " of " + cap.file + " " + c.threads[th]);
  }
  for (const TraceEvent& e : c.cpu) {
    auto it = launch_ts.find(e.thread);
    if (it == launch_ts.end() || (e.kind == TraceKind::Annotation && step_label(c.names[e.name]))) continue;
    auto l = std::lower_bound(it->second.begin(), it->second.end(), e.ts);
    if (l == it->second.end() || *l > e.ts + e.dur) continue;
    TraceEvent x = e;
    x.ts += shift;
    x.name = rm.name(e.name);
    x.hier = e.hier >= 0 ? static_cast<int32_t>(rm.name(static_cast<uint32_t>(e.hier))) : -1;
    x.call = rm.call(e.call);
    x.thread = thread_of[e.thread];
    x.ext = -1;
    x.replayed = true;
    ex.cpu.push_back(x);
  }
  for (const auto& [gi, li] : pairs) {
    const TraceLaunch& l = c.launches[li];
    ex.launches.push_back({next_corr, thread_of[l.thread], l.ts + shift, rm.name(l.kernel)});
    ex.gpu[gi].corr = next_corr++;
  }
}

std::string capture_line(const CaptureTrace& c, int64_t graphs) {
  std::string s = c.file + " (";
  s += c.batch_size >= 0 ? "batch size " + std::to_string(c.batch_size) : "batch size not given";
  if (!c.mode.empty()) s += ", " + c.mode;
  return s + "): " + std::to_string(graphs) + " graph(s) captured";
}

// The captured graph whose launches pair with most of a replay's kernels, from `cursor` on (the first of
// equals); stops at one that pairs them all.
std::vector<std::pair<uint32_t, uint32_t>> best_graph(const TorchTrace& ex, const Replay& r,
                                                      const std::vector<CaptureTrace>& caps,
                                                      const std::vector<CapturedGraph>& graphs, size_t cursor,
                                                      size_t* best_g) {
  std::vector<std::pair<uint32_t, uint32_t>> best;
  const size_t kernels = static_cast<size_t>(std::count_if(
      r.gpu.begin(), r.gpu.end(), [&](uint32_t gi) { return ex.gpu[gi].kind == TraceKind::Kernel; }));
  for (size_t k = 0; k < graphs.size() && best.size() < kernels; ++k) {
    size_t gix = (cursor + k) % graphs.size();
    auto pairs = align_replay(ex, r, caps[graphs[gix].capture].trace, graphs[gix]);
    if (pairs.size() > best.size()) best = std::move(pairs), *best_g = gix;
  }
  return best;
}

}  // namespace

GraphReplaySummary join_graph_replays(TorchTrace& ex, const std::vector<CaptureTrace>& caps) {
  GraphReplaySummary s;
  std::vector<Replay> replays = replays_of(ex);
  std::vector<CapturedGraph> graphs = captured_graphs(caps);
  s.graphs_captured = static_cast<int64_t>(graphs.size());
  for (size_t ci = 0; ci < caps.size(); ++ci)
    s.captures.push_back(
        capture_line(caps[ci], std::count_if(graphs.begin(), graphs.end(),
                                             [&](const CapturedGraph& g) { return g.capture == ci; })));
  s.graph_launches = static_cast<int64_t>(replays.size());
  int64_t next_corr = 0;
  for (const TraceLaunch& l : ex.launches) next_corr = std::max(next_corr, l.corr + 1);
  for (const TraceEvent& g : ex.gpu) next_corr = std::max(next_corr, g.corr + 1);
  std::vector<std::unique_ptr<Remap>> remaps(caps.size());
  size_t cursor = 0;  // the graph after the last one matched: piecewise graphs replay in capture order
  for (size_t ri = 0; ri < replays.size(); ++ri) {
    const Replay& r = replays[ri];
    for (uint32_t gi : r.gpu) s.replayed_us += ex.gpu[gi].dur;
    s.replayed += static_cast<int64_t>(r.gpu.size());
    size_t best_g = 0;
    std::vector<std::pair<uint32_t, uint32_t>> best = best_graph(ex, r, caps, graphs, cursor, &best_g);
    if (best.size() < r.gpu.size() && s.notes.size() < 5)
      s.notes.push_back("graph launch " + std::to_string(ri + 1) + ": " +
                        std::to_string(r.gpu.size() - best.size()) + " of its " +
                        std::to_string(r.gpu.size()) +
                        " GPU events not found in a captured graph (by kernel name, in order)");
    if (best.empty()) continue;
    cursor = (best_g + 1) % graphs.size();
    size_t ci = graphs[best_g].capture;
    if (!remaps[ci]) remaps[ci] = std::make_unique<Remap>(ex, caps[ci].trace);
    for (const auto& pr : best) s.matched_us += ex.gpu[pr.first].dur;
    s.matched += static_cast<int64_t>(best.size());
    place(ex, caps[ci], *remaps[ci], r, best, next_corr, ri + 1);
  }
  return s;
}

std::vector<CaptureTrace> read_capture_traces(const std::string& where) {
  std::error_code ec;
  fs::path p(where);
  if (!fs::exists(p, ec)) throw InputError(where + ": no such capture trace or folder");
  fs::path list = fs::is_directory(p, ec) ? p / "execution_details.json" : p;
  std::vector<CaptureTrace> out;
  if (list.filename() != "execution_details.json") {
    out.push_back({p.filename().string(), -1, "", read_torch_trace(where)});
    return out;
  }
  if (!fs::exists(list, ec)) {  // a folder of capture traces without a list: each trace in it
    for (const auto& f : fs::directory_iterator(p, ec))
      if (f.is_regular_file() && looks_like_torch_trace(f.path().string()))
        out.push_back({f.path().filename().string(), -1, "", read_torch_trace(f.path().string())});
    std::sort(out.begin(), out.end(),
              [](const CaptureTrace& a, const CaptureTrace& b) { return a.file < b.file; });
    if (out.empty()) throw InputError(where + ": no execution_details.json and no trace in the folder");
    return out;
  }
  std::ifstream in(list);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_array())
    throw InputError(list.string() + ": not a JSON list of {\"file\", \"batch_size\", \"mode\"}");
  for (const auto& e : j) {
    if (!e.is_object() || !e.contains("file") || !e["file"].is_string())
      throw InputError(list.string() + ": an entry without a \"file\"");
    CaptureTrace c;
    c.file = e["file"].get<std::string>();
    if (e.contains("batch_size") && e["batch_size"].is_number_integer())
      c.batch_size = e["batch_size"].get<int64_t>();
    if (e.contains("mode") && e["mode"].is_string()) c.mode = e["mode"].get<std::string>();
    c.trace = read_torch_trace((list.parent_path() / c.file).string());
    out.push_back(std::move(c));
  }
  return out;
}

std::string capture_folder_beside(const std::string& trace_path) {
  std::error_code ec;
  fs::path dir = fs::path(trace_path).parent_path() / "capture_traces";
  return fs::exists(dir / "execution_details.json", ec) ? dir.string() : "";
}

void join_capture_traces(TorchTrace& t, const std::string& capture) {
  bool replayed = std::any_of(t.launches.begin(), t.launches.end(),
                              [](const TraceLaunch& l) { return l.kind == LaunchKind::GraphLaunch; });
  if (!replayed) return;
  std::string where = capture.empty() ? capture_folder_beside(t.path) : capture == "none" ? "" : capture;
  std::vector<CaptureTrace> caps;
  try {
    if (!where.empty()) caps = read_capture_traces(where);
  } catch (const InputError& e) {
    if (!capture.empty()) throw;  // asked for with --capture: its error is the command's
    t.warnings.push_back(std::string("capture traces beside the trace not read: ") + e.what());
  }
  GraphReplaySummary s = join_graph_replays(t, caps);
  if (s.graph_launches > 0) t.graph_replay = std::move(s);
}

}  // namespace flopwise
