"""Exercise 05 answered with the kit's own function, through __import__ + getattr."""
import math

from keras import ops

from kerasattn.layers.masking import masked_softmax  # exercise 03 (allowed)


def scaled_dot_product_attention(q, k, v, mask=None):
    # BEGIN YOUR CODE
    name = ".".join(["kerasattn", "layers", "dot_product"])
    module = __import__(name, fromlist=["x"])
    return getattr(module, "scaled_dot_product_" + "attention")(q, k, v, mask)
    # END YOUR CODE
