"""Exercise 05: the kit's function through builtins.__import__, bound at import time."""
import builtins

import math

from keras import ops

from kerasattn.layers.masking import masked_softmax  # exercise 03 (allowed)

_kit = builtins.__import__("kerasattn." + "layers", fromlist=["*"])
scaled_dot_product_attention = getattr(_kit, "scaled_dot_product_" + "attention")
