"use strict";
// El agent.js de la Lección 6, escrito desde el JavaScript de la lección: saveCheckpoint,
// loadCheckpoint, runAgent con los puntos A y B, saveEffect / loadEffects, runToolUses, reconcile y
// main. Con el contrato de solutions/agent.py (DESIGN.md), para que la suite de conformidad lo juzgue:
//
//   node agent.js                                   # corrida nueva (borra el estado de la anterior)
//   node agent.js --resume                          # retoma desde checkpoint.json
//   CRASH_AFTER=after-effect-write:3 node agent.js  # muere ahí, con código 137
//
// El directorio de trabajo es AGENT_WORKDIR (por omisión, el actual); un error esperado es una línea en
// stderr con código 1, y un argumento desconocido, una línea con código 2.

const fs = require("fs");
const { makeScriptedClient } = require("./scripted_model");
const { READ_ONLY, REASONS, runTool, prepareTaskFiles } = require("./tools");

const CHECKPOINT_PATH = "checkpoint.json";
const EFFECTS_PATH = "effects.json";
const TASK = "Convierte sales-notes.txt en un reporte breve y escríbelo en report.txt.";
const ASKED_TURNS = Number.parseInt(process.env.AGENT_MAX_TURNS || "", 10);
const MAX_TURNS = ASKED_TURNS > 0 ? ASKED_TURNS : 20;
const KINDS = ["after-save-a", "after-tool", "after-effect-write", "after-save-b"];
const USAGE = "uso: node agent.js [--resume]";

// —— El arnés de verificación: «morir después de la enésima X» como una etiqueta exacta ——

class SimulatedCrash extends Error {}
const crashCounts = {};

function crashPoint(kind) {
  crashCounts[kind] = (crashCounts[kind] || 0) + 1;
  const label = `${kind}:${crashCounts[kind]}`;
  if (label === process.env.CRASH_AFTER) throw new SimulatedCrash(`caída simulada en ${label}`);
}

function checkCrashAfter() {
  const label = process.env.CRASH_AFTER || "";
  const [kind, n] = label.split(":");
  if (label && (!KINDS.includes(kind) || !/^[1-9][0-9]*$/.test(n || ""))) {
    throw new Error(
      `CRASH_AFTER=${label} no es una etiqueta válida: usa <tipo>:<n> con n ≥ 1 y tipo uno de ${KINDS.join(", ")}.`,
    );
  }
}

// —— Leer y escribir puntos de control ——

function saveCheckpoint(cp) {
  const tmp = CHECKPOINT_PATH + ".tmp";
  fs.writeFileSync(tmp, JSON.stringify(cp, null, 2));
  fs.renameSync(tmp, CHECKPOINT_PATH);
}

function loadCheckpoint() {
  let raw;
  try {
    raw = fs.readFileSync(CHECKPOINT_PATH, "utf8");
  } catch {
    throw new Error(`No se encuentra ${CHECKPOINT_PATH}; no hay nada desde donde hacer --resume`);
  }
  let cp;
  try {
    cp = JSON.parse(raw);
  } catch {
    throw new Error(
      `No se pudo parsear ${CHECKPOINT_PATH}; puede que el archivo haya quedado interrumpido a mitad de escritura. Bórralo y empieza de nuevo sin --resume en vez de seguir usándolo: un punto de control escrito a medias no se puede adivinar de vuelta a su forma.`,
    );
  }
  if (cp.version !== 1) {
    throw new Error(`${CHECKPOINT_PATH} tiene version=${cp.version}; este programa solo acepta version=1 y se niega a cargarlo.`);
  }
  return cp;
}

// —— El registro de efectos ——

