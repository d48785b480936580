// Draws the netstage report from the JSON beside it, with page.js's
// helpers. body[data-rendered] says how many stages were drawn.

(function () {
	var D = JSON.parse(document.getElementById("netstage-data").textContent);
	var app = document.getElementById("app");
	var rows = D.rows;

	// One hue per stage, the server's warm, the wire grey.
	function color(i) {
		var r = rows[i];
		if (r.name.indexOf("wire") === 0)
			return "#9aa5b1";
		if (r.name === "remote")
			return "#d5dbe1";
		var inner = r.depth > 0 || r.name.indexOf("server ") === 0;
		var k = 0;
		for (var j = 0; j < i; j++)
			if ((rows[j].depth > 0) === (r.depth > 0))
				k++;
		return inner ? "hsl(" + (20 + 37 * k % 60) + ",75%," +
			(48 + 7 * (k % 3)) + "%)" :
			"hsl(" + (195 + 29 * k % 90) + ",55%," +
			(42 + 8 * (k % 3)) + "%)";
	}
	function section(title, lead) {
		app.appendChild(el("h2", {}, title));
		if (lead)
			app.appendChild(el("p", { class: "lead" }, lead));
	}

	// Each row's mean start: depth-0 rows follow each other, depth-1
	// rows follow each other inside the row before them.
	function starts() {
		var s = [], top = 0, inner = 0;
		for (var i = 0; i < rows.length; i++) {
			if (rows[i].depth === 0) {
				s.push(top);
				inner = top;
				top += rows[i].mean;
			} else {
				s.push(inner);
				inner += rows[i].mean;
			}
		}
		return s;
	}

	// The joined records leave out what a side could not time, which
	// may be the slowest: say so where the figures are first read.
	function untimedNote() {
		var T = D.meta.trace, n = [];
		Object.keys(T).forEach(function (side) {
			if (T[side].trace_incomplete)
				n.push(side + " " + T[side].trace_incomplete);
		});
		return n.length ? " · not timed, left out of every figure: " +
			n.join(", ") + " (below)" : "";
	}

	// The stage that makes the p99 tail, the client's first: "" if no
	// side had enough records to say (trace/tail.h).
	function tailTop() {
		var T = D.meta.tail || {}, sides = Object.keys(T);
		sides.sort(function (a, b) {
			return (b === "client") - (a === "client");
		});
		for (var i = 0; i < sides.length; i++) {
			var k = T[sides[i]], top = k.tail_p99_top;
			if (top)
				return ": the " + (sides.length > 1 ? sides[i] +
					"'s " : "") + "p99 tail is mostly " + top +
					" (" + Math.round(100 *
					k["tail_p99_" + top + "_share"]) + "%)";
		}
		return "";
	}

	// --rate: the latency runs from each request's intended send.
	function latencyName() {
		return D.meta.options && Number(D.meta.options.rate) > 0 ?
			"latency from intended send" : "latency";
	}

	function header() {
		var m = D.meta, t = D.total;
		app.appendChild(el("h1", {}, "netstage " + m.workload +
			": where the time of a request goes" + tailTop()));
		app.appendChild(el("p", { class: "lead" }, D.meta.joined +
			" transactions (" + m.sides.join(" and ") +
			" records joined on " + (m.clock && m.clock.aligned ?
			"the client's clock, the server's aligned" :
			"one clock") + ") · " + latencyName() + " mean " +
			us(t.mean) + ", p50 " + us(t.p50) + ", p99 " +
			us(t.p99) + untimedNote() + " · " + m.date));
	}

	// Round steps for an axis of `max` us: 1, 2 or 5 times a power
	// of ten, four to eight of them.
	function ticks(max) {
		var p = Math.pow(10, Math.floor(Math.log10(max / 4))), t = [];
		var step = [1, 2, 5, 10].map(function (m) { return m * p; })
			.filter(function (v) { return max / v <= 8; })[0];
		for (var v = 0; v <= max + 1e-9; v += step)
			t.push(v);
		return t;
	}

	// Each row on one time axis: its mean as a bar where the stages
	// before it end, and from that start its p50 (a tick) and its p99
	// (the whisker's end), so the tail of each row shows on the scale
	// of the whole.
	function waterfall() {
		// Narrower on a narrow window, so the axis stays in view.
		var W = Math.max(200, Math.min(420, window.innerWidth - 500));
		var s = starts(), X = function (v) {
			return (W - 8) * v / top + 4;
		};
		var top = D.total.p99;
		rows.forEach(function (r, i) {
			top = Math.max(top, s[i] + r.p99);
		});
		var nested = rows.some(function (r) { return r.depth; });
		section("Waterfall", "Each stage's mean as a bar, from where " +
			"the stages before it end" + (nested ? "; indented " +
			"rows split the client's remote (wire legs and the " +
			"server)" : "") + "; from the same start, a tick at its " +
			"p50 and a whisker to its p99, on one time axis. Shares " +
			"are of the mean latency; means add up, percentiles " +
			"need not.");
		var t = el("table", { id: "waterfall" });
		var h = el("tr");
		["stage", "mean", "p50", "p90", "p99", "share", ""].forEach(
			function (c, i) {
				h.appendChild(el("th", i ? {} : { class: "name" }, c));
			});
		t.appendChild(h);
		function bar(at, r, fill) {
			var g = sv("svg", { width: W, height: 14, class: "wf" });
			g.appendChild(sv("line", { x1: X(at), x2: X(at + r.p99),
				y1: 7, y2: 7, stroke: fill, "stroke-width": 1 }));
			g.appendChild(sv("line", { x1: X(at + r.p99),
				x2: X(at + r.p99), y1: 3, y2: 11, stroke: fill }));
			g.appendChild(sv("rect", { x: X(at).toFixed(1), y: 3,
				width: Math.max(1, X(at + r.mean) - X(at)).toFixed(1),
				height: 8, fill: fill }));
			g.appendChild(sv("line", { x1: X(at + r.p50),
				x2: X(at + r.p50), y1: 0, y2: 14, stroke: "#1d2733",
				"stroke-width": 1.5 }));
			var td = el("td");
			td.appendChild(g);
			return td;
		}
		rows.forEach(function (r, i) {
			var tr = el("tr", { class: r.depth ? "inner" : "" });
			var name = el("td", { class: "name" });
			var sw = el("span", { class: "swatch" });
			sw.style.background = color(i);
			name.appendChild(sw);
			name.appendChild(document.createTextNode(r.name));
			tr.appendChild(name);
			[r.mean, r.p50, r.p90, r.p99].forEach(function (v) {
				tr.appendChild(el("td", {}, fmt(v)));
			});
			tr.appendChild(el("td", {}, r.share.toFixed(1) + "%"));
			tr.appendChild(bar(s[i], r, color(i)));
			t.appendChild(tr);
		});
		var tr = el("tr", { class: "total" });
		tr.appendChild(el("td", { class: "name" }, "= " + latencyName()));
		[D.total.mean, D.total.p50, D.total.p90, D.total.p99].forEach(
			function (v) { tr.appendChild(el("td", {}, fmt(v))); });
		tr.appendChild(el("td", {}, "100%"));
		tr.appendChild(bar(0, D.total, "#52606d"));
		t.appendChild(tr);
		// The axis, under the bars' column.
		var ax = el("tr", { class: "axis" }), g = sv("svg", {
			width: W, height: 18,
			class: "axis" });
		ticks(top).forEach(function (v) {
			g.appendChild(sv("line", { x1: X(v), x2: X(v), y1: 0,
				y2: 4, stroke: "#9aa5b1" }));
			g.appendChild(sv("text", { x: X(v), y: 15,
				"text-anchor": v ? "middle" : "start" },
				v + (v ? "" : " us")));
		});
		for (var k = 0; k < 6; k++)
			ax.appendChild(el("td"));
		var td = el("td");
		td.appendChild(g);
		ax.appendChild(td);
		t.appendChild(ax);
		app.appendChild(t);
	}

	// What each side traced but could not time, from its trace_* keys:
	// those transactions have no stages, so nothing above shows them.
	function untimed() {
		var T = D.meta.trace, sides = Object.keys(T);
		if (!sides.length)
			return;
		section("What the trace could not time", "Counted by each " +
			"side, and left out of every figure above: a " +
			"transaction missing a kernel boundary, with its " +
			"boundaries out of order, or without a record has no " +
			"stages (docs/stages.md, Incomplete). Retransmitted: " +
			"transactions whose bytes TCP resent on that side, " +
			"timed all the same (their wait is on the wire).");
		var t = el("table", { id: "untimed" });
		var h = el("tr");
		["side", "timed", "not timed", "missing a boundary",
		 "out of order", "no record", "where", "events lost",
		 "retransmitted", "cost / transaction"].forEach(function (c, i) {
			h.appendChild(el("th", i ? {} : { class: "name" }, c));
		});
		t.appendChild(h);
		sides.forEach(function (side) {
			var k = T[side], tr = el("tr", { "data-side": side });
			tr.appendChild(el("td", { class: "name" }, side));
			if (k.trace_transactions === undefined) {
				tr.appendChild(el("td", { class: "kv", colspan: 9 },
					"not traced: " + (k.trace_error || "")));
				t.appendChild(tr);
				return;
			}
			var all = k.trace_transactions + k.trace_incomplete;
			var share = all ? " (" + (100 * k.trace_transactions /
				all).toFixed(1) + "%)" : "";
			var where = String(k.trace_incomplete_at || "")
				.split(",").filter(Boolean).map(function (b) {
					return b.replace(":", " ");
				}).join(" · ");
			[k.trace_transactions + share +
			 (k.trace_sample > 1 ? ", 1 in " + k.trace_sample : ""),
			 k.trace_incomplete, k.trace_incomplete_missing,
			 k.trace_incomplete_disorder, k.trace_incomplete_norecord,
			 where, k.trace_lost, k.trace_retransmitted,
			 k.trace_cost_ns === undefined ? "" :
				k.trace_cost_ns + " ns"].forEach(function (v, i) {
				tr.appendChild(el("td", { "data-key": ["timed",
					"incomplete", "missing", "disorder",
					"norecord", "at", "lost", "retransmitted",
					"cost"][i] },
					v === undefined ? "" : String(v)));
			});
			t.appendChild(tr);
		});
		var wrap = el("div", { class: "scroll" });
		wrap.appendChild(t);
		app.appendChild(wrap);
		sides.forEach(function (side) {
			var k = T[side];
			if (!k.trace_held_back_count)
				return;
			app.appendChild(el("p", { class: "held-back",
				"data-count": k.trace_held_back_count },
				side + ": " + k.trace_held_back_count +
				" responses TCP held back (out of order at " +
				"APP_DONE): they reached the device p50 " +
				us(k.trace_held_back_p50_us) + ", p99 " +
				us(k.trace_held_back_p99_us) + ", max " +
				us(k.trace_held_back_max_us) + " after send() " +
				"returned. That wait is in the client's latency " +
				"and in no stage."));
		});
	}

	// Histograms on one log time axis, so stages compare at a glance,
	// and a log count axis, so that the tail's few shows beside the
	// body's many; p50 and p99 marked.
	function histograms() {
		var all = rows.concat([D.total]), lo = 1e9, hi = 0;
		all.forEach(function (r) {
			r.hist.forEach(function (b) {
				lo = Math.min(lo, b[0]);
				hi = Math.max(hi, b[0] + 1);
			});
		});
		// From 100 ns at least: a 0 ns stage (a read of an epoll
		// batch) sits in the first bin rather than stretch the axis.
		lo = Math.max(20, Math.floor(lo / 10) * 10);
		hi = Math.max(lo + 10, Math.ceil(hi / 10) * 10);
		section("Latency of each stage", "Transactions per bin, " +
			"10 bins per decade, on a log time axis shared by every " +
			"stage and a log count axis (1, 10, 100, ...); the " +
			"dark line is the p50, the dashed one the p99.");
		var grid = el("div", { class: "grid" });
		all.forEach(function (r, i) {
			var W = 220, H = 70, card = el("div", { class: "card" });
			var fill = i < rows.length ? color(i) : "#1d2733";
			card.appendChild(el("h3", {}, r.name));
			card.appendChild(el("p", {}, "p50 " + us(r.p50) + " · p99 " +
				us(r.p99)));
			// ox: room for the count labels and the first time label.
			var ox = 30, g = sv("svg", { width: W + ox + 18,
				height: H + 14, class: "hist",
				"data-stage": r.name });
			var max = 1;
			r.hist.forEach(function (b) { max = Math.max(max, b[1]); });
			var top = Math.ceil(Math.log10(max + 1));
			var Y = function (n) {
				return H - H * Math.log10(n + 1) / top;
			};
			for (var e = 0; e <= top; e++) {
				var y = Y(Math.pow(10, e) - 1);
				g.appendChild(sv("line", { x1: ox - 3, x2: ox + W,
					y1: y, y2: y, stroke: e ? "#eef1f4" : "#9aa5b1" }));
				if (e % (top > 4 ? 2 : 1) === 0)
					g.appendChild(sv("text", { x: ox - 5, y: y + 4,
						"text-anchor": "end" },
						e >= 6 ? Math.pow(10, e - 6) + "M" :
						e >= 3 ? Math.pow(10, e - 3) + "k" :
						String(Math.pow(10, e))));
			}
			var bw = W / (hi - lo);
			var XB = function (d) { return ox + (d - lo) * bw; };
			r.hist.forEach(function (b) {
				var y = Y(b[1]);
				g.appendChild(sv("rect", {
					x: XB(Math.max(b[0], lo)).toFixed(1),
					y: y.toFixed(1),
					width: Math.max(1, bw - 0.5).toFixed(1),
					height: (H - y).toFixed(1), fill: fill }));
			});
			[[r.p50, ""], [r.p99, "3,2"]].forEach(function (p) {
				if (!(p[0] > 0))
					return;
				var x = XB(Math.max(lo, Math.log10(p[0] * 1e3) * 10));
				g.appendChild(sv("line", { x1: x, x2: x, y1: 0, y2: H,
					stroke: "#1d2733", "stroke-dasharray": p[1],
					class: "pct" }));
			});
			// A label per decade, or per two when they would crowd.
			var step = 10 * bw >= 40 ? 10 : 20;
			for (var d = lo; d <= hi; d += 10) {
				var x = XB(d);
				g.appendChild(sv("line", { x1: x, x2: x, y1: H,
					y2: H + 3, stroke: "#9aa5b1" }));
				if ((d - lo) % step)
					continue;
				var ns = Math.pow(10, d / 10);
				var label = ns >= 1e6 ? ns / 1e6 + "ms" :
					ns >= 1e3 ? ns / 1e3 + "us" : ns + "ns";
				g.appendChild(sv("text", { x: x, y: H + 13,
					"text-anchor": "middle" }, label));
			}
			card.appendChild(g);
			grid.appendChild(card);
		});
		app.appendChild(grid);
	}

	function line(g, ys, max, W, H, stroke, dash) {
		var n = ys.length, pts = ys.map(function (y, k) {
			return ((n > 1 ? k / (n - 1) : 0.5) * W).toFixed(1) +
				"," + (H - H * y / max).toFixed(1);
		});
		g.appendChild(sv("polyline", { points: pts.join(" "),
			fill: "none", stroke: stroke,
			"stroke-dasharray": dash || "none", "stroke-width": 1.5 }));
	}

	function overTime() {
		var iv = D.intervals, cols = iv.columns, n = iv.n.length;
		section("Over time", "p50 (solid) and p99 (dashed) of each " +
			"interval of " + D.meta.interval_s + " s, from the " +
			"joined records.");
		var t = el("table", { id: "over-time" });
		var h = el("tr");
		["stage", "p50 range", "p99 range", n + " intervals"].forEach(
			function (c, i) {
				h.appendChild(el("th", i ? {} : { class: "name" }, c));
			});
		t.appendChild(h);
		cols.forEach(function (c, k) {
			var name = k ? rows[k - 1].name : "= " + latencyName();
			var p50 = c.map(function (v) { return v[0]; });
			var p99 = c.map(function (v) { return v[1]; });
			var max = Math.max.apply(null, p99.concat([1e-3]));
			var tr = el("tr", { class: k && rows[k - 1].depth ?
				"inner" : k ? "" : "total" });
			tr.appendChild(el("td", { class: "name" }, name));
			tr.appendChild(el("td", {}, fmt(Math.min.apply(null, p50)) +
				"-" + fmt(Math.max.apply(null, p50))));
			tr.appendChild(el("td", {}, fmt(Math.min.apply(null, p99)) +
				"-" + fmt(Math.max.apply(null, p99))));
			var g = sv("svg", { width: 300, height: 24 });
			var stroke = k ? color(k - 1) : "#1d2733";
			line(g, p50, max, 300, 22, stroke);
			line(g, p99, max, 300, 22, stroke, "3,2");
			var td = el("td");
			td.appendChild(g);
			tr.appendChild(td);
			t.appendChild(tr);
		});
		app.appendChild(t);
	}

	// Perfetto's UI takes a trace from the page that opened it, by
	// postMessage() once it answers PING with PONG, and zooms to
	// visStart..visEnd (ns) and runs `query` on it (perfetto.dev,
	// "Deep linking to the Perfetto UI"). Browsers keep file:// pages
	// from this: such a page says how to serve itself instead.
	var PERFETTO = "https://ui.perfetto.dev";

	function perfettoHref(x) {
		var a = x.span_ns[0], b = x.span_ns[1];
		var pad = Math.max(1000, Math.round((b - a) / 10));
		var lo = Math.max(0, a - pad);
		// Its halves on both sides: the client's and the server's.
		var q = "select id, ts, dur, name from slice where name = " +
			"'transaction' and extract_arg(arg_set_id, " +
			"'args.seq') = " + x.seq + " and ts between " +
			lo + " and " + b;
		return PERFETTO + "/?visStart=" + lo + "&visEnd=" +
			(b + pad) + "&query=" + encodeURIComponent(q);
	}

	function servedNote() {
		var page = location.pathname.replace(/.*\//, "");
		return "Perfetto takes a trace only from a page served over " +
			"http: browsers keep a file:// page from handing it " +
			"over. In this page's directory run \u201cpython3 -m " +
			"http.server -b 127.0.0.1 8000\u201d and open " +
			"http://127.0.0.1:8000/" + page + ", where each link " +
			"opens " + D.meta.perfetto + " in Perfetto at its " +
			"transaction.";
	}

	function openPerfetto(ev, note) {
		ev.preventDefault();
		if (location.protocol === "file:") {
			note.textContent = servedNote();
			return;
		}
		var win = window.open(ev.currentTarget.href);
		if (!win)
			return;
		fetch(encodeURIComponent(D.meta.perfetto)).then(function (r) {
			return r.arrayBuffer();
		}).then(function (buf) {
			var ping = setInterval(function () {
				win.postMessage("PING", PERFETTO);
			}, 100);
			window.addEventListener("message", function pong(e) {
				if (e.source !== win || e.data !== "PONG")
					return;
				clearInterval(ping);
				window.removeEventListener("message", pong);
				win.postMessage({ perfetto: { buffer: buf,
					title: "netstage " + D.meta.workload,
					fileName: D.meta.perfetto } }, PERFETTO);
			});
		});
	}

	function slowest() {
		var W = 360;
		section("The slowest transactions", "Of the joined records, " +
			"stage by stage: each bar is one transaction's own " +
			"stages in the rows' colours (the client's remote as " +
			"the rows that split it), the widest named, and " +
			"\u201cretransmitted\u201d where TCP resent its bytes " +
			"before the response came." + (D.meta.perfetto ?
			" \u201copen\u201d shows it in Perfetto, from " +
			D.meta.perfetto + " beside this page." : ""));
		var t = el("table", { id: "slowest" });
		var h = el("tr");
		var linked = !!D.meta.perfetto;
		var note = el("p", { class: "lead", id: "perfetto-note" });
		// The link before the bar, which a narrow window cuts.
		["t (s)", "flow", "seq", "latency", "mostly"].concat(
			linked ? ["Perfetto"] : [], [""]).forEach(
			function (c) { h.appendChild(el("th", {}, c)); });
		t.appendChild(h);
		var max = D.slowest.length ? D.slowest[0].latency : 1;
		var nested = rows.some(function (r) { return r.depth; });
		D.slowest.forEach(function (x) {
			var tr = el("tr"), g = sv("svg", { width: W, height: 14 });
			var at = 0, worst = -1;
			x.rows.forEach(function (v, i) {
				// remote's parts say more than remote itself.
				if (rows[i].name !== "remote" &&
				    (worst < 0 || v > x.rows[worst]))
					worst = i;
				// The bar in the rows' colours: remote as its
				// parts when the server's rows split it.
				if (nested ? rows[i].name === "remote" : rows[i].depth)
					return;
				var rect = sv("rect", { x: (W * at / max).toFixed(1),
					y: 2, height: 10,
					width: (W * v / max).toFixed(1),
					fill: color(i) });
				rect.appendChild(sv("title", {}, rows[i].name + " " +
					us(v)));
				g.appendChild(rect);
				at += v;
			});
			[x.t.toFixed(3), x.flow, x.seq, us(x.latency)].forEach(
				function (v) { tr.appendChild(el("td", {}, v)); });
			var most = el("td", { class: "name" });
			if (worst >= 0) {
				var sw = el("span", { class: "swatch" });
				sw.style.background = color(worst);
				most.appendChild(sw);
			}
			most.appendChild(document.createTextNode((worst < 0 ? "" :
				rows[worst].name + " " + us(x.rows[worst])) +
				(x.retransmitted ? ", retransmitted" : "")));
			tr.appendChild(most);
			var td = el("td");
			if (linked) {
				if (x.span_ns) {
					var a = el("a", { href: perfettoHref(x),
						class: "perfetto" }, "open");
					a.addEventListener("click", function (ev) {
						openPerfetto(ev, note);
					});
					td.appendChild(a);
				}
				tr.appendChild(td);
				td = el("td");
			}
			td.appendChild(g);
			tr.appendChild(td);
			t.appendChild(tr);
		});
		app.appendChild(t);
		if (linked)
			app.appendChild(note);
	}

	function run() {
		var m = D.meta;
		section("The run");
		var t = el("table", { id: "run" });
		[["workload", m.workload], ["netstage", m.version],
		 ["kernel", m.kernel], ["CPUs", m.cpus], ["date", m.date],
		 ["trace hooks", m.hooks], ["records", m.records + " kept, " +
			m.joined + " joined"]].concat(m.clock ? [["clocks",
			(m.clock.aligned ? "two: the server's aligned, " :
			 "one; the fit, a check: ") + m.clock.offset_us +
			" us, " + m.clock.drift_ppm + " ppm; bound " +
			m.clock.bound_us + " us if the wire legs' minima are " +
			"equal, " + m.clock.causal_bound_us + " us from " +
			"causality; " + m.clock.negative_legs +
			" legs below zero"]] : []).forEach(function (kv) {
			var tr = el("tr");
			tr.appendChild(el("th", { class: "name" }, kv[0]));
			tr.appendChild(el("td", { class: "kv" }, String(kv[1])));
			t.appendChild(tr);
		});
		app.appendChild(t);
		var d = el("details");
		d.appendChild(el("summary", {}, "options"));
		var o = el("table", { id: "options" });
		Object.keys(m.options).forEach(function (k) {
			var tr = el("tr");
			tr.appendChild(el("th", { class: "name" }, k));
			tr.appendChild(el("td", { class: "kv" },
				String(m.options[k])));
			o.appendChild(tr);
		});
		d.appendChild(o);
		app.appendChild(d);
	}

	app.textContent = "";
	header();
	waterfall();
	untimed();
	histograms();
	overTime();
	slowest();
	run();
	document.body.dataset.rendered = rows.length;
})();
