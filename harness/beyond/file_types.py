"""Los tipos de los archivos del agente (``checkpoint.json``, ``effects.json``), como ``TypedDict``: la
forma que documentan DESIGN.md y la lección, para quien la quiere tipada (el agente de lotes, el modelo
de costos). Las claves salen de ``harness.contract``; aquí solo sus tipos.
"""

from typing import Literal, TypedDict

from harness.contract import CHECKPOINT_KEYS


class ToolCall(TypedDict):
    """La llamada colgante: el bloque tool_use tal como lo pidió el modelo."""

    id: str
    name: str
    input: dict


# ``checkpoint.json`` (version 1): las claves de la lección, en su orden, tomadas del contrato (por eso
# la forma funcional: con la de clase, las claves se escribirían dos veces).
Checkpoint = TypedDict(  # noqa: UP013
    "Checkpoint", dict(zip(CHECKPOINT_KEYS, (Literal[1], str, int, int, list, ToolCall | None), strict=True))
)


class BatchCheckpoint(TypedDict):
    """``checkpoint.json`` del agente de lotes (version 2): una lista de llamadas colgantes."""

    version: Literal[2]
    task: str
    turns: int
    tokensUsed: int  # noqa: N815
    messages: list
    pendingToolUse: list[ToolCall]  # noqa: N815


class LedgerEntry(TypedDict):
    """Una anotación de ``effects.json``, bajo su tool_use_id: ``at`` en ms desde la época."""

    name: str
    result: str
    at: int