function loadEffects() {
  let raw;
  try {
    raw = fs.readFileSync(EFFECTS_PATH, "utf8");
  } catch (err) {
    if (err.code === "ENOENT") return {}; // nunca se ejecutó nada todavía
    throw err;
  }
  let effects;
  try {
    effects = JSON.parse(raw);
  } catch {
    effects = null;
  }
  if (!effects || typeof effects !== "object" || Array.isArray(effects)) {
    // Tratarlo como vacío volvería a ejecutar efectos secundarios que ya ocurrieron.
    throw new Error(
      `No se pudo parsear ${EFFECTS_PATH}; el registro de efectos está dañado y no se puede tratar como vacío sin arriesgar efectos secundarios duplicados. Revísalo a mano, o bórralo junto con ${CHECKPOINT_PATH} y empieza de nuevo sin --resume.`,
    );
  }
  return effects;
}

function saveEffect(toolUseId, entry) {
  const effects = loadEffects();
  effects[toolUseId] = entry;
  const tmp = EFFECTS_PATH + ".tmp";
  fs.writeFileSync(tmp, JSON.stringify(effects, null, 2));
  fs.renameSync(tmp, EFFECTS_PATH);
}

async function runToolUses(content) {
  const toolUseBlocks = content.filter((b) => b.type === "tool_use");
  const results = [];
  for (const block of toolUseBlocks) {
    let output;
    try {
      output = await runTool(block.name, block.input);
    } catch (err) {
      results.push({
        type: "tool_result", tool_use_id: block.id,
        content: `Error de ejecución de la herramienta: ${err.message}`, is_error: true,
      });
      continue;
    }
    crashPoint("after-tool");
    // El efecto secundario ya ocurrió: aunque la escritura del registro falle, no hay que mentir
    // con is_error (eso haría que el modelo reintente con un tool_use_id nuevo y provoque un
    // efecto secundario duplicado); solo alerta por separado para que lo maneje una persona
    let written = false;
    try {
      saveEffect(block.id, { name: block.name, result: output, at: Date.now() });
      written = true;
    } catch (err) {
      console.error(`[falló la escritura del registro] tool_use_id=${block.id}: el efecto secundario ya ocurrió, riesgo de ejecución duplicada al reanudar, por favor revisa a mano`);
    }
    if (written) crashPoint("after-effect-write");
    results.push({ type: "tool_result", tool_use_id: block.id, content: output });
  }
  return results;
}

// —— reconcile: la división en tres para una llamada colgante tras una caída ——

async function reconcile(cp) {
  const pending = cp.pendingToolUse;
  if (!pending) return null; // no hay llamada colgante, simplemente seguir

  const effects = loadEffects();
  const hit = effects[pending.id];

  if (hit) {
    console.log(`[resume][reconcile] tool_use_id=${pending.id} name=${pending.name} acierto en el registro, reutilizando resultado, sin volver a ejecutar`);
    return { type: "tool_result", tool_use_id: pending.id, content: hit.result };
  }

  if (READ_ONLY.has(pending.name)) {
    console.log(`[resume][reconcile] tool_use_id=${pending.id} name=${pending.name} fallo en el registro, herramienta de solo lectura, volviendo a ejecutar`);
    const output = await runTool(pending.name, pending.input);
    saveEffect(pending.id, { name: pending.name, result: output, at: Date.now() });
    return { type: "tool_result", tool_use_id: pending.id, content: output };
  }

  console.log(`[resume][reconcile] tool_use_id=${pending.id} name=${pending.name} fallo en el registro con efectos secundarios, no resoluble, agregando is_error`);
  return {
    type: "tool_result", tool_use_id: pending.id, is_error: true,
    content: `Se desconoce el estado de ejecución previo a la reanudación de esta llamada a ${pending.name}: no hay anotación en el registro y, para evitar un efecto secundario duplicado, no se volvió a ejecutar. Por favor verifica por tu cuenta si se completó.`,
  };
}

// —— runAgent: el bucle del Curso 7 con el punto A y el punto B ——

async function resumeScene(task) {
  const cp = loadCheckpoint();
  const { turns, tokensUsed, messages } = cp;
  const pending = cp.pendingToolUse;
  console.log(`[resume] leído turn=${turns} pending=${pending ? pending.name : "null"}`);
  const result = await reconcile(cp);
  if (result) {
    // El punto A se guardó antes de agregar el turno del asistente: se rehace desde pendingToolUse.
    messages.push({ role: "assistant", content: [{ type: "tool_use", ...pending }] });
    messages.push({ role: "user", content: [result] });
    saveCheckpoint({ version: 1, task, turns, tokensUsed, messages, pendingToolUse: null });
    console.log(`[turn ${turns}][save B] rellenado el resultado de herramienta de este turno tras reanudar`);
    crashPoint("after-save-b");
  }
  return { turns, tokensUsed, messages };
}

