"""Symbolic counts of a report: "1024*batch*seq^2 + 914432*batch*seq", with floor(X/2), min(a, b), max(a, b)
and rational coefficients ("3/2*seq"). Parsed by a small recursive-descent parser (never eval): symbol names
may hold any character but whitespace, operators, parentheses and commas (e.g. "past:0", "x.size")."""

_TOKEN = r"\s*(?:(\d+)|([+\-*/^(),])|([^\s+\-*/^(),]+))"  # compiled on first use: import stays light
_FUNCS = {"floor", "ceil", "min", "max"}


def _tokens(text):
    import re

    token = re.compile(_TOKEN)
    pos, out = 0, []
    text = text.rstrip()
    while pos < len(text):
        m = token.match(text, pos)
        if not m or m.end() == pos:
            raise ValueError(f"formula {text!r}: cannot read at {pos}")
        num, op, name = m.groups()
        out.append(("num", int(num)) if num is not None else ("op", op) if op is not None else ("name", name))
        pos = m.end()
    return out


class _Parser:
    # expr := term (('+'|'-') term)* ; term := unary (('*'|'/') unary)* ; unary := '-' unary | power ;
    # power := atom ('^' num)? ; atom := num | name | name '(' expr (',' expr)* ')' | '(' expr ')'
    def __init__(self, text):
        self.text, self.toks, self.i = text, _tokens(text), 0

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None)

    def take(self, kind=None, value=None):
        t = self.peek()
        if t[0] is None or (kind and t[0] != kind) or (value and t[1] != value):
            raise ValueError(f"formula {self.text!r}: expected {value or kind} at token {self.i}")
        self.i += 1
        return t

    def parse(self):
        node = self.expr()
        if self.i != len(self.toks):
            raise ValueError(f"formula {self.text!r}: unexpected {self.peek()[1]!r}")
        return node

    def expr(self):
        node = self.term()
        while self.peek() in (("op", "+"), ("op", "-")):
            op = self.take()[1]
            node = (op, node, self.term())
        return node

    def term(self):
        node = self.unary()
        while self.peek() in (("op", "*"), ("op", "/")):
            op = self.take()[1]
            node = (op, node, self.unary())
        return node

    def unary(self):
        if self.peek() == ("op", "-"):
            self.take()
            return ("neg", self.unary())
        return self.power()

    def power(self):
        node = self.atom()
        if self.peek() == ("op", "^"):
            self.take()
            node = ("^", node, ("num", self.take("num")[1]))
        return node

    def atom(self):
        kind, value = self.peek()
        if kind == "num":
            self.take()
            return ("num", value)
        if kind == "name":
            self.take()
            if value in _FUNCS and self.peek() == ("op", "("):
                self.take()
                args = [self.expr()]
                while self.peek() == ("op", ","):
                    self.take()
                    args.append(self.expr())
                self.take("op", ")")
                return ("call", value, args)
            return ("sym", value)
        if (kind, value) == ("op", "("):
            self.take()
            node = self.expr()
            self.take("op", ")")
            return node
        raise ValueError(f"formula {self.text!r}: unexpected {value!r}")


def _eval(node, env):
    import math
    from fractions import Fraction

    kind = node[0]
    if kind == "num":
        return Fraction(node[1])
    if kind == "sym":
        if node[1] not in env:
            raise KeyError(f"formula needs a value for {node[1]!r}")
        return Fraction(env[node[1]])
    if kind == "neg":
        return -_eval(node[1], env)
    if kind == "call":
        args = [_eval(a, env) for a in node[2]]
        if node[1] == "floor":
            return Fraction(math.floor(args[0]))
        if node[1] == "ceil":
            return Fraction(math.ceil(args[0]))
        return min(args) if node[1] == "min" else max(args)
    a, b = _eval(node[1], env), _eval(node[2], env)
    if kind == "+":
        return a + b
    if kind == "-":
        return a - b
    if kind == "*":
        return a * b
    if kind == "/":
        return a / b
    return a ** int(b)


def _symbols(node, out):
    if node[0] == "sym":
        out.add(node[1])
    elif node[0] == "call":
        for a in node[2]:
            _symbols(a, out)
    elif node[0] in ("neg",):
        _symbols(node[1], out)
    elif node[0] != "num":
        _symbols(node[1], out)
        _symbols(node[2], out)


class Formula:
    """A count that depends on the model's dynamic dims. str() is the report's formula;
    calling it with every symbol bound gives the number: ``r.totals.macs(batch=8, seq=128)``."""

    __slots__ = ("text", "_tree")

    def __init__(self, text):
        self.text = text
        self._tree = _Parser(text).parse()

    @property
    def symbols(self):
        """The names the formula needs."""
        out = set()
        _symbols(self._tree, out)
        return out

    def __call__(self, bindings=None, **dims):
        env = dict(bindings or {})
        env.update(dims)
        v = _eval(self._tree, env)
        return int(v) if v.denominator == 1 else v

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"Formula({self.text!r})"

    def __eq__(self, other):
        return isinstance(other, Formula) and other.text == self.text

    def __hash__(self):
        return hash(self.text)


def count(value):
    """A JSON count as Python: int, Formula for a formula string, None for unknown."""
    if isinstance(value, str):
        return Formula(value)
    return value
