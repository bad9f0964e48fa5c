"use strict";
// Las herramientas de la tarea, como harness/tools.py: read_notes, count_words y check_report solo
// leen; write_report agrega el reporte al final de report.txt (una segunda ejecución se ve).

const fs = require("fs");
const path = require("path");

const NOTES_PATH = "sales-notes.txt";
const REPORT_PATH = "report.txt";
const REPORT_TITLE = "# Reporte de ventas";
const REPORT_MISSING = "el reporte no se escribió";
const REPORT_DAMAGED = "el reporte está dañado";
const READ_ONLY = new Set(["read_notes", "count_words", "check_report"]);
// Las notas de ventas del paquete harness: una sola copia en el repositorio.
const NOTES_SOURCE = path.join(__dirname, "..", "..", "..", "harness", "data", NOTES_PATH);

const REASONS = {
  ENOENT: "no existe", EISDIR: "es un directorio", ERR_FS_EISDIR: "es un directorio", ENOTDIR: "no es un directorio", EACCES: "sin permiso",
  EPERM: "operación no permitida", ENOSPC: "el disco está lleno", EIO: "error de entrada/salida del disco",
  EROFS: "el sistema de archivos es de solo lectura",
};

function toolPath(input) {
  const raw = input && input.path;
  if (typeof raw !== "string" || !raw) throw new Error("falta el argumento «path» (texto no vacío)");
  const root = path.resolve(".");
  const full = path.resolve(root, raw);
  if (full !== root && !full.startsWith(root + path.sep)) {
    throw new Error(`la ruta ${raw} queda fuera del directorio de trabajo`);
  }
  return full;
}

function readText(input) {
  const full = toolPath(input);
  try {
    return fs.readFileSync(full, "utf8");
  } catch (err) {
    if (err.code === "ENOENT") throw new Error(`no existe el archivo ${input.path}`);
    throw new Error(`no se pudo leer ${input.path}: ${REASONS[err.code] || "error del sistema"}`);
  }
}

function reportDamage(text) {
  if (text.includes("\0")) return "tiene bytes nulos";
  for (const copy of text.split(REPORT_TITLE).slice(1)) {
    const lines = copy.split("\n");
    const counted = lines.filter((l) => l.startsWith("Clientes con novedades: "));
    const listed = lines.filter((l) => l.startsWith("- ")).length;
    if (!copy.endsWith("\n") || (counted.length && counted[0] !== `Clientes con novedades: ${listed}.`)) {
      return "una copia está cortada";
    }
  }
  return null;
}

const toolImpls = {
  read_notes: (input) => readText(input),
  count_words: (input) => `${input.path} tiene ${readText(input).split(/\s+/).filter(Boolean).length} palabras`,
  write_report: (input) => {
    const full = toolPath(input);
    if (typeof input.content !== "string" || !input.content) {
      throw new Error("falta el argumento «content» (texto no vacío)");
    }
    try {
      fs.appendFileSync(full, input.content);
    } catch (err) {
      throw new Error(`no se pudo escribir en ${input.path}: ${REASONS[err.code] || "error del sistema"}`);
    }
    return `Reporte escrito en ${input.path} (${[...input.content].length} caracteres)`;
  },
  check_report: (input) => {
    let text;
    try {
      text = fs.readFileSync(toolPath(input), "utf8");
    } catch (err) {
      if (err.code === "ENOENT") return `${input.path} no existe: ${REPORT_MISSING}`;
      throw new Error(`no se pudo leer ${input.path}: ${REASONS[err.code] || "error del sistema"}`);
    }
    const damage = reportDamage(text);
    if (damage) return `${input.path} existe pero ${damage}: ${REPORT_DAMAGED}`;
    const copies = text.split(REPORT_TITLE).length - 1;
    if (copies === 0) return `${input.path} existe pero no contiene el reporte: ${REPORT_MISSING}`;
    return `${input.path} existe y contiene el reporte ${copies} ${copies === 1 ? "vez" : "veces"}`;
  },
};

function runTool(name, input) {
  if (!Object.hasOwn(toolImpls, name)) throw new Error(`no existe la herramienta ${name}`);
  return toolImpls[name](input);
}

// Una corrida nueva: sin reporte viejo, con las notas de ventas.
function prepareTaskFiles() {
  fs.rmSync(REPORT_PATH, { force: true });
  if (!fs.existsSync(NOTES_PATH)) fs.copyFileSync(NOTES_SOURCE, NOTES_PATH);
}

module.exports = {
  NOTES_PATH, REPORT_PATH, REPORT_TITLE, REPORT_MISSING, REPORT_DAMAGED, READ_ONLY, REASONS, runTool, prepareTaskFiles,
};