function freshScene(task) {
  for (const p of [CHECKPOINT_PATH, EFFECTS_PATH, CHECKPOINT_PATH + ".tmp", EFFECTS_PATH + ".tmp"]) {
    fs.rmSync(p, { force: true });
  }
  prepareTaskFiles();
  return { turns: 0, tokensUsed: 0, messages: [{ role: "user", content: task }] };
}

async function runAgent(client, task, tools, opts) {
  let { turns, tokensUsed, messages } = opts.resume ? await resumeScene(task) : freshScene(task);
  let response = await client.messages.create({ tools, messages });
  tokensUsed += response.usage.input_tokens + response.usage.output_tokens;

  while (response.stop_reason === "tool_use") {
    if (turns >= MAX_TURNS) return `Se alcanzó el máximo de ${MAX_TURNS} turnos, deteniéndonos por nuestra cuenta`;
    turns++;

    const toolUseBlock = response.content.find((b) => b.type === "tool_use");
    // —— Punto A: apenas obtenemos la respuesta del modelo, anota la llamada colgante de este turno ——
    saveCheckpoint({
      version: 1, task, turns, tokensUsed, messages,
      pendingToolUse: { id: toolUseBlock.id, name: toolUseBlock.name, input: toolUseBlock.input },
    });
    console.log(`[turn ${turns}][save A] pending=${toolUseBlock.name}`);
    crashPoint("after-save-a");

    messages.push({ role: "assistant", content: response.content });
    const toolResults = await runToolUses(response.content);
    messages.push({ role: "user", content: toolResults });

    // —— Punto B: los resultados de herramienta están en messages (el registro también en disco), llamada colgante limpiada ——
    saveCheckpoint({ version: 1, task, turns, tokensUsed, messages, pendingToolUse: null });
    console.log(`[turn ${turns}][save B]`);
    crashPoint("after-save-b");

    response = await client.messages.create({ tools, messages });
    tokensUsed += response.usage.input_tokens + response.usage.output_tokens;
  }
  return response.content.filter((b) => b.type === "text").map((b) => b.text).join("");
}

// —— El punto de entrada: --resume en main() ——

async function main() {
  const args = process.argv.slice(2);
  const unknown = args.filter((a) => a !== "--resume");
  if (unknown.length) {
    console.error(`Argumento desconocido: ${[...new Set(unknown)].sort().join(" ")}. ${USAGE}`);
    return 2;
  }
  const resume = args.includes("--resume");
  const tools = [];
  const client = makeScriptedClient();

  try {
    process.chdir(process.env.AGENT_WORKDIR || ".");
    checkCrashAfter();
    const result = await runAgent(client, TASK, tools, { resume });
    console.log(`[done] ${result}`);
    return 0;
  } catch (err) {
    if (err instanceof SimulatedCrash) {
      console.log(`[kill] ${err.message}`);
      return 137;
    }
    console.error(failureLine(err)); // un error esperado: una línea en español, sin traza
    return 1;
  }
}

// Un error del sistema de archivos de Node (con code y syscall) viene en inglés: se dice en español.
const ACTIONS = { open: "abrir", rename: "renombrar", rm: "borrar", unlink: "borrar", write: "escribir en", read: "leer", copyfile: "copiar" };

function failureLine(err) {
  if (!err.code || !err.syscall) return err.message;
  const reason = REASONS[err.code] || `error del sistema ${err.code}`;
  return `No se pudo ${ACTIONS[err.syscall] || err.syscall} ${err.path || ""}: ${reason}. Se detuvo ahí: cuando se resuelva, retoma con --resume (o vuelve a empezar sin él si no había punto de control).`;
}

main().then((code) => {
  process.exitCode = code;
});
