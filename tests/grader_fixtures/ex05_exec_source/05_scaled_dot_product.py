"""Exercise 05: exec of the kit module's source, obtained with inspect.getsource."""
import inspect
import sys

import math

from keras import ops

from kerasattn.layers.masking import masked_softmax  # exercise 03 (allowed)


def scaled_dot_product_attention(q, k, v, mask=None):
    # BEGIN YOUR CODE
    source = inspect.getsource(sys.modules["kerasattn.layers.dot_" + "product"])
    namespace = {}
    exec(source, namespace)
    return namespace["scaled_dot_product_attention"](q, k, v, mask)
    # END YOUR CODE
