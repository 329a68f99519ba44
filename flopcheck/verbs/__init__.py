"""The verbs, one module each: count, compare, reconcile, audit, estimate, report, causes and list-models.

Each module's `run(...)` takes subjects (flopcheck.subject; audit: claims, each carrying its subject) and options,
makes every check the verb needs, and returns a result that carries its value and its exit code and renders itself.
The command line (flopcheck.cli) and the Python API (flopcheck.api) are doors onto these functions: neither makes a
check of its own, so neither can skip one the other makes.
"""
