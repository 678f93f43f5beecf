// src/writers/html_report.cc — `--format html`: one self-contained page (no network at view time: its CSS
// and JS are inline, written here; no library needed for a treemap, a bar chart and a table): the
// summary, a zoomable treemap of the scope tree sized by FLOPs, params or memory bytes, the op types as
// bars, the detailed tree as a collapsible, sortable table, and with --sweep a log-log plot of the costs
// over the first swept dim. The data is the JSON report's, embedded. `#selftest` in the URL makes the
// page click its largest cell and write what it drew into <pre id="selftest"> (the browser test reads it);
// `#selftest-latency` (and -params, ...) draws by that metric first. A run report (flopwise run --format
// html) adds the measured latency per scope as a metric.
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <unordered_map>

#include "flopwise/attention.h"
#include "flopwise/calibration.h"
#include "flopwise/json_text.h"
#include "flopwise/llm.h"
#include "flopwise/moe.h"
#include "flopwise/peak_memory.h"
#include "flopwise/roofline.h"
#include "flopwise/sweep.h"
#include "flopwise/training.h"
#include "flopwise/writers.h"
#include "html_page.h"

namespace flopwise {

namespace {

using json = nlohmann::ordered_json;

// A count as a number for sizing: its value; a formula evaluated with every symbol at kSymbolValue
// (the page says so); null when unknown.
constexpr int64_t kSymbolValue = 64;

json sized(const Count& c) {
  if (c.known) return json(c.v);
  if (!c.symbolic()) return json(nullptr);
  std::vector<std::pair<std::string, int64_t>> b;
  for (const auto& s : c.sym.symbols()) b.emplace_back(s, kSymbolValue);
  Dim v = c.sym.substitute(b);
  return v.is_known() ? json(v.value()) : json(nullptr);
}

json text(const Count& c) { return human(c); }

// `train`: --train's figures per scope (the backward's FLOPs, what it keeps) as two more metrics.
using TrainByScope = std::unordered_map<std::string_view, const TrainCounts*>;

// `predicted`: --predict's milliseconds per scope, one more metric.
using MsByScope = std::unordered_map<std::string_view, double>;

json scope_json(const ScopeNode& s, const std::map<std::string, double>* latency, const TrainByScope* train,
                const MsByScope* predicted) {
  json ch = json::array();
  for (const auto& c : s.children) ch.push_back(scope_json(*c, latency, train, predicted));
  json j = {{"name", s.name},
            {"label", s.label},
            {"cls", s.cls},
            {"v",
             {{"flops", sized(s.cost.flops)},
              {"params", sized(s.cost.params)},
              {"macs", sized(s.cost.macs)},
              {"memory", sized(s.cost.memory_bytes)}}},
            {"t",
             {{"flops", text(s.cost.flops)},
              {"params", text(s.cost.params)},
              {"macs", text(s.cost.macs)},
              {"memory", text(s.cost.memory_bytes)}}},
            {"children", ch}};
  if (latency) {
    auto it = latency->find(s.name);
    double ms = it == latency->end() ? 0.0 : it->second;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f ms", ms);
    j["v"]["latency"] = ms;
    j["t"]["latency"] = buf;
  }
  if (train) {
    auto it = train->find(s.name);
    const TrainCounts none;
    const TrainCounts& c = it == train->end() ? none : *it->second;
    j["v"]["bwd_flops"] = sized(c.backward_flops);
    j["t"]["bwd_flops"] = text(c.backward_flops);
    j["v"]["kept"] = sized(c.saved_bytes);
    j["t"]["kept"] = text(c.saved_bytes);
  }
  if (predicted) {
    auto it = predicted->find(s.name);
    const double ms = it == predicted->end() ? 0.0 : it->second;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f ms", ms);
    j["v"]["predicted"] = ms;
    j["t"]["predicted"] = buf;
  }
  return j;
}

const char* kPage = R"PAGE(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>flopwise: __TITLE__</title>
<style>
__BASE_STYLE__
.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px}.kv b{font-weight:600}
#crumbs a{cursor:pointer;color:#2962c7}#crumbs span{color:#6b7385}
#map{position:relative;height:420px;background:#eef0f4;border-radius:4px;overflow:hidden}
.cell{position:absolute;box-sizing:border-box;border:1px solid #fff;overflow:hidden;cursor:pointer;
 color:#fff;font-size:12px;padding:3px 5px}.cell:hover{filter:brightness(1.12)}
.cell .n{font-weight:600;white-space:nowrap}.cell .v{opacity:.85;white-space:nowrap}
.bar{display:grid;grid-template-columns:200px 1fr 280px;gap:8px;align-items:center;margin:2px 0}
.bar span{white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.bar .b{height:14px;background:#4f7fd9;border-radius:2px}
th{position:sticky;top:0}td .tog{cursor:pointer;display:inline-block;width:14px;color:#6b7385}
svg text{font-size:11px;fill:#1d2330}
</style></head><body>
<header><h1>flopwise: __TITLE__</h1><div class="sub">static cost report, convention '__CONV__'</div></header>
<main>
<section><h2>Summary</h2><div class="kv" id="summary"></div><div class="note" id="symnote"></div></section>
<section><h2>Where the cost is</h2>
<div>size by <select id="metric"><option value="flops">FLOPs</option><option value="macs">MACs</option>
<option value="params">params</option><option value="memory">memory bytes</option></select>
&nbsp;<span id="crumbs"></span></div><div id="map"></div>
<div class="note">Click a cell to zoom into that module; the path above leads back.</div></section>
<section id="sweepsec" hidden><h2>Cost over the swept sizes</h2><div id="sweep"></div></section>
<section><h2>Op types</h2><div id="ops"></div></section>
<section><h2>Module tree</h2><div class="note">Click a header to sort siblings; click a triangle to fold.</div>
<table id="tree"><thead><tr><th data-k="label">module</th><th data-k="cls">class</th><th data-k="params">params</th>
<th data-k="macs">MACs</th><th data-k="flops">FLOPs</th><th data-k="memory">memory</th></tr></thead><tbody></tbody></table></section>
<pre id="selftest" hidden></pre>
</main>
<script id="data" type="application/json">__DATA__</script>
<script>
__COMMON_JS__
// Summary.
for (const [k, v] of D.summary) { const b = document.createElement("b"); b.textContent = k;
  const s = document.createElement("span"); s.textContent = v; $("summary").append(b, s); }
if (D.symbolic) $("symnote").textContent = "Costs are formulas in the model's dynamic dims; the pictures size them with every dim at " + D.symbol_value + ".";
// Treemap (squarified).
const palette = ["#3d6fc9","#2f9e8f","#c9733d","#8a5cc9","#c93d6f","#5c9e2f","#c9a63d","#3da6c9","#7a7f8c","#9e2f4a"];
let zoom = D.scopes, metric = "flops";
const cols = ["cls", "params", "macs", "flops", "memory"];
if (D.training) for (const [k, name] of [["bwd_flops", "bwd FLOPs (--train)"], ["kept", "kept for backward"]]) {
  const o = document.createElement("option"); o.value = k; o.textContent = name; $("metric").append(o);
  const th = document.createElement("th"); th.dataset.k = k; th.textContent = name;
  document.querySelector("#tree thead tr").append(th); cols.push(k); }
if (D.prediction) { const o = document.createElement("option"); o.value = "predicted";
  o.textContent = "predicted latency (--predict)"; $("metric").append(o);
  const th = document.createElement("th"); th.dataset.k = "predicted"; th.textContent = "predicted";
  document.querySelector("#tree thead tr").append(th); cols.push("predicted"); }
if (D.latency) { const o = document.createElement("option"); o.value = "latency"; o.textContent = "measured latency";
  $("metric").append(o); if (D.latency_first) { metric = "latency"; $("metric").value = metric; } }
const st = location.hash.match(/^#selftest(?:-(\w+))?$/);
if (st && st[1]) { metric = st[1]; $("metric").value = metric; }
function val(s) { const v = s.v[metric]; return v === null ? 0 : v; }
function squarify(items, x, y, w, h, out) {
  items = items.filter(it => it.value > 0);
  const total = items.reduce((a, it) => a + it.value, 0);
  if (!items.length || total <= 0) return out;
  const scale = (w * h) / total;
  let rest = items.map(it => ({it, area: it.value * scale}));
  while (rest.length) {
    const short = Math.min(w, h); let row = [], best = Infinity;
    for (let i = 0; i < rest.length; i++) {
      const cand = rest.slice(0, i + 1), sum = cand.reduce((a, c) => a + c.area, 0);
      const mx = Math.max(...cand.map(c => c.area)), mn = Math.min(...cand.map(c => c.area));
      const worst = Math.max(short * short * mx / (sum * sum), (sum * sum) / (short * short * mn));
      if (worst > best) break; best = worst; row = cand;
    }
    const sum = row.reduce((a, c) => a + c.area, 0);
    if (w >= h) { const cw = sum / h; let cy = y;
      for (const c of row) { const ch = c.area / cw; out.push({it: c.it, x, y: cy, w: cw, h: ch}); cy += ch; }
      x += cw; w -= cw;
    } else { const chh = sum / w; let cx = x;
      for (const c of row) { const cw = c.area / chh; out.push({it: c.it, x: cx, y, w: cw, h: chh}); cx += cw; }
      y += chh; h -= chh;
    }
    rest = rest.slice(row.length);
  }
  return out;
}
function path(s) { const p = []; (function f(n, acc) { if (n === s) { p.push(...acc, n); return true; }
  for (const c of n.children) if (f(c, [...acc, n])) return true; return false; })(D.scopes, []); return p; }
function drawMap() {
  const map = $("map"); map.textContent = "";
  const W = map.clientWidth, H = map.clientHeight;
  const kids = zoom.children.length ? zoom.children : [zoom];
  const items = kids.map((s, i) => ({s, value: val(s), i}));
  const cells = squarify(items.sort((a, b) => b.value - a.value), 0, 0, W, H, []);
  for (const c of cells) {
    const d = document.createElement("div"); d.className = "cell";
    Object.assign(d.style, {left: c.x + "px", top: c.y + "px", width: c.w + "px", height: c.h + "px",
                            background: palette[c.it.i % palette.length]});
    d.dataset.scope = c.it.s.name; d.dataset.value = c.it.value; d.dataset.area = c.w * c.h;
    d.title = (c.it.s.name || "(model)") + (c.it.s.cls ? " [" + c.it.s.cls + "]" : "") + "\n" + metric + ": " + c.it.s.t[metric];
    const n = document.createElement("div"); n.className = "n"; n.textContent = c.it.s.label + (c.it.s.cls ? " · " + c.it.s.cls : "");
    const v = document.createElement("div"); v.className = "v"; v.textContent = c.it.s.t[metric];
    d.append(n, v);
    d.addEventListener("click", () => { if (c.it.s.children.length) { zoom = c.it.s; drawMap(); } });
    map.append(d);
  }
  const cr = $("crumbs"); cr.textContent = "";
  path(zoom).forEach((s, i, all) => {
    if (i) cr.append(" / ");
    const a = document.createElement(i < all.length - 1 ? "a" : "span"); a.textContent = s.label || "(model)";
    if (i < all.length - 1) a.addEventListener("click", () => { zoom = s; drawMap(); });
    cr.append(a);
  });
}
$("metric").addEventListener("change", e => { metric = e.target.value; drawMap(); });
// Op types.
const opMax = Math.max(1, ...D.ops.map(o => o.flops || 0));
for (const o of D.ops) {
  const r = document.createElement("div"); r.className = "bar";
  const n = document.createElement("span"); n.textContent = o.op + " ×" + o.count;
  const b = document.createElement("div"); b.className = "b"; b.style.width = (100 * (o.flops || 0) / opMax) + "%";
  const v = document.createElement("span"); v.textContent = o.text; v.title = o.text;
  r.append(n, b, v); $("ops").append(r);
}
// Module tree: collapsible, sortable.
let sortKey = null, sortDir = -1;
function rows(s, depth, body) {
  const tr = document.createElement("tr"); const td = document.createElement("td");
  td.style.paddingLeft = (8 + 16 * depth) + "px";
  const t = document.createElement("span"); t.className = "tog"; t.textContent = s.children.length ? (s.open === false ? "▸" : "▾") : "";
  t.addEventListener("click", () => { s.open = s.open === false; drawTree(); });
  td.append(t, document.createTextNode(s.label || "(model)")); tr.append(td);
  for (const k of cols) { const c = document.createElement("td");
    c.textContent = k === "cls" ? s.cls : s.t[k]; tr.append(c); }
  body.append(tr);
  if (s.open === false) return;
  let kids = [...s.children];
  if (sortKey) kids.sort((a, b) => { const x = sortKey === "label" || sortKey === "cls" ? a[sortKey] : a.v[sortKey],
    y = sortKey === "label" || sortKey === "cls" ? b[sortKey] : b.v[sortKey]; return (x > y ? 1 : x < y ? -1 : 0) * sortDir; });
  for (const c of kids) rows(c, depth + 1, body);
}
function drawTree() { const body = document.querySelector("#tree tbody"); body.textContent = ""; rows(D.scopes, 0, body); }
for (const th of document.querySelectorAll("#tree th")) th.addEventListener("click", () => {
  sortDir = sortKey === th.dataset.k ? -sortDir : -1; sortKey = th.dataset.k; drawTree(); });
// Sweep: log-log lines of FLOPs, MACs and memory over the first axis (other axes at their first value).
function drawSweep() {
  const S = D.sweep; if (!S || !S.rows.length) return;
  $("sweepsec").hidden = false;
  const ax = S.axes[0], rowsOk = S.rows.filter(r => S.axes.slice(1).every(a => r.point[a] === S.rows[0].point[a]));
  const W = 640, H = 300, L = 60, B = 36, series = [["flops", "#3d6fc9"], ["macs", "#2f9e8f"], ["memory_bytes", "#c9733d"]];
  const xs = rowsOk.map(r => Math.max(1, r.point[ax]));
  const ys = rowsOk.flatMap(r => series.map(([k]) => r[k]).filter(v => v > 0));
  if (!ys.length) return;
  const lx = v => Math.log10(v), x0 = lx(Math.min(...xs)), x1 = lx(Math.max(...xs)) + 1e-9,
        y0 = lx(Math.min(...ys)), y1 = lx(Math.max(...ys)) + 1e-9;
  const X = v => L + (W - L - 10) * (lx(v) - x0) / (x1 - x0 || 1), Y = v => H - B - (H - B - 10) * (lx(v) - y0) / (y1 - y0 || 1);
  let svg = `<svg width="${W}" height="${H}" role="img"><line x1="${L}" y1="${H - B}" x2="${W}" y2="${H - B}" stroke="#999"/>` +
            `<line x1="${L}" y1="0" x2="${L}" y2="${H - B}" stroke="#999"/>`;
  for (const [k, col] of series) {
    const pts = rowsOk.filter(r => r[k] > 0).map(r => `${X(Math.max(1, r.point[ax]))},${Y(r[k])}`).join(" ");
    svg += `<polyline fill="none" stroke="${col}" stroke-width="2" points="${pts}"/>`;
    for (const r of rowsOk) if (r[k] > 0) svg += `<circle cx="${X(Math.max(1, r.point[ax]))}" cy="${Y(r[k])}" r="3" fill="${col}"><title>${ax}=${r.point[ax]}: ${k} ${human(r[k])}</title></circle>`;
  }
  for (const r of rowsOk) svg += `<text x="${X(Math.max(1, r.point[ax]))}" y="${H - B + 14}" text-anchor="middle">${r.point[ax]}</text>`;
  svg += `<text x="${W / 2}" y="${H - 4}" text-anchor="middle">${ax} (log)</text>` +
         `<text x="${L - 6}" y="${Y(Math.max(...ys)) + 4}" text-anchor="end">${human(Math.max(...ys))}</text>` +
         `<text x="${L - 6}" y="${Y(Math.min(...ys)) + 4}" text-anchor="end">${human(Math.min(...ys))}</text></svg>`;
  $("sweep").innerHTML = svg + `<div class="note">blue FLOPs, green MACs, orange memory bytes; log-log` +
    (S.axes.length > 1 ? `; ${S.axes.slice(1).map(a => a + "=" + S.rows[0].point[a]).join(", ")}` : "") + `</div>`;
}
drawMap(); drawTree(); drawSweep();
if (st) {
  const cells = () => [...document.querySelectorAll("#map .cell")].map(d => ({scope: d.dataset.scope,
    value: Number(d.dataset.value), area: Number(d.dataset.area)}));
  const before = cells();
  const target = [...document.querySelectorAll("#map .cell")].find(d => {
    const s = D.scopes.children.find(c => c.name === d.dataset.scope); return s && s.children.length; });
  let clicked = null;
  if (target) { clicked = target.dataset.scope; target.click(); }
  const after = cells();
  $("selftest").textContent = JSON.stringify({errors, metric, before, clicked, zoom: zoom.name, after,
    crumbs: $("crumbs").textContent, map: {w: $("map").clientWidth, h: $("map").clientHeight}});
}
</script></body></html>
)PAGE";

}  // namespace

void write_html(std::ostream& os, const AnalysedReport& r, const Sweep* sweep,
                const std::map<std::string, double>* latency_ms) {
  bool symbolic = false;
  for (const Count* c : {&r.totals.params, &r.totals.macs, &r.totals.flops, &r.totals.memory_bytes})
    symbolic = symbolic || c->symbolic();
  json summary = json::array();
  auto row = [&summary](const std::string& k, const std::string& v) {
    summary.push_back(json::array({k, v}));
  };
  row("model", r.path + " (" + r.format + (r.producer.empty() ? "" : ", " + r.producer) + ")");
  for (const auto& [name, t] : r.inputs) row("input " + name, t.second.str() + " " + dtype_name(t.first));
  row("params", human(r.totals.params));
  for (const auto& d : r.by_dtype) {
    if (d.params != Count{})
      row(std::string("params ") + dtype_name(d.dtype),
          human(d.params) + " (" + human(d.weight_bytes) + "B)");
    if (d.macs != Count{}) row(std::string("MACs ") + dtype_name(d.dtype), human(d.macs));
  }
  row("MACs", (r.totals.uncounted ? ">= " : "") + human(r.totals.macs));
  row("FLOPs", (r.totals.uncounted ? ">= " : "") + human(r.totals.flops));
  row("memory bytes", (r.totals.uncounted ? ">= " : "") + human(r.totals.memory_bytes));
  if (r.peak_memory) {
    row("peak activation memory",
        (r.peak_memory->unknown_tensors ? ">= " : "") + human(r.peak_memory->peak) + "B");
    row("weights / KV cache", human(r.peak_memory->weights) + "B / " + human(r.peak_memory->kv_cache) + "B");
    row("activations saved for training (estimate)", human(r.peak_memory->saved_for_training) + "B");
  }
  if (r.training) {  // --train: the step's summary rows (flopwise/training.h)
    const TrainingReport& t = *r.training;
    const std::string at_least = r.totals.uncounted ? ">= " : "";
    row("training step", std::string("optimizer ") + optimizer_name(t.optimizer) + ", " +
                             precision_name(t.precision) +
                             (t.device == Device::Cuda ? "" : std::string(", ") + device_name(t.device)));
    row("fwd FLOPs in train mode", at_least + human(t.forward_flops));
    row("trainable params", human(t.total.trainable_params) + " (" + human(t.frozen_params) + " frozen)");
    row("bwd MACs", at_least + human(t.total.backward_macs));
    row("bwd FLOPs", at_least + human(t.total.backward_flops) +
                         " (2 x fwd rule: " + human(t.estimate_backward_flops) + ")");
    row("gradients / optimizer state",
        human(t.gradient_bytes) + "B / " + human(t.optimizer_state_bytes) + "B");
    row("kept for backward", human(t.total.saved_bytes) + "B");
    row("training memory estimate", human(t.memory_estimate_bytes) + "B");
  }
  if (r.prediction) row("predicted latency (--predict)", prediction_summary(*r.prediction));
  if (r.parallel)  // --parallel: per-GPU rows (src/writers/parallel_text.cc)
    for (const auto& [k, v] : parallel_summary_rows(*r.parallel)) row(k, v);
  if (r.roofline) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.4g ms", r.roofline->total.seconds * 1e3);
    row("latency lower bound (" + r.roofline->hw.name + ")",
        buf + (r.roofline->unbounded_nodes
                   ? " (" + std::to_string(r.roofline->unbounded_nodes) + " nodes not bounded)"
                   : std::string()));
  }
  if (r.causal)
    row("causal attention (--causal)",
        std::to_string(r.causal->products) + " products, " + human(r.causal->macs_skipped) + " MACs skipped");
  if (r.moe) {
    row("MoE", "top-" + std::to_string(r.moe->top_k) + " of " + std::to_string(r.moe->experts) +
                   " experts, " + std::to_string(r.moe->layers.size()) + " layers");
    row("MoE activated params / MACs", human(r.moe->activated_params) + " / " +
                                           (r.moe->dense ? human(r.moe->activated_macs) : std::string("?")));
  }
  if (r.llm)
    for (const auto& [k, v] : llm_summary_rows(*r.llm)) row(k, v);
  for (const auto& a : r.aliases) row("dim alias", a.text());
  for (size_t i = 0; i < r.symbols.size() && i < 8; ++i)  // the first few, as in text
    row("data-dependent size",
        r.symbols[i].bounds_text() + " (" + r.symbols[i].op + " '" + r.symbols[i].node + "')");
  if (r.symbols.size() > 8)
    row("data-dependent size", "and " + std::to_string(r.symbols.size() - 8) + " more");
  for (const auto& a : r.assumptions) row("assumed", a.text() + " (node " + a.node + ")");
  for (const auto& w : r.warnings) row("warning", w);
  json ops = json::array();
  for (const auto& o : r.op_types)
    ops.push_back({{"op", o.op}, {"count", o.count}, {"flops", sized(o.flops)}, {"text", human(o.flops)}});
  TrainByScope train;
  if (r.training)
    for (const auto& [name, c] : r.training->scopes) train.emplace(name, &c);
  MsByScope predicted;
  if (r.prediction)
    for (const auto& [name, ms] : r.prediction->scopes) predicted.emplace(name, ms);
  json data = {{"summary", summary},
               {"symbolic", symbolic},
               {"symbol_value", kSymbolValue},
               {"scopes", scope_json(*r.scopes, latency_ms, r.training ? &train : nullptr,
                                     r.prediction ? &predicted : nullptr)},
               {"training", r.training != nullptr},
               {"prediction", r.prediction != nullptr},
               {"ops", ops},
               {"sweep", nullptr},
               {"latency", latency_ms != nullptr}};
  // A PyTorch trace's page (flopwise trace --format html) is about measured time: drawn by it first.
  if (latency_ms != nullptr && model_format_of(r.format) == ModelFormat::PytorchTrace)
    data["latency_first"] = true;
  if (sweep) {
    json rows = json::array();
    for (const auto& sr : sweep->rows) {
      json p = json::object();
      for (size_t i = 0; i < sweep->names.size(); ++i) p[sweep->names[i]] = sr.point[i];
      auto n = [](const Count& c) { return c.known ? json(c.v) : json(nullptr); };
      rows.push_back(
          {{"point", p}, {"flops", n(sr.flops)}, {"macs", n(sr.macs)}, {"memory_bytes", n(sr.memory_bytes)}});
    }
    data["sweep"] = {{"axes", sweep->names}, {"rows", rows}};
  }
  html::write_page(os, kPage,
                   {{"__BASE_STYLE__", html::kBaseStyle},
                    {"__COMMON_JS__", html::kCommonJs},
                    {"__TITLE__", html::escape(r.path.substr(r.path.find_last_of('/') + 1))},
                    {"__CONV__", html::escape(r.convention)},
                    {"__DATA__", html::script_json(json_text(data))}});
}

}  // namespace flopwise
