// A small drawing of an answer's evidence triples: entities as dots, literals as boxes, each
// triple an arrow labelled with its predicate. The layout is a short, deterministic spring
// simulation (no library): the same triples always give the same picture.

import { s, shorten } from "./dom.js";

const WIDTH = 460;
const MARGIN = 64; // room for labels at the edges
const MAX_TRIPLES = 40;
let drawingCount = 0;

function localName(iri) {
  const text = String(iri ?? "");
  const cut = Math.max(text.lastIndexOf("/"), text.lastIndexOf("#"));
  const tail = cut >= 0 && cut < text.length - 1 ? text.slice(cut + 1) : text;
  try {
    return decodeURIComponent(tail);
  } catch {
    return tail;
  }
}

/** Nodes and edges from normalised triples ({s, p, o, sLabel, pLabel, oLabel, literal}). */
export function graphOf(triples) {
  const nodes = new Map();
  const edges = [];
  const node = (key, label, literal) => {
    if (!nodes.has(key)) nodes.set(key, { key, label, literal, index: nodes.size });
    return nodes.get(key);
  };
  for (const t of triples.slice(0, MAX_TRIPLES)) {
    const from = node(`e:${t.s}`, t.sLabel || localName(t.s), false);
    const to = node(t.literal ? `l:${t.o}` : `e:${t.o}`, t.oLabel || (t.literal ? String(t.o) : localName(t.o)), t.literal);
    edges.push({ from, to, label: t.pLabel || localName(t.p) });
  }
  return { nodes: [...nodes.values()], edges };
}

/** Positions in [0,1]² for each node (Fruchterman–Reingold, fixed start on a circle). */
export function layout(nodes, edges, iterations = 250) {
  const n = nodes.length;
  if (n === 0) return [];
  if (n === 1) return [{ x: 0.5, y: 0.5 }];
  const pos = nodes.map((_, i) => ({
    x: 0.5 + 0.4 * Math.cos(Math.PI + (2 * Math.PI * i) / n), // the first subject starts on the left
    y: 0.5 + 0.4 * Math.sin(Math.PI + (2 * Math.PI * i) / n),
  }));
  const k = Math.sqrt(1 / n) * 0.9;
  let temperature = 0.1;
  for (let step = 0; step < iterations; step++) {
    const move = pos.map(() => ({ x: 0, y: 0 }));
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        const dx = pos[i].x - pos[j].x;
        const dy = pos[i].y - pos[j].y;
        const dist = Math.max(Math.hypot(dx, dy), 0.01);
        const push = (k * k) / dist;
        move[i].x += (dx / dist) * push; move[i].y += (dy / dist) * push;
        move[j].x -= (dx / dist) * push; move[j].y -= (dy / dist) * push;
      }
    }
    for (const e of edges) {
      const a = e.from.index;
      const b = e.to.index;
      if (a === b) continue;
      const dx = pos[a].x - pos[b].x;
      const dy = pos[a].y - pos[b].y;
      const dist = Math.max(Math.hypot(dx, dy), 0.01);
      const pull = (dist * dist) / k;
      move[a].x -= (dx / dist) * pull; move[a].y -= (dy / dist) * pull;
      move[b].x += (dx / dist) * pull; move[b].y += (dy / dist) * pull;
    }
    for (let i = 0; i < n; i++) {
      const len = Math.max(Math.hypot(move[i].x, move[i].y), 1e-9);
      const stepLen = Math.min(len, temperature);
      pos[i].x += (move[i].x / len) * stepLen;
      pos[i].y += (move[i].y / len) * stepLen;
    }
    temperature *= 0.98;
  }
  // Stretch to fill the unit square (keeps the picture readable whatever the spread); an axis
  // with no real spread (two nodes side by side) stays centred instead of being blown up.
  const xs = pos.map((p) => p.x);
  const ys = pos.map((p) => p.y);
  const [minX, maxX, minY, maxY] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const spanX = maxX - minX;
  const spanY = maxY - minY;
  return pos.map((p) => ({
    x: spanX < 1e-3 ? 0.5 : (p.x - minX) / spanX,
    y: spanY < 1e-3 ? 0.5 : (p.y - minY) / spanY,
  }));
}

/** An <svg> drawing of the triples (an accessible image; the table next to it has the text). */
export function drawTriples(triples) {
  const { nodes, edges } = graphOf(triples);
  const unit = layout(nodes, edges);
  const flat = unit.every((p) => p.y === 0.5); // a single row needs little height
  const height = flat ? 90 : Math.min(360, 160 + 20 * nodes.length);
  const places = unit.map((p) => ({
    x: MARGIN + p.x * (WIDTH - 2 * MARGIN),
    y: flat ? height / 2 : 30 + p.y * (height - 60),
  }));
  const markerId = `kg-arrow-${++drawingCount}`;
  const svg = s("svg", {
    class: "triple-graph",
    viewBox: `0 0 ${WIDTH} ${height}`,
    role: "img",
    "aria-label": `Graph of ${edges.length} evidence triple${edges.length === 1 ? "" : "s"} between ${nodes.length} nodes`,
  });
  svg.append(
    s("defs", {},
      s("marker", { id: markerId, viewBox: "0 0 10 10", refX: "10", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" },
        s("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrow-head" }))),
  );
  const radius = 7;
  for (const e of edges) {
    const a = places[e.from.index];
    const b = places[e.to.index];
    const group = s("g", { class: "edge" }, s("title", {}, `${e.from.label} — ${e.label} → ${e.to.label}`));
    if (e.from === e.to) {
      group.append(s("path", { d: `M ${a.x} ${a.y - radius} c 30 -40 -30 -40 0 0`, class: "edge-line", "marker-end": `url(#${markerId})` }));
      group.append(s("text", { x: a.x, y: a.y - 38, class: "edge-label", "text-anchor": "middle" }, shorten(e.label, 28)));
    } else {
      const dx = b.x - a.x;
      const dy = b.y - a.y;
      const len = Math.max(Math.hypot(dx, dy), 1);
      const ux = dx / len;
      const uy = dy / len;
      group.append(s("line", {
        x1: a.x + ux * radius, y1: a.y + uy * radius, x2: b.x - ux * (radius + 2), y2: b.y - uy * (radius + 2),
        class: "edge-line", "marker-end": `url(#${markerId})`,
      }));
      group.append(s("text", { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 - 4, class: "edge-label", "text-anchor": "middle" },
        shorten(e.label, 28)));
    }
    svg.append(group);
  }
  for (const node of nodes) {
    const p = places[node.index];
    const shape = node.literal
      ? s("rect", { x: p.x - radius, y: p.y - radius, width: radius * 2, height: radius * 2, rx: 2, class: "node-literal" })
      : s("circle", { cx: p.x, cy: p.y, r: radius, class: "node-entity" });
    const below = p.y < height - 40;
    svg.append(s("g", { class: "node" },
      s("title", {}, node.label),
      shape,
      s("text", { x: p.x, y: below ? p.y + radius + 14 : p.y - radius - 6, class: "node-label", "text-anchor": "middle" },
        shorten(node.label, 30))));
  }
  if (triples.length > MAX_TRIPLES) {
    svg.append(s("text", { x: 8, y: height - 8, class: "graph-note" }, `first ${MAX_TRIPLES} of ${triples.length} triples`));
  }
  return svg;
}
