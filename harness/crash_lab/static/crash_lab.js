// La página del laboratorio de caídas (anywidget). El kernel arma todo el contenido («view»); la página
// solo lo pone en su lugar y manda cada clic. En cuanto se pulsa un control, la página se bloquea hasta
// que llega la pantalla nueva: un doble clic, o un clic mientras corre el agente, no manda nada más.
//
// Teclado: las teclas sin Ctrl ni Cmd pulsadas dentro del laboratorio son suyas (JupyterLab y Notebook 7
// no las ven como atajos: «a», «b» o «d d» no tocan las celdas); las combinaciones con Ctrl o Cmd
// (guardar, la paleta de comandos, el panel lateral, deshacer) y Mayús+Enter o Alt+Enter (ejecutar la
// celda) siguen hasta el notebook, y nunca pulsan el botón con foco. El dibujo es una sola parada del
// tabulador y las flechas mueven el foco entre huecos (izquierda y derecha en un turno, arriba y abajo
// entre turnos); cuando llega la pantalla nueva, el foco vuelve al control que actuó o, si se apagó, al
// siguiente control activo (la regla que cuenta la ayuda del laboratorio). Un clic con el ratón en un
// botón o un hueco deja el foco en la celda, como cualquier clic en una salida: Enter y Mayús+Enter
// hacen entonces lo de siempre en JupyterLab (editar, ejecutar), no pulsan otra vez el botón.

const BUTTONS = [
  ["run", "Ejecutar", "cl-primary"],
  ["resume", "Reanudar", "cl-resume-btn"],
  ["reset", "Reiniciar", ""],
  ["cut", "Cortar checkpoint.json", ""],
];
const OFFLINE =
  "Este es el último estado guardado del laboratorio: ejecuta esta celda para usarlo (si el kernel está " +
  "ocupado con otra celda, los controles se encienden cuando termine).";

// Las teclas que son del notebook: las combinaciones con Ctrl o Cmd (Meta), y Enter con Mayús o Alt
// (ejecutar la celda, como en cualquier parte del notebook).
const forNotebook = (event) =>
  event.ctrlKey || event.metaKey || (event.key === "Enter" && (event.shiftKey || event.altKey));
const SUPPRESS = "data-lm-suppress-shortcuts";
const KEYS_READY = Symbol.for("crash-lab-keys");

// Lumino (JupyterLab, Notebook 7) busca el atajo de una tecla subiendo desde el elemento con foco y se
// detiene en el primero que lleva data-lm-suppress-shortcuts. Notebook 7 la atiende en la fase de
// captura, antes que cualquier oyente del laboratorio: por eso un oyente en window (el primero de esa
// fase) pone o quita el atributo en el control, tecla por tecla, antes de que Lumino la vea.
function markKey(event) {
  const node = event.target;
  if (!(node instanceof Element) || !node.closest(".cl-root")) return;
  if (forNotebook(event)) node.removeAttribute(SUPPRESS);
  else node.setAttribute(SUPPRESS, "true");
}

function listenForKeys() {
  if (window[KEYS_READY]) return; // uno por página, aunque haya varios laboratorios
  window[KEYS_READY] = true;
  window.addEventListener("keydown", markKey, true);
  window.addEventListener("keyup", markKey, true);
}

// El dibujo cabe en el ancho que le da el notebook, con su letra entera (nunca se achica): cuatro pasos
// por línea si caben, si no dos, si no uno; el nombre del turno a la izquierda si cabe, si no encima.
// Las medidas vienen en el SVG (picture.py); se mueve cada paso entero (caja, flecha, marca y hueco).
const LAYOUTS = [[4, true], [2, true], [2, false], [1, true], [1, false]];
const NAME_H = 24; // la línea del nombre del turno cuando va encima de sus pasos
const TURN_GAP = 12; // el aire entre dos turnos que ocupan más de una línea

