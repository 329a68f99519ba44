"""An adapter that raises, as libraries do on models they cannot trace."""


def run(model, inputs):
    raise RuntimeError("cannot trace this model\nsecond line of a long traceback")
