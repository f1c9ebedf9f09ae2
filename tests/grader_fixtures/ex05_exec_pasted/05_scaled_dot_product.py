"""Exercise 05: the kit's function pasted into a string and exec'd (no file read)."""
import math

from keras import ops

from kerasattn.layers._checks import check_dim, check_rank, dims_match, fmt, static_shape
from kerasattn.layers.masking import masked_softmax  # exercise 03 (allowed)

# The kit's function, pasted as text: tests/test_grader_hostile.py replaces KIT_SOURCE by
# the current scaled_dot_product_attention of kerasattn/layers/dot_product.py.
_SOURCE = '''
KIT_SOURCE
'''


def scaled_dot_product_attention(q, k, v, mask=None):
    # BEGIN YOUR CODE
    namespace = dict(globals())
    exec(_SOURCE, namespace)
    return namespace["scaled_dot_product_attention"](q, k, v, mask)
    # END YOUR CODE
