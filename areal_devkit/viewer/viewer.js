// The trajectory viewer: builds episode cards from the embedded JSON, renders tokens (at once
// for small pages, as they scroll into view for large ones), a hover tooltip and the filters.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("data").textContent);
  const vocab = data.vocab;
  const list = document.getElementById("episodes");
  const tip = document.getElementById("tip");
  const EAGER_TOKENS = 100000;
  const total = data.episodes.reduce((n, ep) => n + ep.rows.reduce((m, r) => m + r.ids.length, 0), 0);
  const cards = [];
  const byIndex = new Map(data.episodes.map((ep) => [String(ep.i), ep]));

  function text(id) {
    const entry = vocab[id];
    return entry ? entry[0] : "<" + id + ">";
  }

  // The role a chat turn opens with: the text after <|im_start|> up to the newline.
  function roleAt(row, t) {
    let role = "";
    for (let k = t; k < Math.min(row.ids.length, t + 6); k++) {
      const piece = text(row.ids[k]);
      const end = piece.indexOf("\n");
      if (end >= 0) return role + piece.slice(0, end);
      role += piece;
    }
    return role;
  }

  // The text of the run of tokens with the same loss mask that starts at t.
  function runText(row, t) {
    let out = "";
    for (let k = t; k < row.ids.length && row.m[k] === row.m[t]; k++) out += text(row.ids[k]);
    return out;
  }

  function renderRows(ep, body) {
    ep.rows.forEach((row, r) => {
      const div = document.createElement("div");
      div.className = "row";
      div.dataset.ep = ep.i;
      div.dataset.row = r;
      if (ep.rows.length > 1) {
        const label = document.createElement("span");
        label.className = "row-label";
        label.textContent = "sequence " + (r + 1) + " of " + ep.rows.length +
          (row.r === null ? "" : " · reward " + row.r);
        div.appendChild(label);
      }
      let completions = 0;
      let previous = null;
      let kind = "";  // "call" in a trained tool call, "tool" in a tool result, else ""
      let toolSeen = false;
      const frag = document.createDocumentFragment();
      for (let t = 0; t < row.ids.length; t++) {
        const trained = row.m.charCodeAt(t) === 49;  // "1"
        const role = !trained && text(row.ids[t]) === "<|im_start|>" ? roleAt(row, t + 1) : null;
        if (trained !== previous || role === "tool" || (kind === "tool" && role !== null)) {
          const mark = document.createElement("span");
          if (trained) {
            completions += 1;
            kind = runText(row, t).includes("<tool_call>") ? "call" : "";
            mark.textContent = kind === "call" ? "tool call" : (toolSeen ? "answer" : "completion " + completions);
          } else {
            kind = role === "tool" ? "tool" : "";
            mark.textContent = kind === "tool" ? "tool result" : (t === 0 ? "prompt" : "context");
          }
          if (kind) toolSeen = true;
          mark.className = "turn " + (trained ? "trn" : "ctx") + (kind ? " " + kind : "");
          frag.appendChild(mark);
          previous = trained;
        }
        const span = document.createElement("span");
        const id = row.ids[t];
        const entry = vocab[id];
        span.className = "tok " + (trained ? "trn" : "ctx") + (kind ? " " + kind : "") + (entry && entry[1] ? " special" : "") + (entry && entry[1] === 2 ? " image" : "");
        span.textContent = text(id);
        span.dataset.t = t;
        frag.appendChild(span);
      }
      div.appendChild(frag);
      body.appendChild(div);
    });
  }

  function card(ep) {
    const el = document.createElement("section");
    el.className = "episode " + (ep.a ? "accepted" : "rejected");
    el.dataset.accepted = ep.a ? "1" : "0";
    el.dataset.reward = ep.r === null ? "" : ep.r;
    const h = document.createElement("h2");
    h.textContent = "episode " + ep.i;
    const reward = document.createElement("span");
    reward.className = "reward";
    reward.textContent = "reward " + (ep.r === null ? "-" : ep.r);
    h.appendChild(reward);
    if (!ep.a) {
      const status = document.createElement("span");
      status.className = "status";
      status.textContent = "rejected (" + ep.why + ")";
      h.appendChild(status);
    }
    el.appendChild(h);
    if (ep.err) {
      const pre = document.createElement("pre");
      pre.className = "error";
      pre.textContent = ep.err;
      el.appendChild(pre);
    }
    const body = document.createElement("div");
    el.appendChild(body);
    el._render = () => { if (!el._done) { el._done = true; renderRows(ep, body); } };
    return el;
  }

  const observer = total > EAGER_TOKENS && "IntersectionObserver" in window
    ? new IntersectionObserver((entries) => entries.forEach((e) => {
        if (e.isIntersecting) { e.target._render(); observer.unobserve(e.target); }
      }), { rootMargin: "600px" })
    : null;
  const frag = document.createDocumentFragment();
  data.episodes.forEach((ep) => {
    const el = card(ep);
    el._ep = ep;
    cards.push(el);
    frag.appendChild(el);
    if (observer) observer.observe(el); else el._render();
  });
  list.appendChild(frag);

  list.addEventListener("mouseover", (e) => {
    const span = e.target;
    if (!span.classList || !span.classList.contains("tok")) return;
    const rowEl = span.parentElement;
    const ep = byIndex.get(rowEl.dataset.ep);
    const row = ep.rows[Number(rowEl.dataset.row)];
    const t = Number(span.dataset.t);
    const trained = row.m[t] === "1";
    tip.textContent = "id " + row.ids[t] + " · " + (trained ? "trained" : "context") +
      " · logprob " + row.lp[t] + " · version " + row.v[t];
    tip.style.display = "block";
  });
  list.addEventListener("mousemove", (e) => {
    tip.style.left = (e.clientX + 12) + "px";
    tip.style.top = (e.clientY + 12) + "px";
  });
  list.addEventListener("mouseout", () => { tip.style.display = "none"; });

  const controls = ["show-accepted", "show-rejected", "reward-min", "reward-max"].map((id) => document.getElementById(id));
  function apply() {
    const [acc, rej, lo, hi] = controls;
    const min = lo.value === "" ? -Infinity : Number(lo.value);
    const max = hi.value === "" ? Infinity : Number(hi.value);
    let shown = 0;
    cards.forEach((el) => {
      const ep = el._ep;
      let visible = ep.a ? acc.checked : rej.checked;
      if (visible && ep.r !== null) visible = ep.r >= min && ep.r <= max;
      if (visible && ep.r === null && (lo.value !== "" || hi.value !== "")) visible = false;
      el.hidden = !visible;
      if (visible) shown += 1;
    });
    document.getElementById("shown").textContent = shown + " of " + cards.length + " shown";
  }
  // Filters can come from the address: page.html#rejected=0&min=0.5 (a link that shows a view).
  const wanted = new URLSearchParams(location.hash.slice(1));
  if (wanted.has("accepted")) controls[0].checked = wanted.get("accepted") !== "0";
  if (wanted.has("rejected")) controls[1].checked = wanted.get("rejected") !== "0";
  if (wanted.has("min")) controls[2].value = wanted.get("min");
  if (wanted.has("max")) controls[3].value = wanted.get("max");
  controls.forEach((c) => c.addEventListener("input", apply));
  apply();
  document.body.dataset.ready = "1";
})();