function fit(svg, room) {
  if (!svg || !svg.dataset.cell) return;
  const [cell, row, left, top] = ["cell", "row", "left", "top"].map((key) => Number(svg.dataset[key]));
  const turns = [...svg.querySelectorAll(".cl-turn")];
  const steps = turns.length ? turns[0].querySelectorAll(".cl-cell").length : 0;
  const [cols, aside] =
    LAYOUTS.find(([n, side]) => (side ? left : 0) + n * cell <= room) || LAYOUTS[LAYOUTS.length - 1];
  const x0 = aside ? left : 0;
  const lines = Math.ceil(steps / cols);
  const gap = lines > 1 ? TURN_GAP : 0;
  let y = top;
  for (const turn of turns) {
    const name = turn.querySelector(".cl-name");
    const [number, tool] = name.querySelectorAll("text");
    name.setAttribute("transform", `translate(0 ${y})`);
    number.setAttribute("y", aside ? 22 : 17);
    tool.setAttribute("y", aside ? 41 : 17);
    tool.setAttribute("x", aside ? 2 : 2 + number.getComputedTextLength() + 8);
    if (!aside) y += NAME_H;
    turn.querySelectorAll(".cl-cell").forEach((node, i) => {
      const [x, line] = [x0 + (i % cols) * cell, y + Math.floor(i / cols) * row];
      node.setAttribute("transform", `translate(${x} ${line})`);
    });
    y += lines * row + gap;
  }
  const [width, height] = [x0 + cols * cell, y - gap];
  svg.setAttribute("width", width);
  svg.setAttribute("height", height);
  svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
}

function make(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text) node.textContent = text;
  return node;
}

function build(el, uid) {
  const root = make("div", { class: "cl-root", "data-ticket": "" });
  root.append(make("h3", { class: "cl-title" }, "Laboratorio de caídas"));
  const offline = root.appendChild(make("p", { class: "cl-offline", role: "status" }));
  const header = root.appendChild(make("p", { class: "cl-header" }));
  const controls = root.appendChild(make("div", { class: "cl-controls" }));
  const variants = controls.appendChild(make("fieldset", { class: "cl-variants" }));
  variants.append(make("legend", {}, "Variante"));
  const pointLabel = controls.appendChild(make("label", { class: "cl-point" }, "Caída en"));
  const select = pointLabel.appendChild(make("select", { "aria-describedby": `${uid}-run-reason` }));
  const picture = root.appendChild(make("div", { class: "cl-picture" }));
  const story = root.appendChild(make("p", { class: "cl-story" }));
  const legend = root.appendChild(make("p", { class: "cl-legend cl-muted" }));
  const bar = root.appendChild(make("div", { class: "cl-buttons" }));
  const buttons = {};
  for (const [action, text, cls] of BUTTONS) {
    buttons[action] = bar.appendChild(make("button", { type: "button", class: `cl-btn ${cls}` }, text));
    buttons[action].dataset.action = action;
  }
  // Cada razón describe solo al control que apaga: la de Ejecutar (la caída elegida no existe en esta
  // variante) al menú y a Ejecutar; la de Reanudar, solo a Reanudar.
  const reason = root.appendChild(make("p", { class: "cl-reason" }));
  const runReason = reason.appendChild(make("span", { id: `${uid}-run-reason` }));
  const resumeReason = reason.appendChild(make("span", { id: `${uid}-resume-reason` }));
  buttons.run.setAttribute("aria-describedby", `${uid}-run-reason`);
  buttons.resume.setAttribute("aria-describedby", `${uid}-resume-reason`);
  const status = root.appendChild(make("div", { class: "cl-status", role: "status", "aria-live": "polite" }));
  const panels = root.appendChild(make("div", { class: "cl-panels" }));
  const log = panels.appendChild(make("section", { class: "cl-logpanel", "aria-label": "Log" }));
  const disk = panels.appendChild(make("section", { class: "cl-diskpanel", "aria-label": "En disco" }));
  const details = root.appendChild(make("details", { class: "cl-historybox cl-fold", open: "" }));
  details.append(make("summary", {}, "Historia de pasos"));
  const history = details.appendChild(make("div", { class: "cl-historypanel" }));
  const helpBox = root.appendChild(make("details", { class: "cl-helpbox cl-fold" }));
  helpBox.append(make("summary", {}, "Ayuda: teclado y foco"));
  const help = helpBox.appendChild(make("p", { class: "cl-help" }));
  el.append(root);
  return {
    root, offline, header, variants, select, picture, story, legend, buttons, runReason, resumeReason,
    status, log, disk, history, help,
  };
}

