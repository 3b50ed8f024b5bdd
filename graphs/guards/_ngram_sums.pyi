from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

def window_sums(
    text: str,
    starts: Sequence[int],
    width: int,
    weights: NDArray[np.float32],
    multipliers: Sequence[int],
    mix: int,
    shift: int,
    /,
) -> list[float]: ...
