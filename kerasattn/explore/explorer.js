/* The kerasattn attention explorer. Hand-written, no library, nothing loaded from the
   network: it reads the JSON of its <div class="kae"> and draws SVG. Every explorer
   <div> of the document not yet drawn is drawn (a notebook may hold several). */
(function () {
  "use strict";

  var PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
                 "#e377c2", "#17becf", "#7f7f7f", "#bcbd22", "#393b79", "#ad494a"];
  var FONT = "Helvetica, Arial, sans-serif";
  var KIND_NAMES = {
    cross: "cross-attention (output \u2192 source)",
    self: "decoder self-attention (masked)",
    encoder: "encoder self-attention"
  };
  var VIEWS = [["head", "Head view"], ["model", "Model view"], ["steps", "Steps"]];
  var measurer = null;

  function esc(s) {
    return String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;");
  }
  function textWidth(s, size) {
    if (!measurer) measurer = document.createElement("canvas").getContext("2d");
    measurer.font = size + "px " + FONT;
    return measurer.measureText(s).width;
  }
  function maxWidth(labels, size) {
    var w = 0;
    for (var i = 0; i < labels.length; i++) w = Math.max(w, textWidth(labels[i].text, size));
    return Math.ceil(w);
  }
  function boldWidth(s) { return Math.ceil(textWidth(s, 13) * 1.12) + 32; }
  function article(word) { return /^[aeiou]/.test(word) ? "an " + word : "a " + word; }
  function range(n) { var a = []; for (var i = 0; i < n; i++) a.push(i); return a; }
  function r1(x) { return Math.round(x * 10) / 10; }
  function heat(w) {                    // white (0) to deep blue (1)
    return "rgb(" + Math.round(255 - 224 * w) + "," + Math.round(255 - 180 * w) + "," +
      Math.round(255 - 95 * w) + ")";
  }
  function unpack(text, scale) {        // 3-byte big-endian integers, w = q / scale
    var bin = atob(text), n = bin.length / 3, out = new Float64Array(n);
    for (var i = 0, k = 0; i < n; i++, k += 3) {
      out[i] = ((bin.charCodeAt(k) << 16) | (bin.charCodeAt(k + 1) << 8) |
                bin.charCodeAt(k + 2)) / scale;
    }
    return out;
  }
  function tokenLabel(tok, subword) {   // "\u2581" starts a word; other pieces continue one
    if (subword && tok.charAt(0) === "\u2581") return {text: tok.slice(1) || "\u2581", raw: tok};
    if (subword && !/^<.*>$/.test(tok)) return {text: "\u00b7" + tok, raw: tok, piece: true};
    return {text: tok, raw: tok};
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function svgOpen(w, h) {
    return '<svg xmlns="http://www.w3.org/2000/svg" width="' + Math.ceil(w) + '" height="' +
      Math.ceil(h) + '" viewBox="0 0 ' + Math.ceil(w) + " " + Math.ceil(h) +
      '" font-family="' + FONT + '" font-size="13"><rect width="100%" height="100%" ' +
      'fill="#ffffff"/>';
  }
  function svgText(x, y, s, attrs) {
    return '<text x="' + r1(x) + '" y="' + r1(y) + '"' + (attrs || "") + ">" + esc(s) + "</text>";
  }

  function Explorer(root) {
    var t0 = performance.now();
    var D = JSON.parse(root.querySelector("script.kae-data").textContent);
    this.root = root;
    this.data = D;
    this.cache = {};
    this.src = D.source_tokens.map(function (t, i) {
      var l = tokenLabel(t, D.subword.source);
      l.unk = D.unknown.indexOf(i) >= 0;
      return l;
    });
    this.state = {view: "head", kind: null, layer: 0, head: -1, hyp: 0, step: 0,
                  zoom: null, pin: null};
    this.build();
    this.setHypothesis(0);
    var kinds = this.kinds();
    this.state.view = kinds.length ? "head" : "steps";
    this.render();
    var t1 = performance.now();               // milliseconds since the navigation started
    root.setAttribute("data-render-ms", (t1 - t0).toFixed(1));
    root.setAttribute("data-drawn-at", t1.toFixed(1));
    root.setAttribute("data-rendered", "1");
    requestAnimationFrame(function () {       // the first frame with the drawing is painted
      setTimeout(function () {
        root.setAttribute("data-painted-at", performance.now().toFixed(1));
      }, 0);
    });
  }

  // ---------------------------------------------------------------- data access
  Explorer.prototype.hypothesis = function () {
    return this.data.hypotheses[this.state.hyp];
  };
  Explorer.prototype.kinds = function () {
    var h = this.hypothesis(), out = [];
    if (h.cross) out.push("cross");
    if (h.self) out.push("self");
    if (this.data.encoder) out.push("encoder");
    return out;
  };
  Explorer.prototype.block = function (kind) {        // {layers, heads, data}
    return kind === "encoder" ? this.data.encoder : this.hypothesis()[kind];
  };
  Explorer.prototype.weights = function (kind) {
    var key = kind === "encoder" ? "encoder" : kind + ":" + this.state.hyp;
    if (!this.cache[key]) this.cache[key] = unpack(this.block(kind).data, this.data.scale);
    return this.cache[key];
  };
  // One head's weights: get(i, j) = how query i attends to key j.
  Explorer.prototype.matrix = function (kind, l, h) {
    var b = this.block(kind), w = this.weights(kind), H = b.heads;
    var S = this.src.length, T = this.tgt.length, base;
    if (kind === "cross") {
      base = (l * H + h) * T * S;
      return {nq: T, nk: S, q: this.tgt, k: this.src, qName: "output", kName: "source",
              get: function (i, j) { return w[base + i * S + j]; }};
    }
    if (kind === "self") {
      base = (l * H + h) * T * (T + 1) / 2;
      return {nq: T, nk: T, q: this.tgt, k: this.decoderInputs, qName: "output",
              kName: "decoder input", masked: function (i, j) { return j > i; },
              get: function (i, j) { return j > i ? 0 : w[base + i * (i + 1) / 2 + j]; }};
    }
    base = (l * H + h) * S * S;
    return {nq: S, nk: S, q: this.src, k: this.src, qName: "source", kName: "source",
            get: function (i, j) { return w[base + i * S + j]; }};
  };

  // ---------------------------------------------------------------- controls
  Explorer.prototype.build = function () {
    var D = this.data, root = this.root, self = this;
    var head = el("div", "kae-title");
    head.innerHTML = "attention explorer \u00b7 <b>" + esc(D.model) + "</b> " +
      '<span class="kae-dim">\u00b7 ' + esc(D.backend) + " \u00b7 " +
      (D.beam > 1 ? "beam search, k = " + D.beam : "greedy decoding") + "</span>";
    root.appendChild(head);
    this.sourceLine = el("div", "kae-sent");
    this.targetLine = el("div", "kae-sent");
    root.appendChild(this.sourceLine);
    root.appendChild(this.targetLine);
    this.tokensLine(this.sourceLine, "source", this.src, null);

    var bar = el("div", "kae-bar");
    this.viewButtons = el("span", "kae-group");
    VIEWS.forEach(function (v) {
      var b = el("button", "kae-view", v[1]);
      b.type = "button";
      b.setAttribute("data-view", v[0]);
      self.viewButtons.appendChild(b);
    });
    bar.appendChild(this.viewButtons);
    this.kindLabel = el("label", "", "attention ");
    this.kindSelect = el("select", "kae-kind");
    this.kindLabel.appendChild(this.kindSelect);
    bar.appendChild(this.kindLabel);
    this.layerLabel = el("label", "", "layer ");
    this.layerSelect = el("select", "kae-layer");
    this.layerLabel.appendChild(this.layerSelect);
    bar.appendChild(this.layerLabel);
    this.headGroup = el("span", "kae-group kae-heads");
    bar.appendChild(this.headGroup);
    this.stepGroup = el("span", "kae-group kae-steps");
    this.prevButton = el("button", "kae-prev", "\u25c0");
    this.stepRange = el("input", "kae-step");
    this.stepRange.type = "range";
    this.stepRange.min = "0";
    this.nextButton = el("button", "kae-next", "\u25b6");
    this.stepLabel = el("span", "kae-dim");
    [this.prevButton, this.stepRange, this.nextButton, this.stepLabel].forEach(function (e) {
      if (e.tagName === "BUTTON") e.type = "button";
      self.stepGroup.appendChild(e);
    });
    bar.appendChild(this.stepGroup);
    this.hypLabel = el("label", "", "hypothesis ");
    this.hypSelect = el("select", "kae-hyp");
    D.hypotheses.forEach(function (h, i) {
      var o = el("option", "", (i + 1) + ". " + h.text + "  (score " + h.score.toFixed(3) + ")");
      o.value = String(i);
      self.hypSelect.appendChild(o);
    });
    this.hypLabel.appendChild(this.hypSelect);
    this.hypLabel.style.display = D.hypotheses.length > 1 ? "" : "none";
    bar.appendChild(this.hypLabel);
    this.backButton = el("button", "kae-back", "\u2190 all heads");
    this.backButton.type = "button";
    bar.appendChild(this.backButton);
    var exp = el("span", "kae-group");
    exp.appendChild(el("span", "kae-dim", "export "));
    this.svgButton = el("button", "kae-export-svg", "SVG");
    this.pngButton = el("button", "kae-export-png", "PNG");
    this.svgButton.type = this.pngButton.type = "button";
    exp.appendChild(this.svgButton);
    exp.appendChild(this.pngButton);
    bar.appendChild(exp);
    root.appendChild(bar);

    this.help = el("div", "kae-help");
    this.stage = el("div", "kae-stage");
    this.info = el("div", "kae-info");
    this.beamPanel = el("div", "kae-beam");
    [this.help, this.stage, this.info, this.beamPanel].forEach(function (e) {
      root.appendChild(e);
    });

    this.viewButtons.addEventListener("click", function (e) {
      var b = e.target.closest("[data-view]");
      if (!b) return;
      self.state.view = b.getAttribute("data-view");
      self.state.zoom = null;
      self.state.pin = null;
      self.render();
    });
    this.kindSelect.addEventListener("change", function () {
      self.state.kind = self.kindSelect.value;
      self.state.zoom = null;
      self.state.pin = null;
      self.render();
    });
    this.layerSelect.addEventListener("change", function () {
      self.state.layer = +self.layerSelect.value;
      self.state.pin = null;
      self.render();
    });
    this.headGroup.addEventListener("click", function (e) {
      var b = e.target.closest("[data-head]");
      if (!b) return;
      self.state.head = +b.getAttribute("data-head");
      self.state.pin = null;
      self.render();
    });
    this.hypSelect.addEventListener("change", function () {
      self.setHypothesis(+self.hypSelect.value);
      self.render();
    });
    this.stepRange.addEventListener("input", function () {
      self.state.step = +self.stepRange.value;
      self.render();
    });
    this.prevButton.addEventListener("click", function () { self.moveStep(-1); });
    this.nextButton.addEventListener("click", function () { self.moveStep(1); });
    this.backButton.addEventListener("click", function () {
      self.state.zoom = null;
      self.render();
    });
    this.svgButton.addEventListener("click", function () { self.exportSVG(); });
    this.pngButton.addEventListener("click", function () { self.exportPNG(); });
    this.stage.addEventListener("mouseover", function (e) { self.hover(e.target, true); });
    this.stage.addEventListener("mouseout", function (e) { self.hover(e.target, false); });
    this.stage.addEventListener("click", function (e) { self.click(e.target); });
    this.beamPanel.addEventListener("click", function (e) {
      var row = e.target.closest("[data-hyp]");
      if (!row) return;
      self.setHypothesis(+row.getAttribute("data-hyp"));
      self.render();
    });
  };

  Explorer.prototype.tokensLine = function (line, label, tokens, extra) {
    line.textContent = "";
    line.appendChild(el("span", "kae-lab", label));
    tokens.forEach(function (t, i) {
      var s = el("span", "kae-tk" + (t.piece ? " kae-piece" : "") + (t.unk ? " kae-unk" : ""),
                 t.text);
      s.title = "token " + (i + 1) + ": " + t.raw + (t.unk ? " (read as <unk>)" : "");
      line.appendChild(s);
      line.appendChild(document.createTextNode(" "));
    });
    if (extra) line.appendChild(el("span", "kae-dim", extra));
  };

  Explorer.prototype.setHypothesis = function (i) {
    var D = this.data, s = this.state;
    s.hyp = i;
    this.hypSelect.value = String(i);
    var h = this.hypothesis(), sub = D.subword.target;
    this.tgt = h.tokens.map(function (t) { return tokenLabel(t, sub); });
    this.decoderInputs = [{text: "<bos>", raw: "<bos>"}].concat(this.tgt.slice(0, -1));
    var extra = "  score " + h.score.toFixed(4) + (D.hypotheses.length > 1 ?
      "  (hypothesis " + (i + 1) + " of " + D.hypotheses.length + ")" : "");
    this.tokensLine(this.targetLine, "translation", this.tgt, extra);
    var legend = [];
    if (D.subword.source || D.subword.target) {
      legend.push("\u00b7 marks a subword piece that continues the word before it");
    }
    if (D.unknown.length) legend.push("red: a word the model reads as <unk>");
    if (legend.length) this.targetLine.appendChild(el("div", "kae-dim", legend.join("; ")));
    var kinds = this.kinds();
    if (kinds.indexOf(s.kind) < 0) s.kind = kinds[0] || null;
    this.kindSelect.textContent = "";
    var self = this;
    kinds.forEach(function (k) {
      var o = el("option", "", KIND_NAMES[k]);
      o.value = k;
      self.kindSelect.appendChild(o);
    });
    s.step = Math.min(s.step, this.tgt.length - 1);
    s.pin = null;
  };

  Explorer.prototype.moveStep = function (d) {
    var s = this.state;
    s.step = Math.max(0, Math.min(this.tgt.length - 1, s.step + d));
    this.render();
  };

  Explorer.prototype.syncControls = function () {
    var s = this.state, self = this, kinds = this.kinds();
    var kind = s.view === "steps" ? (this.hypothesis().cross ? "cross" : null) : s.kind;
    Array.prototype.forEach.call(this.viewButtons.children, function (b) {
      b.classList.toggle("kae-sel", b.getAttribute("data-view") === s.view);
    });
    this.kindSelect.value = s.kind || "";
    this.kindLabel.style.display = s.view !== "steps" && kinds.length ? "" : "none";
    var b = kind ? this.block(kind) : null;
    this.layerSelect.textContent = "";
    if (b) {
      s.layer = Math.min(s.layer, b.layers - 1);
      if (s.head >= b.heads) s.head = -1;
      range(b.layers).forEach(function (l) {
        var o = el("option", "", (l + 1) + " of " + b.layers);
        o.value = String(l);
        self.layerSelect.appendChild(o);
      });
      this.layerSelect.value = String(s.layer);
    }
    var zoomed = s.view === "model" && s.zoom;
    this.layerLabel.style.display = b && s.view !== "model" ? "" : "none";
    this.headGroup.textContent = "";
    if (b && b.heads > 1 && s.view !== "model") {
      this.headGroup.appendChild(el("span", "kae-dim", "head "));
      [-1].concat(range(b.heads)).forEach(function (h) {
        var btn = el("button", "kae-hb" + (s.head === h ? " kae-sel" : ""),
                     h < 0 ? "all" : String(h + 1));
        btn.type = "button";
        btn.setAttribute("data-head", String(h));
        btn.style.borderBottomColor = h < 0 ? "#888" : PALETTE[h % PALETTE.length];
        self.headGroup.appendChild(btn);
      });
    }
    this.stepGroup.style.display = s.view === "steps" ? "" : "none";
    this.stepRange.max = String(this.tgt.length - 1);
    this.stepRange.value = String(s.step);
    this.stepLabel.textContent = "step " + (s.step + 1) + " of " + this.tgt.length;
    this.backButton.style.display = zoomed ? "" : "none";
  };

  // ---------------------------------------------------------------- rendering
  Explorer.prototype.render = function () {
    var s = this.state;
    this.syncControls();
    this.info.textContent = "";
    this.beamPanel.textContent = "";
    if (s.view === "steps") {
      this.stepsView();
    } else if (!s.kind) {
      this.stage.innerHTML = "";
      this.help.textContent = "Model " + this.data.model + " has no attention to show: its " +
        "decoder reads one fixed context vector. The Steps view shows the decoding.";
    } else if (s.view === "model") {
      if (s.zoom) this.heatmapView(s.kind, s.zoom[0], s.zoom[1]);
      else this.modelView(s.kind);
    } else {
      this.headView(s.kind);
    }
    if (s.pin) this.focus(s.pin[0], s.pin[1]);
  };

  Explorer.prototype.title = function (kind, layer, head) {
    var b = this.block(kind);
    return this.data.model + " \u00b7 " + KIND_NAMES[kind] + " \u00b7 layer " + (layer + 1) +
      "/" + b.layers + (b.heads === 1 ? "" : " \u00b7 " + (head < 0 ? "all " + b.heads +
      " heads" : "head " + (head + 1) + "/" + b.heads));
  };

  Explorer.prototype.headView = function (kind) {
    var s = this.state, b = this.block(kind), self = this;
    var m = this.matrix(kind, s.layer, 0), rowH = 20, top = 52, fs = 13;
    var heads = s.head < 0 ? range(b.heads) : [s.head];
    var qw = maxWidth(m.q, fs), kw = maxWidth(m.k, fs);
    var x1 = 16 + Math.max(qw, textWidth(m.qName, 12)) + 10, x2 = x1 + 260;
    var W = Math.max(x2 + 10 + kw + 16, boldWidth(this.title(kind, s.layer, s.head)));
    var H = top + Math.max(m.nq, m.nk) * rowH + 12;
    var yq = function (i) { return top + i * rowH + rowH / 2; };
    var out = [svgOpen(W, H), svgText(16, 20, this.title(kind, s.layer, s.head),
                                       ' font-weight="600"')];
    out.push(svgText(x1 - 8, 42, m.qName, ' text-anchor="end" fill="#777" font-size="12"'));
    out.push(svgText(x2 + 8, 42, m.kName, ' fill="#777" font-size="12"'));
    out.push('<g class="kae-links" stroke-width="2">');
    heads.forEach(function (h) {
      var mm = self.matrix(kind, s.layer, h);
      out.push('<g stroke="' + PALETTE[h % PALETTE.length] + '">');
      for (var i = 0; i < mm.nq; i++) {
        var start = '<line class="kae-link" x1="' + x1 + '" y1="' + yq(i) + '" x2="' + x2 +
          '" data-h="' + h + '" data-q="' + i + '" y2="';
        for (var j = 0; j < mm.nk; j++) {
          var w = mm.get(i, j);
          if (w <= 0) continue;                 // masked (or below the stored precision)
          out.push(start + yq(j) + '" stroke-opacity="' + w.toFixed(4) + '" data-k="' + j +
                   '" data-w="' + w.toFixed(8) + '"/>');
        }
      }
      out.push("</g>");
    });
    out.push("</g>");
    m.q.forEach(function (t, i) {
      out.push(svgText(x1 - 8, yq(i) + 4, t.text, ' class="kae-tok" data-side="q" data-i="' +
                       i + '" text-anchor="end" fill="' + (t.piece ? "#2b5cab" : "#222") + '"'));
    });
    m.k.forEach(function (t, j) {
      out.push(svgText(x2 + 8, yq(j) + 4, t.text, ' class="kae-tok" data-side="k" data-i="' +
                       j + '" fill="' + (t.piece ? "#2b5cab" : t.unk ? "#b00020" : "#222") +
                       '"'));
    });
    out.push("</svg>");
    this.stage.innerHTML = out.join("");
    this.help.textContent = "Each line joins " + article(m.qName) + " token (left) to " +
      article(m.kName) + " token (right); its opacity is the attention weight" + (heads.length > 1 ?
      ", one colour per head" : "") + ". Hover a token to see only its links; click it to " +
      "keep them (click again to release).";
  };

  Explorer.prototype.modelView = function (kind) {
    var b = this.block(kind), self = this, m = this.matrix(kind, 0, 0);
    var c = Math.max(2, Math.min(14, Math.floor(150 / Math.max(m.nq, m.nk))));
    var tw = m.nk * c, th = m.nq * c, padL = 64, padT = 52, gx = 20, gy = 26;
    var W = Math.max(padL + b.heads * (tw + gx) + 8, boldWidth(KIND_NAMES[kind]) + 190);
    var H = padT + b.layers * (th + gy);
    var out = [svgOpen(W, H), svgText(16, 20, this.data.model + " \u00b7 " + KIND_NAMES[kind] +
      " \u00b7 " + b.layers + (b.layers > 1 ? " layers" : " layer") + " \u00d7 " +
      b.heads + (b.heads > 1 ? " heads" : " head"), ' font-weight="600"')];
    range(b.heads).forEach(function (h) {
      out.push(svgText(padL + h * (tw + gx) + tw / 2, padT - 8, "head " + (h + 1),
                       ' text-anchor="middle" font-size="12" fill="' +
                       PALETTE[h % PALETTE.length] + '"'));
    });
    range(b.layers).forEach(function (l) {
      var y = padT + l * (th + gy);
      out.push(svgText(padL - 8, y + th / 2 + 4, "layer " + (l + 1),
                       ' text-anchor="end" font-size="12" fill="#555"'));
      range(b.heads).forEach(function (h) {
        var mm = self.matrix(kind, l, h), x = padL + h * (tw + gx);
        out.push('<g class="kae-thumb" data-l="' + l + '" data-h="' + h +
                 '" transform="translate(' + x + "," + y + ')">');
        out.push('<rect class="kae-frame" x="-1" y="-1" width="' + (tw + 2) + '" height="' +
                 (th + 2) + '" fill="#ffffff" stroke="#c8cbd2"/>');
        for (var i = 0; i < mm.nq; i++) {
          for (var j = 0; j < mm.nk; j++) {
            var w = mm.get(i, j);
            if (w < 0.004) continue;            // the colour of 0
            out.push('<rect x="' + j * c + '" y="' + i * c + '" width="' + c + '" height="' +
                     c + '" fill="' + heat(w) + '"/>');
          }
        }
        out.push("</g>");
      });
    });
    out.push("</svg>");
    this.stage.innerHTML = out.join("");
    this.help.textContent = "One heatmap per layer (rows) and head (columns): row i is how " +
      m.qName + " token i spreads its attention over the " + m.kName +
      " tokens (columns). Click a heatmap to enlarge it.";
  };

  Explorer.prototype.heatmapView = function (kind, l, h) {
    var m = this.matrix(kind, l, h), fs = 12;
    var c = Math.max(12, Math.min(28, Math.floor(620 / Math.max(m.nq, m.nk))));
    var qw = maxWidth(m.q, fs), kw = maxWidth(m.k, fs);
    var coverage = kind === "cross", extra = coverage ? c + 20 : 0;
    var padL = 24 + Math.max(qw, coverage ? textWidth("coverage", fs) : 0);
    var padT = 40 + Math.ceil(kw * 0.72) + 12;
    var W = Math.max(padL + m.nk * c + 24, boldWidth(this.title(kind, l, h)));
    var H = padT + m.nq * c + extra + 16, out = [svgOpen(W, H)];
    out.push(svgText(16, 20, this.title(kind, l, h), ' font-weight="600"'));
    m.k.forEach(function (t, j) {
      var x = padL + j * c + c / 2 + 4, y = padT - 6;
      out.push('<text class="kae-tok" data-side="k" data-i="' + j + '" x="' + r1(x) + '" y="' +
               y + '" font-size="' + fs + '" transform="rotate(-45 ' + r1(x) + " " + y +
               ')" fill="' + (t.piece ? "#2b5cab" : "#222") + '">' + esc(t.text) + "</text>");
    });
    m.q.forEach(function (t, i) {
      out.push(svgText(padL - 6, padT + i * c + c / 2 + 4, t.text,
                       ' class="kae-tok" data-side="q" data-i="' + i + '" text-anchor="end" ' +
                       'font-size="' + fs + '" fill="' + (t.piece ? "#2b5cab" : "#222") + '"'));
    });
    var sums = new Float64Array(m.nk);
    for (var i = 0; i < m.nq; i++) {
      for (var j = 0; j < m.nk; j++) {
        var w = m.get(i, j), masked = m.masked && m.masked(i, j);
        sums[j] += w;
        out.push('<rect class="kae-cell" x="' + (padL + j * c) + '" y="' + (padT + i * c) +
                 '" width="' + c + '" height="' + c + '" fill="' +
                 (masked ? "#f1f2f4" : heat(w)) + '" data-i="' + i + '" data-j="' + j +
                 '" data-w="' + w.toFixed(8) + '"/>');
      }
    }
    if (coverage) {                             // the attention each source token received
      var y = padT + m.nq * c + 14;
      out.push(svgText(padL - 6, y + c / 2 + 4, "coverage", ' text-anchor="end" ' +
                       'font-size="12" fill="#555"'));
      for (j = 0; j < m.nk; j++) {
        out.push('<rect x="' + (padL + j * c) + '" y="' + y + '" width="' + c + '" height="' +
                 c + '" fill="' + heat(Math.min(1, sums[j])) + '" stroke="#ffffff"/>');
        if (c >= 18) {
          out.push(svgText(padL + j * c + c / 2, y + c / 2 + 3, sums[j].toFixed(1),
                           ' text-anchor="middle" font-size="9" fill="' +
                           (sums[j] > 0.6 ? "#ffffff" : "#333") + '"'));
        }
      }
    }
    out.push("</svg>");
    this.stage.innerHTML = out.join("");
    this.help.textContent = "Row i: how " + m.qName + " token i attends to each " + m.kName +
      " token; darker is more." + (coverage ? " The last row sums each column: the " +
      "attention every source token received over the whole output (its coverage)." : "") +
      " Hover a cell for its weight.";
  };

  Explorer.prototype.stepsView = function () {
    var s = this.state, D = this.data, h = this.hypothesis(), self = this, t = s.step;
    var out, W, H;
    if (!h.cross) {
      this.stage.innerHTML = "";
      this.help.textContent = "Model " + D.model + " has no attention: its decoder reads " +
        "one fixed context vector at every step.";
    } else {
      var b = this.block("cross"), heads = s.head < 0 ? range(b.heads) : [s.head];
      var fs = 12, barH = 64, rowGap = 26, padL = 104, top = 64;
      var colW = this.src.map(function (x) { return Math.max(30, textWidth(x.text, fs) + 12); });
      var xs = [padL];
      colW.forEach(function (w, j) { xs.push(xs[j] + w); });
      var cov = new Float64Array(this.src.length), mats = heads.map(function (hh) {
        return self.matrix("cross", s.layer, hh);
      });
      for (var u = 0; u <= t; u++) {            // coverage: attention summed over steps <= t
        for (var j = 0; j < cov.length; j++) {
          var sum = 0;
          mats.forEach(function (mm) { sum += mm.get(u, j); });
          cov[j] += sum / mats.length;
        }
      }
      var covMax = Math.max(1, Math.max.apply(null, Array.prototype.slice.call(cov)));
      var rows = heads.length + 1, bottom = top + rows * (barH + rowGap);
      var prefix = this.tgt.slice(0, t).map(function (x) { return x.text; }).join(" ");
      var line = "step " + (t + 1) + "/" + this.tgt.length + ": ";
      W = Math.max(xs[xs.length - 1] + 20, padL + textWidth(line + prefix + " " +
                   this.tgt[t].text, 13) + 40, boldWidth(this.title("cross", s.layer, s.head)));
      H = bottom + 28;
      out = [svgOpen(W, H), svgText(16, 20, this.title("cross", s.layer, s.head),
                                    ' font-weight="600"')];
      out.push('<text x="16" y="44">' + esc(line) + '<tspan fill="#777">' + esc(prefix) +
               ' </tspan><tspan font-weight="700" fill="#1f4e99">' + esc(this.tgt[t].text) +
               "</tspan></text>");
      var drawRow = function (y, values, color, label, scale) {
        out.push(svgText(padL - 10, y + barH - 4, label, ' text-anchor="end" font-size="12" ' +
                         'fill="#555"'));
        out.push('<line x1="' + padL + '" x2="' + xs[xs.length - 1] + '" y1="' + (y + barH) +
                 '" y2="' + (y + barH) + '" stroke="#c8cbd2"/>');
        for (var j = 0; j < values.length; j++) {
          var v = values[j], bh = Math.min(barH, v / scale * barH);
          out.push('<rect x="' + r1(xs[j] + 4) + '" y="' + r1(y + barH - bh) + '" width="' +
                   r1(colW[j] - 8) + '" height="' + r1(bh) + '" fill="' + color +
                   '" data-j="' + j + '" data-w="' + v.toFixed(8) + '"/>');
          if (v >= 0.005) {
            out.push(svgText(xs[j] + colW[j] / 2, y + barH - bh - 3, v.toFixed(2),
                             ' text-anchor="middle" font-size="9" fill="#444"'));
          }
        }
      };
      heads.forEach(function (hh, r) {
        var mm = mats[r], vals = [];
        for (var j = 0; j < self.src.length; j++) vals.push(mm.get(t, j));
        drawRow(top + r * (barH + rowGap), vals, PALETTE[hh % PALETTE.length],
                b.heads > 1 ? "head " + (hh + 1) : "attention", 1);
      });
      var yc = top + heads.length * (barH + rowGap);
      drawRow(yc, Array.prototype.slice.call(cov), "#6d7f99", "coverage", covMax);
      var y1 = yc + barH - barH / covMax;
      out.push('<line x1="' + padL + '" x2="' + xs[xs.length - 1] + '" y1="' + r1(y1) +
               '" y2="' + r1(y1) + '" stroke="#b00020" stroke-dasharray="4 3"/>');
      out.push(svgText(xs[xs.length - 1] + 4, y1 + 4, "1", ' font-size="10" fill="#b00020"'));
      this.src.forEach(function (x, j) {
        out.push(svgText(xs[j] + colW[j] / 2, bottom + 4, x.text, ' class="kae-tok" ' +
                         'text-anchor="middle" font-size="' + fs + '" fill="' +
                         (x.piece ? "#2b5cab" : x.unk ? "#b00020" : "#222") + '"'));
      });
      out.push("</svg>");
      this.stage.innerHTML = out.join("");
      this.help.textContent = "The alignment of one decoding step: how much attention the " +
        "step that produced the highlighted token paid to each source token (one row per " +
        "head), and below, the coverage: the attention each source token has received up to " +
        "this step (averaged over the heads shown)." + (D.coverage_in_score ?
        " This decoder feeds its coverage vector into its attention score." : "") +
        " Move through the steps with \u25c0 \u25b6 or the slider.";
    }
    this.beamTable();
  };

  Explorer.prototype.beamTable = function () {
    var D = this.data, s = this.state;
    if (!D.steps) return;
    var chosen = this.hypothesis().tokens, panel = this.beamPanel;
    var isPrefix = function (tokens) {
      if (tokens.length > chosen.length) return false;
      for (var i = 0; i < tokens.length; i++) if (tokens[i] !== chosen[i]) return false;
      return true;
    };
    var words = function (tokens) {
      return tokens.map(function (t) { return tokenLabel(t, D.subword.target).text; }).join(" ");
    };
    var table = function (title, rows, pick) {
      panel.appendChild(el("div", "", title));
      var tab = el("table"), head = el("tr");
      (pick ? ["#", "hypothesis", "score", ""] : ["#", "hypothesis", "log p", "score", ""])
        .forEach(function (x) { head.appendChild(el("th", "", x)); });
      tab.appendChild(head);
      rows.forEach(function (r, i) {
        var tr = el("tr", (r.path ? "kae-path" : "") + (pick ? " kae-pick" : ""));
        if (pick) tr.setAttribute("data-hyp", String(i));
        var cells = [String(i + 1), words(r.tokens), r.score.toFixed(3), r.state];
        if (!pick) cells.splice(2, 0, r.log_prob.toFixed(3));
        cells.forEach(function (x) { tr.appendChild(el("td", "", x)); });
        tab.appendChild(tr);
      });
      panel.appendChild(tab);
    };
    var kept = D.steps[s.step];
    if (kept) {
      table("The beam after step " + (s.step + 1) + ": the hypotheses it kept, best score " +
            "first (shaded: on the way to the selected hypothesis)", kept.map(function (h) {
        return {tokens: h.tokens, log_prob: h.log_prob, score: h.score,
                state: h.finished ? "ended" : "live", path: isPrefix(h.tokens)};
      }), false);
    } else {
      panel.appendChild(el("div", "kae-dim", "The beam search had stopped before step " +
                           (s.step + 1) + "."));
    }
    table("Finished hypotheses (click one to explore its attention)",
          D.hypotheses.map(function (h, i) {
            return {tokens: h.tokens, score: h.score, state: i === s.hyp ? "selected" : "",
                    path: i === s.hyp};
          }), true);
  };

  // ---------------------------------------------------------------- hover and pin
  Explorer.prototype.hover = function (target, entering) {
    var s = this.state;
    if (s.view === "model" && s.zoom) return this.cellInfo(target, entering);
    if (s.view !== "head" || s.pin) return;
    var tok = target.closest && target.closest(".kae-tok[data-side]");
    if (!tok) return;
    if (entering) this.focus(tok.getAttribute("data-side"), +tok.getAttribute("data-i"));
    else this.unfocus();
  };

  Explorer.prototype.click = function (target) {
    var s = this.state;
    var thumb = target.closest && target.closest(".kae-thumb");
    if (thumb && s.view === "model") {
      s.zoom = [+thumb.getAttribute("data-l"), +thumb.getAttribute("data-h")];
      this.render();
      return;
    }
    var tok = target.closest && target.closest(".kae-tok[data-side]");
    if (!tok || s.view !== "head") return;
    var key = [tok.getAttribute("data-side"), +tok.getAttribute("data-i")];
    if (s.pin && s.pin[0] === key[0] && s.pin[1] === key[1]) {
      s.pin = null;
      this.unfocus();
    } else {
      s.pin = key;
      this.focus(key[0], key[1]);
    }
  };

  Explorer.prototype.focus = function (side, i) {
    var svg = this.stage.querySelector("svg");
    if (!svg || this.state.view !== "head") return;
    var attr = side === "q" ? "data-q" : "data-k", key = String(i), found = [];
    svg.classList.add("kae-focus");
    var links = svg.querySelectorAll(".kae-link");
    for (var n = 0; n < links.length; n++) {
      var on = links[n].getAttribute(attr) === key;
      links[n].classList.toggle("kae-on", on);
      if (on) found.push(links[n]);
    }
    var toks = svg.querySelectorAll(".kae-tok");
    for (n = 0; n < toks.length; n++) {
      toks[n].classList.toggle("kae-hot", toks[n].getAttribute("data-side") === side &&
                                          toks[n].getAttribute("data-i") === key);
    }
    var m = this.matrix(this.state.kind, this.state.layer, 0);
    var mine = side === "q" ? m.q[i] : m.k[i], other = side === "q" ? m.k : m.q;
    found.sort(function (a, b) { return b.getAttribute("data-w") - a.getAttribute("data-w"); });
    var parts = found.slice(0, 8).map(function (e) {
      var j = +e.getAttribute(side === "q" ? "data-k" : "data-q");
      return "\u00ab" + other[j].text + "\u00bb " + (+e.getAttribute("data-w")).toFixed(3) +
        (this.block(this.state.kind).heads > 1 ? " (h" + (+e.getAttribute("data-h") + 1) + ")" :
         "");
    }, this);
    this.info.textContent = "\u00ab" + mine.text + "\u00bb (" + (side === "q" ? m.qName :
      m.kName) + " token " + (i + 1) + "): " + found.length + " links" +
      (parts.length ? "; strongest: " + parts.join(" \u00b7 ") : "") +
      (this.state.pin ? "  [pinned]" : "");
  };

  Explorer.prototype.unfocus = function () {
    var svg = this.stage.querySelector("svg");
    if (!svg) return;
    svg.classList.remove("kae-focus");
    var on = svg.querySelectorAll(".kae-on, .kae-hot");
    for (var n = 0; n < on.length; n++) on[n].classList.remove("kae-on", "kae-hot");
    this.info.textContent = "";
  };

  Explorer.prototype.cellInfo = function (target, entering) {
    var cell = target.closest && target.closest(".kae-cell");
    if (!cell || !entering) return;
    var s = this.state, m = this.matrix(s.kind, s.zoom[0], s.zoom[1]);
    var i = +cell.getAttribute("data-i"), j = +cell.getAttribute("data-j");
    this.info.textContent = m.qName + " \u00ab" + m.q[i].text + "\u00bb \u2192 " + m.kName +
      " \u00ab" + m.k[j].text + "\u00bb: " + (+cell.getAttribute("data-w")).toFixed(4);
  };

  // ---------------------------------------------------------------- export
  Explorer.prototype.fileName = function (ext) {
    var s = this.state, parts = [this.data.model, s.view];
    if (s.view !== "steps" && s.kind) parts.push(s.kind);
    if (s.view === "model" && s.zoom) parts.push("L" + (s.zoom[0] + 1), "H" + (s.zoom[1] + 1));
    else if (s.view !== "model") parts.push("L" + (s.layer + 1), s.head < 0 ? "all" : "H" + (s.head + 1));
    if (s.view === "steps") parts.push("step" + (s.step + 1));
    return parts.join("_") + "." + ext;
  };

  // The current view as an SVG document: what is on screen (a hovered or pinned token's
  // links only, when one is).
  Explorer.prototype.svgDocument = function () {
    var svg = this.stage.querySelector("svg");
    if (!svg) return null;
    var clone = svg.cloneNode(true);
    if (svg.classList.contains("kae-focus")) {
      var links = clone.querySelectorAll(".kae-link:not(.kae-on)");
      for (var n = 0; n < links.length; n++) links[n].parentNode.removeChild(links[n]);
    }
    clone.removeAttribute("class");
    var hot = clone.querySelectorAll(".kae-hot");
    for (n = 0; n < hot.length; n++) hot[n].setAttribute("font-weight", "700");
    return '<?xml version="1.0" encoding="UTF-8"?>\n' +
      new XMLSerializer().serializeToString(clone);
  };

  Explorer.prototype.download = function (name, blob) {
    var a = document.createElement("a"), url = URL.createObjectURL(blob);
    a.href = url;
    a.download = name;
    a.style.display = "none";
    document.body.appendChild(a);
    a.click();
    setTimeout(function () {
      document.body.removeChild(a);
      URL.revokeObjectURL(url);
    }, 2000);
  };

  Explorer.prototype.exportSVG = function () {
    var text = this.svgDocument();
    if (text) this.download(this.fileName("svg"), new Blob([text], {type: "image/svg+xml"}));
    return text;
  };

  Explorer.prototype.exportPNG = function () {
    var text = this.svgDocument(), self = this, svg = this.stage.querySelector("svg");
    if (!text) return;
    var w = +svg.getAttribute("width"), h = +svg.getAttribute("height"), k = 2;
    var img = new Image();
    img.onload = function () {
      var canvas = document.createElement("canvas");
      canvas.width = w * k;
      canvas.height = h * k;
      var ctx = canvas.getContext("2d");
      ctx.fillStyle = "#ffffff";
      ctx.fillRect(0, 0, canvas.width, canvas.height);
      ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
      canvas.toBlob(function (blob) { self.download(self.fileName("png"), blob); },
                    "image/png");
    };
    img.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(text);
  };

  // ---------------------------------------------------------------- start
  function start() {
    var roots = document.querySelectorAll("div.kae:not([data-ready])");
    for (var n = 0; n < roots.length; n++) {
      var root = roots[n];
      root.setAttribute("data-ready", "1");
      try {
        root.kae = new Explorer(root);
      } catch (err) {
        var box = el("div", "kae-err", "The attention explorer could not draw this page: " +
                     err);
        root.appendChild(box);
        throw err;
      }
    }
  }
  start();
})();
