"""The exceptions of flopwise: one per class of the CLI's exit codes (docs/errors.md: Exit codes)."""


class FlopwiseError(ValueError):
    """A model, an option or a command that flopwise refuses; the message is the CLI's one line."""

    exit_code = 2


class InputError(FlopwiseError):
    """The model file cannot be used: missing, unreadable, not a model, truncated, malformed (exit 2)."""


class UsageError(FlopwiseError):
    """An option's value is wrong (exit 2)."""


class ShapeError(FlopwiseError):
    """A shape contradiction provable from the model (exit 2)."""


class StrictError(FlopwiseError):
    """--strict: an op is unsupported or a cost unknown (exit 3)."""

    exit_code = 3


class RunError(FlopwiseError):
    """flopwise run: no runtime harness (exit 4), the run failed (5), or --verify disagreed (6)."""


class InternalError(RuntimeError):
    """A bug in flopwise (exit 70, or the CLI died of a signal): never the input's fault."""
