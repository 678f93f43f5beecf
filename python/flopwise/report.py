"""The Report object: a flopwise.report/1 JSON report as Python objects (docs/json-report.md), read a section
at a time when the compiled module keeps the analysis."""

from .formula import count

# The keys of a row that hold counts (ints, formula strings, or null in the JSON).
_COUNT_KEYS = {"params", "params_held", "buffers", "macs", "flops", "memory_bytes", "backward_flops",
               "backward_macs", "activation_bytes", "uncounted_nodes", "count"}


def _counts(row):
    return {k: (count(v) if k in _COUNT_KEYS else v) for k, v in row.items()}


class Totals:
    """The report's totals as attributes: params, buffers, macs, flops, memory_bytes, backward_flops, ...;
    each an int, a Formula (symbolic dims unbound) or None (unknown)."""

    def __init__(self, d):
        self.__dict__.update(_counts(d))

    def __getitem__(self, key):
        return self.__dict__[key]

    def __repr__(self):
        return "Totals(" + ", ".join(f"{k}={v}" for k, v in self.__dict__.items()) + ")"


class Scope:
    """A module scope: name (full dotted path), label, cls (module class or None), children, costs (a dict of
    its counts); the counts are attributes too (s.macs)."""

    def __init__(self, d):
        self.name = d.get("name", "")
        self.label = d.get("label", "")
        self.cls = d.get("class")
        self.children = [Scope(c) for c in d.get("children", [])]
        self.costs = _counts({k: v for k, v in d.items() if k not in ("name", "label", "class", "children")})

    def __getattr__(self, key):
        costs = self.__dict__.get("costs", {})
        if key in costs:
            return costs[key]
        raise AttributeError(key)

    def walk(self, depth=0):
        """(depth, scope) for this scope and every scope under it, in pre-order."""
        yield depth, self
        for c in self.children:
            yield from c.walk(depth + 1)

    def __repr__(self):
        return f"Scope({self.name or self.label!r}, macs={self.costs.get('macs')}, children={len(self.children)})"


class Report:
    """A static cost report. Sections: totals, scopes, op_types, nodes, warnings, unsupported, by_dtype, and
    where the analysis made them: llm, moe, causal, roofline, peak_memory, notes, symbols, ... (dicts)."""

    def __init__(self, data, source=None, keep=None):
        # The JSON report: a dict, or a mapping that parses each top-level member when first read.
        self._data = data
        self._keep = keep  # the temporary model file, alive as long as the report
        self._source = source  # how to write the same report in another format (table, HTML)
        self._totals = self._scopes = self._op_types = self._nodes = None

    def to_dict(self):
        """The JSON report, as the CLI's --format json writes it."""
        if not isinstance(self._data, dict):
            self._data = dict(self._data)
        return self._data

    @property
    def totals(self):
        if self._totals is None:
            self._totals = Totals(self._data.get("totals", {}))
        return self._totals

    @property
    def schema(self):
        return self._data.get("schema")

    @property
    def scopes(self):
        if self._scopes is None:
            self._scopes = Scope(self._data.get("scopes") or {})
        return self._scopes

    @property
    def op_types(self):
        if self._op_types is None:
            self._op_types = [_counts(r) for r in self._data.get("op_types", [])]
        return self._op_types

    @property
    def nodes(self):
        if self._nodes is None:
            self._nodes = [_counts(r) for r in self._data.get("nodes", [])]
        return self._nodes

    @property
    def warnings(self):
        return self._data.get("warnings", [])

    @property
    def unsupported(self):
        return self._data.get("unsupported", [])

    @property
    def by_dtype(self):
        return [_counts(r) for r in self._data.get("by_dtype", [])]

    def __getattr__(self, key):  # the optional sections: llm, moe, causal, roofline, peak_memory, notes, ...
        data = self.__dict__.get("_data", {})
        if key in data:
            return data[key]
        if key in ("llm", "moe", "causal", "roofline", "peak_memory", "training", "prediction", "notes", "symbols",
                   "assumptions",
                   "dim_aliases", "branch_params"):
            return None
        raise AttributeError(key)

    def to_pandas(self, level="scope"):
        """A pandas DataFrame: one row per scope (with its depth; the scopes' sums at one depth equal the
        totals' known parts), op type, or node. Symbolic counts stay Formula objects."""
        import pandas as pd

        if level == "scope":
            rows = []
            for depth, s in self.scopes.walk():
                rows.append({"name": s.name, "label": s.label, "class": s.cls, "depth": depth,
                             **{k: v for k, v in s.costs.items() if k != "children"}})
            return pd.DataFrame(rows)
        if level == "op":
            return pd.DataFrame(self.op_types)
        if level == "node":
            return pd.DataFrame([{k: v for k, v in n.items() if k not in ("outputs", "inputs")} for n in self.nodes])
        raise ValueError(f"level {level!r}: one of scope, op, node")

    def _write(self, fmt, depth=-1):
        if self._source is None:
            raise ValueError("this report has no analysis to write it from (made from a dict)")
        return self._source(fmt, depth)

    def table(self, depth=3):
        """The text report (flopwise's DeepSpeed-profiler layout), the module tree to `depth` (-1: all)."""
        return self._write("text", depth)

    def _repr_html_(self):
        return self._write("html")

    def __repr__(self):
        m = self._data.get("model", {})
        t = self.totals
        return (f"<flopwise.Report {m.get('path', '')}: params={getattr(t, 'params', None)} "
                f"macs={getattr(t, 'macs', None)} flops={getattr(t, 'flops', None)}>")