// Un notebook guardado guarda el estado de cada laboratorio en sus metadatos (lo que hace JupyterLab con
// «Save Widget State Automatically», que viene apagado): abierto otra vez sin este kernel, el widget
// se dibuja con su último estado en vez de «Error displaying widget: model not found». Solo los
// laboratorios que una salida muestra ahora (el de una celda vuelta a correr, o uno que nunca se mostró,
// no): con esa opción encendida, JupyterLab guarda todos los modelos vivos. El estado de los demás
// widgets queda como lo deje JupyterLab.
const WIDGET_STATE = "application/vnd.jupyter.widget-state+json";
// Cuántas vistas dibujadas tiene cada laboratorio (por el id de su modelo), en toda la página: cada
// vista suma una al dibujarse y la resta al quitarse (su salida se borró, la celda volvió a correr).
const SHOWN = Symbol.for("crash-lab-shown");
const shownViews = () => (window[SHOWN] ??= new Map());

function countView(id, step) {
  const views = shownViews();
  const count = (views.get(id) || 0) + step;
  if (count > 0) views.set(id, count);
  else views.delete(id);
}
const isLab = (entry) => Boolean(entry && entry.state && entry.state.view && "ticket" in entry.state.view);
const refs = (entry) =>
  Object.values(entry.state)
    .filter((value) => typeof value === "string" && value.startsWith("IPY_MODEL_"))
    .map((value) => value.slice("IPY_MODEL_".length));

function keepStateOnSave(manager) {
  const context = manager && manager.context;
  if (!context || !context.saveState || typeof manager.get_state_sync !== "function") return;
  if (context.clKeepsLabState) return; // una sola conexión por notebook
  context.clKeepsLabState = true;
  context.saveState.connect((_, phase) => {
    if (phase !== "started") return;
    const notebook = context.model;
    const read = () => (notebook.getMetadata ? notebook.getMetadata("widgets") : notebook.metadata.get("widgets"));
    const saved = (read() || {})[WIDGET_STATE] || { version_major: 2, version_minor: 0, state: {} };
    const live = manager.get_state_sync({ drop_defaults: true }).state || {};
    // Los laboratorios guardados antes (y los modelos que nombran) se reemplazan por los de ahora.
    const old = Object.entries(saved.state || {}).filter(([, entry]) => isLab(entry));
    const stale = new Set(old.flatMap(([id, entry]) => [id, ...refs(entry)]));
    const state = Object.fromEntries(Object.entries(saved.state || {}).filter(([id]) => !stale.has(id)));
    for (const [id, entry] of Object.entries(live)) {
      if (!isLab(entry) || !shownViews().has(id)) continue; // solo los que una salida muestra
      state[id] = entry;
      // Y los modelos que nombra (su «layout»): sin ellos el laboratorio no se puede rehacer.
      for (const ref of refs(entry)) if (live[ref]) state[ref] = live[ref];
    }
    const widgets = { [WIDGET_STATE]: { ...saved, state } };
    if (notebook.setMetadata) notebook.setMetadata("widgets", widgets);
    else notebook.metadata.set("widgets", widgets);
  });
}

