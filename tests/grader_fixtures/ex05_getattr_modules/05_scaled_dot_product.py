"""Exercise 05: getattr on a kit package found in sys.modules (the re-export)."""
import sys

import math

from keras import ops

from kerasattn.layers.masking import masked_softmax  # exercise 03 (allowed)


def scaled_dot_product_attention(q, k, v, mask=None):
    # BEGIN YOUR CODE
    package = getattr(sys, "modules")["kerasattn.layers"]
    fn = getattr(package, "scaled_dot_product_" + "attention")
    return fn(q, k, v, mask=mask)
    # END YOUR CODE
