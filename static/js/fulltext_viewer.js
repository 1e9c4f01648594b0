// The report's PDF beside its extracted text on the full-text record page. pdf.js (vendored in
// static/vendor/pdfjs, its worker a same-origin module: the CSP allows nothing else) draws each
// page to a canvas with a text layer over it, and the session's include and exclude terms are
// marked in that layer as the server marks them in the extracted text (screening/highlight.py).
// Pages are drawn as they scroll into view: a report may have hundreds.

const WORD = "[\\p{L}\\p{N}_]";

function termsRead(id) {
  const node = document.getElementById(id);
  if (!node) return [];
  try {
    const terms = JSON.parse(node.textContent);
    return Array.isArray(terms) ? terms.map(String).filter((t) => t.trim()) : [];
  } catch (error) {
    return [];
  }
}

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// As highlight.py: longest term first ("heart failure" before "heart"), and whole words only
// where a term starts or ends with a word character.
function termPattern(terms) {
  if (!terms.length) return null;
  const parts = [...terms].sort((a, b) => b.length - a.length).map((term) => {
    const left = new RegExp(`^${WORD}`, "u").test(term) ? `(?<!${WORD})` : "";
    const right = new RegExp(`${WORD}$`, "u").test(term) ? `(?!${WORD})` : "";
    return left + escapeRegExp(term) + right;
  });
  return new RegExp(parts.join("|"), "giu");
}

function marksApply(layer, pattern, kinds) {
  if (!pattern) return;
  for (const span of layer.querySelectorAll("span")) {
    if (span.children.length || !span.textContent) continue;
    const text = span.textContent;
    const pieces = [];
    let at = 0;
    for (const match of text.matchAll(pattern)) {
      if (match.index > at) pieces.push(document.createTextNode(text.slice(at, match.index)));
      const mark = document.createElement("mark");
      mark.className = `term ${kinds.get(match[0].toLowerCase()) || "include"}`;
      mark.textContent = match[0];
      pieces.push(mark);
      at = match.index + match[0].length;
    }
    if (!pieces.length) continue;
    if (at < text.length) pieces.push(document.createTextNode(text.slice(at)));
    span.replaceChildren(...pieces);
  }
}

function pageBox(number, width, height) {
  const box = document.createElement("div");
  box.className = "ft-page";
  box.dataset.page = String(number);
  box.style.width = `${Math.floor(width)}px`;
  box.style.height = `${Math.floor(height)}px`;
  return box;
}

async function pageDraw(pdfjs, pdf, box, width, marking) {
  const page = await pdf.getPage(Number(box.dataset.page));
  const scale = width / page.getViewport({ scale: 1 }).width;
  const viewport = page.getViewport({ scale });
  const ratio = window.devicePixelRatio || 1;
  box.style.width = `${Math.floor(viewport.width)}px`;
  box.style.height = `${Math.floor(viewport.height)}px`;
  box.style.setProperty("--scale-factor", String(scale));
  const canvas = document.createElement("canvas");
  canvas.width = Math.floor(viewport.width * ratio);
  canvas.height = Math.floor(viewport.height * ratio);
  canvas.style.width = `${Math.floor(viewport.width)}px`;
  canvas.style.height = `${Math.floor(viewport.height)}px`;
  const layer = document.createElement("div");
  layer.className = "textLayer";
  box.replaceChildren(canvas, layer);
  await page.render({
    canvas, viewport, transform: ratio === 1 ? null : [ratio, 0, 0, ratio, 0, 0],
  }).promise;
  const text = new pdfjs.TextLayer({
    textContentSource: page.streamTextContent(), container: layer, viewport,
  });
  await text.render();
  marksApply(layer, marking.pattern, marking.kinds);
  box.dataset.drawn = "true";
}

function marking() {
  const include = termsRead("ft-include-terms");
  const exclude = termsRead("ft-exclude-terms");
  const kinds = new Map(exclude.map((t) => [t.toLowerCase(), "exclude"]));
  for (const term of include) kinds.set(term.toLowerCase(), "include");
  return { pattern: termPattern([...include, ...exclude]), kinds };
}

function say(pane, state, text) {
  pane.dataset.state = state;
  const status = pane.querySelector(".ft-viewer-status");
  if (status) status.textContent = text;
}

async function viewerStart(pane) {
  say(pane, "loading", "Loading the PDF…");
  const pdfjs = await import(pane.dataset.pdfjs);
  pdfjs.GlobalWorkerOptions.workerSrc = pane.dataset.worker;
  const pdf = await pdfjs.getDocument({
    url: pane.dataset.pdfUrl, verbosity: pdfjs.VerbosityLevel.ERRORS, disableRange: true,
  }).promise;
  const pages = pane.querySelector(".ft-pages");
  const width = Math.max(280, pages.clientWidth - 4);
  const first = (await pdf.getPage(1)).getViewport({ scale: 1 });
  const height = (first.height * width) / first.width;
  const marks = marking();
  const observer = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting || entry.target.dataset.drawing) continue;
      entry.target.dataset.drawing = "true";
      observer.unobserve(entry.target);
      pageDraw(pdfjs, pdf, entry.target, width, marks).catch((error) => {
        entry.target.textContent = `Page ${entry.target.dataset.page} could not be drawn: ${error.message || error}`;
      });
    }
  }, { root: pages, rootMargin: "800px 0px" });
  for (let number = 1; number <= pdf.numPages; number += 1) {
    const box = pageBox(number, width, height);
    pages.append(box);
    observer.observe(box);
  }
  say(pane, "ready", `${pdf.numPages} page${pdf.numPages === 1 ? "" : "s"}`);
}

const pane = document.getElementById("ft-viewer");
if (pane && pane.dataset.pdfUrl) {
  viewerStart(pane).catch((error) => {
    say(pane, "failed", `The PDF could not be shown here (${error.message || error}): read its extracted text, or download it.`);
  });
}
