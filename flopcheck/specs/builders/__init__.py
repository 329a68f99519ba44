"""One builder per model source, `(spec, device, notes) -> Built`, each with its own input convention; SOURCES (in
flopcheck.specs) names each as 'module:function', imported only in the child that builds it. What the image sources
share: the default input and an image's shape from the options."""

from __future__ import annotations

from flopcheck.specs import Options

DEFAULT_SHAPE = (1, 3, 224, 224)  # a factory's model with no inputs given: one ImageNet image


def image_shape(default: tuple[int, ...], o: Options) -> tuple[int, ...]:
    """(B, C, H, W): the model's default, its batch and resolution replaced by the options'; or the input shape."""
    if o.input_shape:
        return tuple(o.input_shape)
    shape = (o.batch, *default[1:])
    if o.resolution:
        shape = (*shape[:-2], o.resolution[1], o.resolution[0])
    return shape
