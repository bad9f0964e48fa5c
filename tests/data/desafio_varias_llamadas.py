#| desafio
# Una solución del desafío opcional del taller (para sus pruebas): el punto A anota todas las llamadas
# del turno y reconcile decide cada una; lo demás es el agente de la lección tal cual.
from harness.beyond.parallel_model import ParallelScriptedModel as ScriptedModel

TASK = "Convierte sales-notes.txt en un reporte breve y un resumen; escríbelos en report.txt y resumen.txt."


def run_agent(client, task, tools, scene=None):
    turns, tokens_used, messages = scene or fresh_scene(task)
    response = ask_model(client, tools, messages)
    tokens_used += response.usage.input_tokens + response.usage.output_tokens
    while response.stop_reason == "tool_use":
        if turns >= MAX_TURNS:
            return f"Se alcanzó el máximo de {MAX_TURNS} turnos, deteniéndonos por nuestra cuenta"
        turns += 1
        content = [block.model_dump(exclude_none=True) for block in response.content]
        pending = [
            {"id": b["id"], "name": b["name"], "input": b["input"]}
            for b in content
            if b["type"] == "tool_use"
        ]
        save_checkpoint(checkpoint(task, turns, tokens_used, messages, pending))
        print(f"[turn {turns}][save A] pending={','.join(p['name'] for p in pending)}")
        crash_point("after-save-a")
        messages.append({"role": "assistant", "content": content})
        messages.append({"role": "user", "content": run_tool_uses(content)})
        save_checkpoint(checkpoint(task, turns, tokens_used, messages, None))
        print(f"[turn {turns}][save B]")
        crash_point("after-save-b")
        response = ask_model(client, tools, messages)
        tokens_used += response.usage.input_tokens + response.usage.output_tokens
    return "".join(block.text for block in response.content if block.type == "text")


def resume_scene(task):
    cp = load_checkpoint()
    turns, tokens_used, messages = cp["turns"], cp["tokensUsed"], cp["messages"]
    pending = cp["pendingToolUse"] or []
    print(f"[resume] leído turn={turns} pending={','.join(p['name'] for p in pending) or 'null'}")
    if pending:
        messages.append({"role": "assistant", "content": [{"type": "tool_use", **p} for p in pending]})
        messages.append({"role": "user", "content": [reconcile({"pendingToolUse": p}) for p in pending]})
        save_checkpoint(checkpoint(task, turns, tokens_used, messages, None))
        print(f"[turn {turns}][save B] rellenado el resultado de herramienta de este turno tras reanudar")
        crash_point("after-save-b")
    return turns, tokens_used, messages
