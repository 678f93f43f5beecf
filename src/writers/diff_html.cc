// src/writers/diff_html.cc — `flopwise diff A B --format html`: the two models side by side in one
// self-contained page (inline CSS/JS, no network): totals of both with the change, then every module scope
// and op type with A's and B's figures as paired bars and the change, changed, added and removed rows
// highlighted, sortable by any column; shape changes listed. `#selftest` writes what the page drew into
// <pre id="selftest"> for the browser test.
#include <nlohmann/json.hpp>

#include "flopwise/diff.h"
#include "flopwise/json_text.h"
#include "flopwise/writers.h"
#include "html_page.h"

namespace flopwise {

namespace {

using json = nlohmann::ordered_json;

json figs(const std::optional<Figures>& f) {
  json o = json::object();
  if (!f) return nullptr;
  for (const auto& [k, v] : f->items) o[k] = v ? json(*v) : json(nullptr);
  return o;
}

json entries(const std::vector<DiffEntry>& es) {
  json out = json::array();
  for (const auto& e : es)
    out.push_back({{"name", e.name},
                   {"a_name", e.a_name},
                   {"cls", e.cls},
                   {"status", status_name(e.status)},
                   {"depth", e.depth},
                   {"a", figs(e.a)},
                   {"b", figs(e.b)},
                   {"d", figs(e.delta)}});
  return out;
}

const char* kDiffPage = R"PAGE(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>flopwise diff</title>
<style>
__BASE_STYLE__
tr.changed{background:#fff6df}tr.added{background:#e5f6e8}tr.removed{background:#fbe4e6}
.pair{width:220px}.pair div{height:6px;margin:1px 0;border-radius:2px}.pa{background:#7a8cc9}.pb{background:#3d6fc9}
.st{font-size:11px;padding:0 5px;border-radius:3px;background:#e8ebf1}.up{color:#b3261e}.down{color:#1e7b34}
</style></head><body>
<header><h1>flopwise diff</h1><div class="sub" id="sides"></div></header>
<main>
<section><h2>Totals</h2><table id="totals"><thead><tr><th>quantity</th><th>A</th><th>B</th><th>B - A</th><th>change</th></tr></thead><tbody></tbody></table></section>
<section><h2>Module scopes</h2><div>compare by <select id="key"><option>flops</option><option>macs</option><option>params</option><option>memory_bytes</option></select>
<span class="note">&nbsp;rows: changed (amber), added in B (green), removed from A (red); bars: A above, B below; click a header to sort</span></div>
<table id="scopes"></table></section>
<section><h2>Op types</h2><table id="ops"></table></section>
<section id="shapesec" hidden><h2>Shape changes</h2><ul id="shapes"></ul></section>
<pre id="selftest" hidden></pre>
</main>
<script id="data" type="application/json">__DATA__</script>
<script>
__COMMON_JS__
const signed = x => x === null || x === undefined ? "-" : (x > 0 ? "+" : "") + human(x);
const pct = (a, b) => a ? ((b - a) / a * 100).toFixed(1) + " %" : (b ? "new" : "");
$("sides").textContent = "A: " + D.a_path + "   B: " + D.b_path;
for (const k of Object.keys(D.a)) {
  const tr = document.createElement("tr");
  for (const t of [k, human(D.a[k]), human(D.b[k]), signed(D.delta[k]), pct(D.a[k], D.b[k])]) {
    const td = document.createElement("td"); td.textContent = t; tr.append(td); }
  $("totals").tBodies[0].append(tr);
}
let key = "flops", sortCol = null, sortDir = -1;
function table(el, rows, first) {
  const max = Math.max(1, ...rows.flatMap(r => [r.a && r.a[key] || 0, r.b && r.b[key] || 0]));
  const cols = [[first, r => r.name + (r.a_name && r.a_name !== r.name ? " (A: " + r.a_name + ")" : "")],
                ["class", r => r.cls || ""], ["status", r => r.status], ["A " + key, r => r.a ? r.a[key] : null],
                ["B " + key, r => r.b ? r.b[key] : null], ["B - A", r => r.d[key]]];
  el.textContent = "";
  const head = el.createTHead().insertRow();
  cols.forEach(([name], i) => { const th = document.createElement("th"); th.textContent = name;
    th.addEventListener("click", () => { sortDir = sortCol === i ? -sortDir : -1; sortCol = i; draw(); }); head.append(th); });
  head.append(Object.assign(document.createElement("th"), {textContent: "A | B"}));
  let rs = [...rows];
  if (sortCol !== null) rs.sort((x, y) => { const f = cols[sortCol][1], p = f(x), q = f(y);
    return ((p ?? -Infinity) > (q ?? -Infinity) ? 1 : (p ?? -Infinity) < (q ?? -Infinity) ? -1 : 0) * sortDir; });
  const body = el.createTBody();
  for (const r of rs) {
    const tr = body.insertRow(); tr.className = r.status; tr.dataset.status = r.status;
    cols.forEach(([, f], i) => { const td = tr.insertCell(); const v = f(r);
      td.textContent = i >= 3 ? (i === 5 ? signed(v) : human(v)) : (i === 2 ? "" : v);
      if (i === 0) td.style.paddingLeft = (8 + 12 * Math.max(0, (r.depth || 1) - 1)) + "px";
      if (i === 2) { const s = document.createElement("span"); s.className = "st"; s.textContent = v; td.append(s); }
      if (i === 5 && v) td.className = v > 0 ? "up" : "down"; });
    const td = tr.insertCell(); td.className = "pair";
    for (const [side, cls] of [[r.a, "pa"], [r.b, "pb"]]) { const d = document.createElement("div"); d.className = cls;
      d.style.width = (100 * ((side && side[key]) || 0) / max) + "%"; td.append(d); }
  }
}
function draw() { table($("scopes"), D.scopes, "scope"); table($("ops"), D.ops, "op type"); }
$("key").addEventListener("change", e => { key = e.target.value; draw(); });
draw();
if (D.shapes.length) { $("shapesec").hidden = false;
  for (const s of D.shapes) { const li = document.createElement("li");
    li.textContent = s.kind + " " + s.name + (s.node ? " (" + s.node + ")" : "") + ": " + s.a + " → " + s.b; $("shapes").append(li); } }
if (location.hash === "#selftest") {
  const rows = [...document.querySelectorAll("#scopes tbody tr")].map(tr => tr.dataset.status);
  $("selftest").textContent = JSON.stringify({errors, rows: rows.length,
    highlighted: rows.filter(s => s !== "same").length,
    totals: document.querySelectorAll("#totals tbody tr").length});
}
</script></body></html>
)PAGE";

}  // namespace

void write_diff_html(std::ostream& os, const Diff& d) {
  json shapes = json::array();
  for (const auto& s : d.shape_changes)
    shapes.push_back({{"kind", s.kind}, {"name", s.name}, {"node", s.node}, {"a", s.a}, {"b", s.b}});
  json data = {{"a_path", d.a_path},
               {"b_path", d.b_path},
               {"a", figs(d.a)},
               {"b", figs(d.b)},
               {"delta", figs(d.delta)},
               {"scopes", entries(d.scopes)},
               {"ops", entries(d.op_types)},
               {"shapes", shapes}};
  html::write_page(os, kDiffPage,
                   {{"__BASE_STYLE__", html::kBaseStyle},
                    {"__COMMON_JS__", html::kCommonJs},
                    {"__DATA__", html::script_json(json_text(data))}});
}

}  // namespace flopwise
