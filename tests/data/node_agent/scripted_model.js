"use strict";
// El modelo guionado, como harness/scripted_model.py: la respuesta se elige leyendo la conversación
// recibida (no de una cola en memoria), así que un proceso nuevo que reanuda recibe la que corresponde.
// toolu_01 read_notes → toolu_02 count_words → toolu_03 write_report → texto final; tras un is_error de
// write_report, verifica con check_report; tras uno de solo lectura, la llama otra vez (hasta 3 fallas).

const { NOTES_PATH, REPORT_PATH, REPORT_TITLE, REPORT_MISSING, REPORT_DAMAGED, READ_ONLY } = require("./tools");

const FINAL_TEXT = "Reporte escrito en report.txt, tarea completa.";
const VERIFIED_TEXT = "Verifiqué report.txt: el reporte ya estaba escrito, no lo repito. Tarea completa.";
const DAMAGED_TEXT =
  "report.txt existe pero está dañado; no escribo encima para no esconder el daño. Revísalo a mano " +
  "(o bórralo) antes de volver a pedírmelo.";
const READ_ATTEMPTS = 3;
const MAX_CALLS = 24;

class ScriptError extends Error {}

const blocks = (messages, type) =>
  messages.flatMap((m) => (Array.isArray(m.content) ? m.content : [])).filter((b) => b && b.type === type);
const text = (content) => (typeof content === "string" ? content : content.map((b) => b.text || "").join(""));

function toolUses(messages) {
  const uses = {};
  for (const b of blocks(messages.filter((m) => m.role === "assistant"), "tool_use")) uses[b.id] = b;
  return uses;
}

function results(messages) {
  const found = {};
  for (const b of blocks(messages, "tool_result")) found[b.tool_use_id] = b;
  return found;
}

// El error que la API devolvería (400): roles que no se alternan, o un tool_use sin su tool_result.
function pairingError(messages) {
  for (let i = 0; i < messages.length; i++) {
    if (messages[i].role !== (i % 2 === 0 ? "user" : "assistant")) return "los roles no se alternan";
    const uses = blocks([messages[i]], "tool_use").map((b) => b.id);
    const next = i + 1 < messages.length ? blocks([messages[i + 1]], "tool_result").map((b) => b.tool_use_id) : [];
    const missing = uses.filter((id) => !next.includes(id));
    if (missing.length) return `tool_use sin tool_result inmediatamente después: ${missing.join(", ")}`;
    const previous = i ? blocks([messages[i - 1]], "tool_use").map((b) => b.id) : [];
    const stray = blocks([messages[i]], "tool_result").filter((b) => !previous.includes(b.tool_use_id));
    if (stray.length) return `tool_result sin su tool_use en el mensaje anterior: ${stray[0].tool_use_id}`;
  }
  return null;
}

function writeInput(messages) {
  const uses = toolUses(messages);
  const ok = {};
  for (const [id, r] of Object.entries(results(messages))) if (!r.is_error) ok[uses[id].name] = text(r.content);
  const clients = ok.read_notes
    .split("\n")
    .filter((line) => line.startsWith("- "))
    .map((line) => line.slice(2).split(":")[0]);
  const lines = [REPORT_TITLE, "", `Fuente: ${ok.count_words}.`, `Clientes con novedades: ${clients.length}.`];
  return { path: REPORT_PATH, content: [...lines, ...clients.map((c) => `- ${c}`)].join("\n") + "\n" };
}

function readAgain(messages, uses, result) {
  const call = uses[result.tool_use_id];
  let failures = 0;
  for (const message of messages.filter((m) => m.role === "user").reverse()) {
    const last = Object.values(results([message])).pop();
    if (!last || !last.is_error || uses[last.tool_use_id].name !== call.name) break;
    failures++;
  }
  if (failures < READ_ATTEMPTS) return [call.name, call.input];
  return [
    null,
    `No pude completar la tarea: ${call.name} falló ${failures} veces seguidas (${text(result.content || "")}). ` +
      "No escribí nada más; cuando se resuelva, vuelve a empezar la tarea.",
  ];
}

function nextStep(messages) {
  if (messages.some((m) => m.role === "assistant" && !Object.keys(toolUses([m])).length)) {
    throw new ScriptError("el guion se terminó: la conversación ya tiene la respuesta final");
  }
  let content = messages[messages.length - 1].content;
  if (typeof content === "string") {
    if (messages.length === 1) return ["read_notes", { path: NOTES_PATH }];
    content = [];
  }
  const result = [...content].reverse().find((b) => b.type === "tool_result");
  if (!result) throw new ScriptError("el último mensaje no trae ningún tool_result");
  const uses = toolUses(messages);
  const name = uses[result.tool_use_id].name;
  const ok = !result.is_error;
  if (!ok && READ_ONLY.has(name)) return readAgain(messages, uses, result);
  if (name === "read_notes" && ok) return ["count_words", { path: NOTES_PATH }];
  if (name === "count_words" && ok) return ["write_report", writeInput(messages)];
  if (name === "write_report") return ok ? [null, FINAL_TEXT] : ["check_report", { path: REPORT_PATH }];
  if (name === "check_report" && ok) {
    if (text(result.content).includes(REPORT_DAMAGED)) return [null, DAMAGED_TEXT];
    if (text(result.content).includes(REPORT_MISSING)) return ["write_report", writeInput(messages)];
    return [null, VERIFIED_TEXT];
  }
  throw new ScriptError(`no hay respuesta guionada para un tool_result de ${name}`);
}

// Un cliente con la forma de new Anthropic(): client.messages.create({ model, max_tokens, tools, messages }).
function makeScriptedClient() {
  return {
    messages: {
      async create({ messages }) {
        const error = pairingError(messages);
        if (error) throw new ScriptError(`la API rechazaría esta conversación (400): ${error}`);
        const calls = Object.keys(toolUses(messages)).length;
        if (calls >= MAX_CALLS) throw new ScriptError(`el guion se terminó: ya hubo ${calls} llamadas a herramientas`);
        let step;
        try {
          step = nextStep(messages);
        } catch (err) {
          if (err instanceof ScriptError) throw err;
          throw new ScriptError(`la conversación recibida no sigue el guion (${err.message})`);
        }
        const [name, value] = step;
        const usage = { input_tokens: 120 + 60 * messages.length, output_tokens: name ? 40 : 20 };
        const id = `msg_guion_${String(calls + 1).padStart(2, "0")}`;
        if (name === null) {
          return { id, role: "assistant", content: [{ type: "text", text: value }], stop_reason: "end_turn", usage };
        }
        const block = { type: "tool_use", id: `toolu_${String(calls + 1).padStart(2, "0")}`, name, input: value };
        return { id, role: "assistant", content: [block], stop_reason: "tool_use", usage };
      },
    },
  };
}

module.exports = { makeScriptedClient, FINAL_TEXT, VERIFIED_TEXT };
