// La página del laboratorio de caídas (anywidget). El kernel arma todo el contenido («view»); la página
// solo lo pone en su lugar y manda cada clic. En cuanto se pulsa un control, la página se bloquea hasta
// que llega la pantalla nueva: un doble clic, o un clic mientras corre el agente, no manda nada más.

const BUTTONS = [
  ["run", "Ejecutar", "cl-primary"],
  ["resume", "Reanudar", "cl-resume-btn"],
  ["reset", "Reiniciar", ""],
  ["cut", "Cortar checkpoint.json", ""],
];

function make(tag, attrs = {}, text = "") {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text) node.textContent = text;
  return node;
}

function build(el, uid) {
  const root = make("div", { class: "cl-root", "data-ticket": "" });
  root.append(make("h3", { class: "cl-title" }, "Laboratorio de caídas"));
  const header = root.appendChild(make("p", { class: "cl-header" }));
  const controls = root.appendChild(make("div", { class: "cl-controls" }));
  const variants = controls.appendChild(make("fieldset", { class: "cl-variants" }));
  variants.append(make("legend", {}, "Variante"));
  const pointLabel = controls.appendChild(make("label", { class: "cl-point" }, "Caída en "));
  const select = pointLabel.appendChild(make("select", { "aria-describedby": `${uid}-reason` }));
  const picture = root.appendChild(make("div", { class: "cl-picture" }));
  const story = root.appendChild(make("p", { class: "cl-story" }));
  const legend = root.appendChild(make("p", { class: "cl-legend cl-muted" }));
  const bar = root.appendChild(make("div", { class: "cl-buttons" }));
  const buttons = {};
  for (const [action, text, cls] of BUTTONS) {
    buttons[action] = bar.appendChild(make("button", { type: "button", class: `cl-btn ${cls}` }, text));
    buttons[action].dataset.action = action;
  }
  const reason = root.appendChild(make("p", { class: "cl-reason", id: `${uid}-reason` }));
  buttons.resume.setAttribute("aria-describedby", `${uid}-reason`);
  const status = root.appendChild(make("div", { class: "cl-status", role: "status", "aria-live": "polite" }));
  const panels = root.appendChild(make("div", { class: "cl-panels" }));
  const log = panels.appendChild(make("section", { class: "cl-logpanel", "aria-label": "Log" }));
  const disk = panels.appendChild(make("section", { class: "cl-diskpanel", "aria-label": "En disco" }));
  const details = root.appendChild(make("details", { class: "cl-historybox", open: "" }));
  details.append(make("summary", {}, "Historia de pasos"));
  const history = details.appendChild(make("div", { class: "cl-historypanel" }));
  el.append(root);
  return { root, header, variants, select, picture, story, legend, buttons, reason, status, log, disk, history };
}

function render({ model, el }) {
  const uid = `cl-${Math.random().toString(36).slice(2)}`;
  const ui = build(el, uid);
  let locked = false;

  function controls() {
    return [...Object.values(ui.buttons), ui.select, ...ui.variants.querySelectorAll("input")];
  }

  function send(message) {
    if (locked) return; // un clic repetido, o uno mientras corre el agente: la página lo ignora
    locked = true;
    ui.root.classList.add("cl-busy");
    ui.root.setAttribute("aria-busy", "true");
    for (const control of controls()) control.disabled = true;
    if (message.action !== "choose") ui.status.textContent = "Corriendo el agente en un proceso aparte…";
    model.send({ ...message, ticket: model.get("view").ticket });
  }

  function choose(label, variant) {
    const view = model.get("view");
    send({ action: "choose", label: label ?? view.label, variant: variant ?? view.variant });
  }

  function update() {
    const view = model.get("view");
    ui.header.innerHTML = view.header;
    if (!ui.variants.querySelector("input")) {
      for (const [key, text] of view.variants) {
        const option = ui.variants.appendChild(make("label", { class: "cl-radio" }));
        const input = option.appendChild(make("input", { type: "radio", name: `${uid}-variant`, value: key }));
        option.append(` ${text}`);
        input.addEventListener("change", () => choose(null, key));
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
    ui.story.textContent = view.story;
    ui.legend.textContent = view.legend;
    ui.reason.textContent = view.run_blocker || view.resume_blocker;
    ui.status.innerHTML = view.status;
    ui.log.innerHTML = view.log;
    ui.disk.innerHTML = view.disk;
    ui.history.innerHTML = view.history;
    locked = false;
    ui.root.classList.remove("cl-busy");
    ui.root.removeAttribute("aria-busy");
    for (const control of controls()) control.disabled = false;
    ui.buttons.run.disabled = Boolean(view.run_blocker);
    ui.buttons.resume.disabled = Boolean(view.resume_blocker);
    ui.buttons.resume.title = view.resume_blocker || "Corre --resume en un proceso nuevo";
    ui.buttons.cut.disabled = Boolean(view.cut_blocker);
    ui.buttons.cut.title = view.cut_blocker || "Deja checkpoint.json escrito a medias";
    ui.root.dataset.ticket = String(view.ticket);
  }

  for (const button of Object.values(ui.buttons)) {
    button.addEventListener("click", () => send({ action: button.dataset.action }));
  }
  ui.select.addEventListener("change", () => choose(ui.select.value, null));
  // Pulsar un hueco del dibujo elige esa caída (también con Enter o espacio desde el teclado).
  ui.picture.addEventListener("click", (event) => {
    const gap = event.target.closest("[data-label]");
    if (gap) choose(gap.dataset.label, null);
  });
  ui.picture.addEventListener("keydown", (event) => {
    const gap = event.target.closest("[data-label]");
    if (gap && (event.key === "Enter" || event.key === " ")) {
      event.preventDefault();
      choose(gap.dataset.label, null);
    }
  });
  model.on("change:view", update);
  update();
  return () => model.off("change:view", update);
}

export default { render };
