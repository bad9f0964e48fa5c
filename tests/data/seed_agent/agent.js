"use strict";
// El agent.js de la lección tal como lo muestra su texto (la Lección 6): saveCheckpoint,
// loadCheckpoint, los puntos A y B de runAgent, saveEffect y runToolUses, reconcile, main y el arnés de
// verificación (un cliente de cola fija y crashPoint con CRASH_AFTER). Es un dato de prueba: la suite
// de conformidad tiene que juzgarlo con justicia (tests/test_conformidad_comando.py).
//
// Lo que el texto deja afuera va aquí en su mínima expresión, y se dice dónde: loadEffects, las
// respuestas R1–R4 de la cola, las herramientas (toolImpls) y los cuatro tipos de caída. El texto no
// prepara sales-notes.txt (no hay prepareTaskFiles): lo deja en la carpeta quien corre el agente.

const fs = require("fs");

const CHECKPOINT_PATH = "checkpoint.json";
const EFFECTS_PATH = "effects.json";
const MAX_TURNS = 20; // el texto no da el número: el de la lección en Python
const READ_ONLY = new Set(["read_notes", "count_words"]);

// —— El arnés de verificación ——

class SimulatedCrash extends Error {}
const crashCounts = {};

// Los cuatro momentos de caída (after-save-a, after-tool, after-effect-write, after-save-b): el texto
// describe solo el del registro; los otros tres son los momentos ①②③ de su ejercicio de Nivel 1.
function crashPoint(kind) {
  crashCounts[kind] = (crashCounts[kind] || 0) + 1;
  const label = `${kind}:${crashCounts[kind]}`;
  if (label === process.env.CRASH_AFTER) throw new SimulatedCrash(`caída simulada en ${label}`);
}

// Una cola de respuestas: cada messages.create entrega la siguiente; vacía, lanza sin más.
function makeStubClient(queue) {
  const pending = [...queue];
  return {
    messages: {
      async create() {
        if (!pending.length) throw new Error("la cola de respuestas del stub se vació");
        return pending.shift();
      },
    },
  };
}

// Las respuestas de la cola (el texto no las muestra): una herramienta por turno.
const usage = { input_tokens: 10, output_tokens: 10 };
const toolUse = (id, name, input) => ({
  stop_reason: "tool_use", usage, content: [{ type: "tool_use", id, name, input }],
});
const REPORT = "Reporte de ventas\n\nFuente: sales-notes.txt (semana 47).\n";
const R1 = toolUse("toolu_01", "read_notes", { path: "sales-notes.txt" });
const R2 = toolUse("toolu_02", "count_words", { path: "sales-notes.txt" });
const R3 = toolUse("toolu_03", "write_report", { path: "report.txt", content: REPORT });
const R4 = {
  stop_reason: "end_turn", usage, content: [{ type: "text", text: "Reporte escrito en report.txt, tarea completa." }],
};

// Las herramientas (el texto no las muestra): write_report agrega el reporte al final del archivo.
const toolImpls = {
  read_notes: async ({ path }) => fs.readFileSync(path, "utf8"),
  count_words: async ({ path }) => `${path} tiene ${fs.readFileSync(path, "utf8").split(/\s+/).filter(Boolean).length} palabras`,
  write_report: async ({ path, content }) => {
    fs.appendFileSync(path, content);
    return `Reporte escrito en ${path} (${content.length} caracteres)`;
  },
};

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

// El texto no la muestra: sin registro, vacío; uno que no se lee lanza (nunca vacío a escondidas).
function loadEffects() {
  if (!fs.existsSync(EFFECTS_PATH)) return {};
  return JSON.parse(fs.readFileSync(EFFECTS_PATH, "utf8"));
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
      output = await toolImpls[block.name](block.input);
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
    try {
      saveEffect(block.id, { name: block.name, result: output, at: Date.now() });
    } catch (err) {
      console.error(`[falló la escritura del registro] tool_use_id=${block.id}: el efecto secundario ya ocurrió, riesgo de ejecución duplicada al reanudar, por favor revisa a mano`);
    }
    crashPoint("after-effect-write");
    results.push({ type: "tool_result", tool_use_id: block.id, content: output });
  }
  return results;
}

// —— reconcile ——

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
    const output = await toolImpls[pending.name](pending.input);
    saveEffect(pending.id, { name: pending.name, result: output, at: Date.now() });
    return { type: "tool_result", tool_use_id: pending.id, content: output };
  }

  console.log(`[resume][reconcile] tool_use_id=${pending.id} name=${pending.name} fallo en el registro con efectos secundarios, no resoluble, agregando is_error`);
  return {
    type: "tool_result", tool_use_id: pending.id, is_error: true,
    content: `Se desconoce el estado de ejecución previo a la reanudación de esta llamada a ${pending.name}: no hay anotación en el registro y, para evitar un efecto secundario duplicado, no se volvió a ejecutar. Por favor verifica por tu cuenta si se completó.`,
  };
}

// —— runAgent: los puntos A y B, y los dos caminos de entrada ——

async function startingScene(task, resume) {
  if (!resume) {
    fs.rmSync(CHECKPOINT_PATH, { force: true });
    fs.rmSync(EFFECTS_PATH, { force: true });
    return { turns: 0, tokensUsed: 0, messages: [{ role: "user", content: task }] };
  }
  const cp = loadCheckpoint();
  const { turns, tokensUsed, messages, pendingToolUse: pending } = cp;
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

async function runAgent(client, task, tools, opts) {
  let { turns, tokensUsed, messages } = await startingScene(task, opts.resume);
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
  const resume = process.argv.includes("--resume");
  const task = "Convierte sales-notes.txt en un reporte breve y escríbelo en report.txt.";
  const tools = [];

  const client = resume ? makeStubClient([R4]) : makeStubClient([R1, R2, R3]);

  try {
    const result = await runAgent(client, task, tools, { resume });
    console.log(`[done] ${result}`);
  } catch (err) {
    if (err instanceof SimulatedCrash) {
      console.log(`[kill] ${err.message}`);
      process.exit(137);
    }
    throw err;
  }
}

main();