function render({ model, el }) {
  const uid = `cl-${Math.random().toString(36).slice(2)}`;
  const ui = build(el, uid);
  let locked = false;
  let acting = null; // el control que mandó el último pedido: recibe el foco con la pantalla nueva
  let live = false; // llegó al menos una pantalla del kernel a esta vista
  let room = -1; // el ancho que tenía el dibujo la última vez que se acomodó

  function controls() {
    return [...Object.values(ui.buttons), ui.select, ...ui.variants.querySelectorAll("input")];
  }

  function gaps() {
    return [...ui.picture.querySelectorAll("[data-label]")];
  }

  function lock() {
    locked = true;
    ui.root.classList.add("cl-busy");
    ui.root.setAttribute("aria-busy", "true");
    for (const control of controls()) control.disabled = true;
  }

  function send(message, from) {
    if (locked) return; // un clic repetido, o uno mientras corre el agente: la página lo ignora
    acting = from.pointer ? null : from;
    lock();
    if (from.pointer) toCell();
    if (message.action !== "choose") ui.status.textContent = "Corriendo el agente en un proceso aparte…";
    model.send({ ...message, ticket: model.get("view").ticket });
  }

  function choose(label, variant, from) {
    const view = model.get("view");
    send({ action: "choose", label: label ?? view.label, variant: variant ?? view.variant }, from);
  }

  // Los controles en el orden de la página (el del tabulador), también los apagados.
  function inOrder() {
    return [...ui.root.querySelectorAll("input, select, [data-label], button, summary")];
  }

  // Qué control recibe el foco (la regla que cuenta la ayuda): el que actuó si sigue activo; si se
  // apagó, el siguiente control activo en el orden de la página (o el anterior, si era el último).
  function target(from) {
    if (!from) return null;
    const candidates = {
      button: () => ui.buttons[from.key],
      select: () => ui.select,
      variant: () => ui.variants.querySelector(`input[value="${from.key}"]`),
      gap: () => ui.picture.querySelector(`[data-label="${from.key}"]`),
    };
    const same = candidates[from.kind]();
    if (!same) return ui.select; // un hueco que ya no existe (otra variante): el menú de la caída
    if (!same.disabled) return same;
    const order = inOrder();
    const at = order.indexOf(same);
    const live = (node) => !node.disabled;
    return order.slice(at + 1).find(live) || order.slice(0, at).reverse().find(live) || null;
  }

  // Después de un clic con el ratón el foco queda en la celda del laboratorio, como tras un clic en
  // cualquier salida (no en el botón, que Enter volvería a pulsar); fuera de JupyterLab, en ninguna parte.
  function toCell() {
    const cell = ui.root.closest(".jp-Cell");
    if (cell) cell.focus({ preventScroll: true });
    else if (ui.root.contains(document.activeElement)) document.activeElement.blur();
  }

  function restoreFocus() {
    const from = acting;
    acting = null;
    const now = document.activeElement;
    // Solo si el foco se perdió (en <body>, en un nodo que ya no está o en uno apagado): nunca se lo
    // quita a otro control que la persona eligió mientras corría el agente.
    const lost = !now || now === document.body || !now.isConnected || now.disabled;
    const node = lost ? target(from) : null;
    if (node) node.focus({ preventScroll: true });
  }

  function rovingGaps(chosen) {
    // Una sola parada del tabulador en el dibujo: el hueco elegido (o el primero).
    const all = gaps();
    const current = all.find((gap) => gap.dataset.label === chosen) || all[0];
    for (const gap of all) gap.setAttribute("tabindex", gap === current ? "0" : "-1");
  }

  function update() {
    const view = model.get("view");
    ui.header.innerHTML = view.header;
    if (!ui.variants.querySelector("input")) {
      for (const [key, text] of view.variants) {
        const option = ui.variants.appendChild(make("label", { class: "cl-radio" }));
        const input = option.appendChild(make("input", { type: "radio", name: `${uid}-variant`, value: key }));
        option.append(text);
        input.addEventListener("change", () => choose(null, key, { kind: "variant", key }));
      }
    }
    for (const input of ui.variants.querySelectorAll("input")) input.checked = input.value === view.variant;
    ui.select.replaceChildren(
      ...view.options.map(([label, text, enabled]) => {
        const option = make("option", { value: label }, text);
        option.disabled = !enabled;
        return option;
      }),
    );
    ui.select.value = view.label;
    ui.picture.innerHTML = view.picture;
    room = ui.picture.clientWidth;
    fit(ui.picture.querySelector("svg"), room);
    rovingGaps(view.label);
    ui.story.textContent = view.story;
    ui.legend.textContent = view.legend;
    ui.runReason.textContent = view.run_blocker;
    ui.resumeReason.textContent = view.run_blocker ? "" : view.resume_blocker;
    ui.status.innerHTML = view.status;
    ui.log.innerHTML = view.log;
    ui.disk.innerHTML = view.disk;
    ui.history.innerHTML = view.history;
    ui.help.textContent = view.help || "";
    ui.root.dataset.ticket = String(view.ticket);
    if (!live) return; // sin kernel: el último estado, con los controles apagados
    locked = false;
    ui.root.classList.remove("cl-busy", "cl-saved");
    ui.root.removeAttribute("aria-busy");
    ui.offline.textContent = "";
    for (const control of controls()) control.disabled = false;
    ui.buttons.run.disabled = Boolean(view.run_blocker);
    ui.buttons.resume.disabled = Boolean(view.resume_blocker);
    ui.buttons.resume.title = view.resume_blocker || "Corre --resume en un proceso nuevo";
    ui.buttons.cut.disabled = Boolean(view.cut_blocker);
    ui.buttons.cut.title = view.cut_blocker || "Deja checkpoint.json escrito a medias";
    restoreFocus();
  }

  function hello(message) {
    if (message && message.action === "hello" && !live) {
      live = true;
      update();
    }
  }

  for (const button of Object.values(ui.buttons)) {
    const key = button.dataset.action;
    // «detail» cuenta los clics del ratón: 0 cuando el botón se pulsó con Enter o espacio.
    button.addEventListener("click", (event) =>
      send({ action: key }, { kind: "button", key, pointer: event.detail > 0 }),
    );
  }
  ui.select.addEventListener("change", () => choose(ui.select.value, null, { kind: "select" }));
  // Pulsar un hueco del dibujo elige esa caída (también con Enter o espacio desde el teclado).
  ui.picture.addEventListener("click", (event) => {
    const gap = event.target.closest("[data-label]");
    const from = { kind: "gap", key: gap && gap.dataset.label, pointer: event.detail > 0 };
    if (gap) choose(gap.dataset.label, null, from);
  });
  // Izquierda y derecha recorren los huecos en orden (al final de un turno pasan al siguiente); arriba
  // y abajo van al mismo hueco del turno anterior o siguiente, sin dar la vuelta.
  function neighbour(gap, key) {
    const all = gaps();
    const [kind, turn] = gap.dataset.label.split(":");
    const step = { ArrowRight: 1, ArrowLeft: -1 }[key];
    if (step) return all[(all.indexOf(gap) + step + all.length) % all.length];
    const rows = { ArrowDown: 1, ArrowUp: -1 }[key];
    if (rows) return all.find((other) => other.dataset.label === `${kind}:${Number(turn) + rows}`) || null;
    return { Home: all[0], End: all[all.length - 1] }[key] || null;
  }

  ui.picture.addEventListener("keydown", (event) => {
    const gap = event.target.closest("[data-label]");
    if (!gap || forNotebook(event)) return;
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      choose(gap.dataset.label, null, { kind: "gap", key: gap.dataset.label });
      return;
    }
    if (!["ArrowRight", "ArrowLeft", "ArrowDown", "ArrowUp", "Home", "End"].includes(event.key)) return;
    event.preventDefault(); // las flechas no desplazan la página (tampoco en el primer o el último turno)
    const next = neighbour(gap, event.key);
    if (next) {
      for (const other of gaps()) other.setAttribute("tabindex", other === next ? "0" : "-1");
      next.focus();
    }
  });
  // Una tecla sin Ctrl ni Cmd no sale del laboratorio hacia el notebook: JupyterLab busca sus atajos en
  // la fase de burbuja (además del atributo que pone markKey, que Notebook 7 mira en la de captura).
  ui.root.addEventListener("keydown", (event) => {
    if (!forNotebook(event)) event.stopPropagation();
  });
  // Mayús+Enter (o Alt, Ctrl, Cmd) en un botón es del notebook: si ningún atajo la tomó, el navegador
  // pulsaría el botón al llegar su «keypress» (en Reiniciar, borrar los archivos). No lo pulsa.
  ui.root.addEventListener("keypress", (event) => {
    if (event.key === "Enter" && forNotebook(event)) event.preventDefault();
  });
  // Cuando el notebook cambia de ancho (el panel lateral, la ventana), el dibujo se vuelve a acomodar.
  const resized = new ResizeObserver(() => {
    if (ui.picture.clientWidth === room) return;
    room = ui.picture.clientWidth;
    fit(ui.picture.querySelector("svg"), room);
  });
  resized.observe(ui.picture);
  listenForKeys();

  // Hasta que el kernel contesta, esta vista puede ser una restaurada de un notebook guardado (sin
  // nadie detrás): se muestra el último estado con los controles apagados y la línea que pide ejecutar
  // la celda (con un instante de demora, para no parpadear cuando el kernel contesta enseguida).
  lock();
  ui.root.classList.add("cl-saved");
  ui.offline.textContent = OFFLINE;
  update();
  // Una pantalla nueva también prueba que hay un kernel detrás (por si un visor no entrega la respuesta).
  const arrived = () => {
    live = true;
    update();
  };
  model.on("change:view", arrived);
  model.on("msg:custom", hello);
  model.send({ action: "hello" });
  keepStateOnSave(model.widget_manager);
  const id = model.get("view").model;
  countView(id, 1);
  return () => {
    countView(id, -1);
    resized.disconnect();
    model.off("change:view", arrived);
    model.off("msg:custom", hello);
  };
}

export default { render };
