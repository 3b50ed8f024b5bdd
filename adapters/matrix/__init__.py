"""The Matrix edge: translates between a Matrix homeserver (matrix-nio, with end-to-end
encryption through vodozemac) and the `Bot` service; it holds no business rule.
`MatrixEdge(config, ledger).running(bot)`."""

from adapters.matrix.config import MatrixConfig
from adapters.matrix.edge import MatrixEdge, RunningMatrix

__all__ = ["MatrixConfig", "MatrixEdge", "RunningMatrix"]
