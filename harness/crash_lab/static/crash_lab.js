// La página del laboratorio de caídas (anywidget). El kernel arma todo el contenido («view»); la página
// solo lo pone en su lugar y manda cada clic. En cuanto se pulsa un control, la página se bloquea hasta
// que llega la pantalla nueva: un doble clic, o un clic mientras corre el agente, no manda nada más.
//
// Teclado: las teclas pulsadas dentro del laboratorio son suyas (JupyterLab y Notebook 7 no las ven
// como atajos: «a», «b» o «d d» no tocan las celdas); el dibujo es una sola parada del tabulador y las
// flechas mueven el foco entre huecos; cuando llega la pantalla nueva, el foco vuelve al control que
// actuó (o al más cercano que siga activo).

const BUTTONS = [
  ["run", "Ejecutar", "cl-primary"],
  ["resume", "Reanudar", "cl-resume-btn"],
  ["reset", "Reiniciar", ""],
  ["cut", "Cortar checkpoint.json", ""],
];
const OFFLINE =
  "Este es el último estado guardado del laboratorio: ejecuta esta celda para usarlo (si el kernel está " +
  "ocupado con otra celda, los controles se encienden cuando termine).";

function make(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text) node.textContent = text;
  return node;
}

function build(el, uid) {
  // data-lm-suppress-shortcuts: Lumino (JupyterLab, Notebook 7) no busca atajos para teclas de aquí dentro.
  const root = make("div", { class: "cl-root", "data-ticket": "", "data-lm-suppress-shortcuts": "true" });
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
  const details = root.appendChild(make("details", { class: "cl-historybox", open: "" }));
  details.append(make("summary", {}, "Historia de pasos"));
  const history = details.appendChild(make("div", { class: "cl-historypanel" }));
  el.append(root);
  return {
    root, offline, header, variants, select, picture, story, legend, buttons, runReason, resumeReason,
    status, log, disk, history,
  };
}

// Un notebook guardado guarda el estado de cada laboratorio en sus metadatos (lo que hace JupyterLab con
// «Save Widget State Automatically», que viene apagado): abierto otra vez sin este kernel, el widget
// se dibuja con su último estado en vez de «Error displaying widget: model not found». Solo los
// laboratorios: el estado de los demás widgets queda como lo deje JupyterLab.
const WIDGET_STATE = "application/vnd.jupyter.widget-state+json";
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
      if (!isLab(entry)) continue;
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
    acting = from;
    lock();
    if (message.action !== "choose") ui.status.textContent = "Corriendo el agente en un proceso aparte…";
    model.send({ ...message, ticket: model.get("view").ticket });
  }

  function choose(label, variant, from) {
    const view = model.get("view");
    send({ action: "choose", label: label ?? view.label, variant: variant ?? view.variant }, from);
  }

  // Qué control recibe el foco: el mismo si sigue activo; si no, Ejecutar, y si no, el menú.
  function target(from) {
    if (!from) return null;
    const candidates = {
      button: () => ui.buttons[from.key],
      select: () => ui.select,
      variant: () => ui.variants.querySelector(`input[value="${from.key}"]`),
      gap: () => ui.picture.querySelector(`[data-label="${from.key}"]`),
    };
    const first = candidates[from.kind]();
    return [first, ui.buttons.run, ui.select].find((node) => node && !node.disabled) || null;
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

  // Lumino busca atajos subiendo desde el elemento con foco y se detiene en el primero que lleva
  // data-lm-suppress-shortcuts: el atributo va en cada control (un selector como «:focus» ya casa con
  // el propio control), además de en la raíz.
  function suppressShortcuts() {
    for (const node of ui.root.querySelectorAll("button, select, input, summary, [tabindex]")) {
      node.setAttribute("data-lm-suppress-shortcuts", "true");
    }
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
    rovingGaps(view.label);
    ui.story.textContent = view.story;
    ui.legend.textContent = view.legend;
    ui.runReason.textContent = view.run_blocker;
    ui.resumeReason.textContent = view.run_blocker ? "" : view.resume_blocker;
    ui.status.innerHTML = view.status;
    ui.log.innerHTML = view.log;
    ui.disk.innerHTML = view.disk;
    ui.history.innerHTML = view.history;
    suppressShortcuts();
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
    button.addEventListener("click", () => send({ action: key }, { kind: "button", key }));
  }
  ui.select.addEventListener("change", () => choose(ui.select.value, null, { kind: "select" }));
  // Pulsar un hueco del dibujo elige esa caída (también con Enter o espacio desde el teclado).
  ui.picture.addEventListener("click", (event) => {
    const gap = event.target.closest("[data-label]");
    if (gap) choose(gap.dataset.label, null, { kind: "gap", key: gap.dataset.label });
  });
  const MOVES = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1 };
  ui.picture.addEventListener("keydown", (event) => {
    const gap = event.target.closest("[data-label]");
    if (!gap) return;
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      choose(gap.dataset.label, null, { kind: "gap", key: gap.dataset.label });
      return;
    }
    const all = gaps();
    let next = null;
    if (event.key in MOVES) next = all[(all.indexOf(gap) + MOVES[event.key] + all.length) % all.length];
    if (event.key === "Home") next = all[0];
    if (event.key === "End") next = all[all.length - 1];
    if (next) {
      event.preventDefault(); // las flechas no desplazan la página
      for (const other of all) other.setAttribute("tabindex", other === next ? "0" : "-1");
      next.focus();
    }
  });
  // Ninguna tecla sale del laboratorio hacia el notebook (además del atributo de arriba, para quien
  // escuche en la fase de burbuja).
  ui.root.addEventListener("keydown", (event) => event.stopPropagation());

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
  return () => {
    model.off("change:view", arrived);
    model.off("msg:custom", hello);
  };
}

export default { render };
