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

	function header() {
		var m = D.meta, t = D.total;
		app.appendChild(el("h1", {}, "netstage " + m.workload +
			": where the time of a request goes" + tailTop()));
		app.appendChild(el("p", { class: "lead" }, D.meta.joined +
			" transactions (" + m.sides.join(" and ") +
			" records joined on " + (m.clock && m.clock.aligned ?
			"the client's clock, the server's aligned" :
			"one clock") + ") · latency mean " +
			us(t.mean) + ", p50 " + us(t.p50) + ", p99 " +
			us(t.p99) + untimedNote() + " · " + m.date));
	}

	function waterfall() {
		var s = starts(), total = D.total.mean, W = 360;
		var nested = rows.some(function (r) { return r.depth; });
		section("Waterfall", "Each stage's mean, from where the " +
			"stages before it end" + (nested ? "; indented rows " +
			"split the client's remote (wire legs and the server)" :
			"") + ". Shares are of the mean latency; means add " +
			"up, percentiles need not.");
		var t = el("table", { id: "waterfall" });
		var h = el("tr");
		["stage", "mean", "p50", "p90", "p99", "share", ""].forEach(
			function (c, i) {
				h.appendChild(el("th", i ? {} : { class: "name" }, c));
			});
		t.appendChild(h);
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
			var g = sv("svg", { width: W, height: 14 });
			g.appendChild(sv("rect", {
				x: (W * s[i] / total).toFixed(1), y: 2,
				width: Math.max(1, W * r.mean / total).toFixed(1),
				height: 10, fill: color(i) }));
			var td = el("td");
			td.appendChild(g);
			tr.appendChild(td);
			t.appendChild(tr);
		});
		var tr = el("tr", { class: "total" });
		tr.appendChild(el("td", { class: "name" }, "= latency"));
		[D.total.mean, D.total.p50, D.total.p90, D.total.p99].forEach(
			function (v) { tr.appendChild(el("td", {}, fmt(v))); });
		tr.appendChild(el("td", {}, "100%"));
		tr.appendChild(el("td"));
		t.appendChild(tr);
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
		app.appendChild(t);
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

	// Histograms on one log axis, so stages compare at a glance.
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
			"10 bins per decade on a log axis shared by every stage.");
		var grid = el("div", { class: "grid" });
		all.forEach(function (r, i) {
			var W = 220, H = 70, card = el("div", { class: "card" });
			card.appendChild(el("h3", {}, r.name));
			card.appendChild(el("p", {}, "p50 " + us(r.p50) + " · p99 " +
				us(r.p99)));
			// ox: room for the first and last labels, centred.
			var ox = 18, g = sv("svg", { width: W + 2 * ox,
				height: H + 14, class: "hist",
				"data-stage": r.name });
			var max = 1;
			r.hist.forEach(function (b) { max = Math.max(max, b[1]); });
			var bw = W / (hi - lo);
			r.hist.forEach(function (b) {
				var h = H * b[1] / max;
				g.appendChild(sv("rect", {
					x: (ox + (Math.max(b[0], lo) - lo) * bw).toFixed(1),
					y: (H - h).toFixed(1),
					width: Math.max(1, bw - 0.5).toFixed(1),
					height: h.toFixed(1),
					fill: i < rows.length ? color(i) : "#1d2733" }));
			});
			// A label per decade, or per two when they would crowd.
			var step = 10 * bw >= 40 ? 10 : 20;
			for (var d = lo; d <= hi; d += 10) {
				var x = ox + (d - lo) * bw;
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
			var name = k ? rows[k - 1].name : "= latency";
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

	function slowest() {
		var W = 360;
		section("The slowest transactions", "Of the joined records, " +
			"stage by stage: each bar is one transaction's own " +
			"stages (top-level rows), the widest named, and " +
			"\u201cretransmitted\u201d where TCP resent its bytes " +
			"before the response came.");
		var t = el("table", { id: "slowest" });
		var h = el("tr");
		["t (s)", "flow", "seq", "latency", "mostly", ""].forEach(
			function (c) { h.appendChild(el("th", {}, c)); });
		t.appendChild(h);
		var max = D.slowest.length ? D.slowest[0].latency : 1;
		D.slowest.forEach(function (x) {
			var tr = el("tr"), g = sv("svg", { width: W, height: 14 });
			var at = 0, worst = -1;
			x.rows.forEach(function (v, i) {
				// remote's parts say more than remote itself.
				if (rows[i].name !== "remote" &&
				    (worst < 0 || v > x.rows[worst]))
					worst = i;
				if (rows[i].depth)
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
			tr.appendChild(el("td", { class: "name" }, (worst < 0 ? "" :
				rows[worst].name + " " + us(x.rows[worst])) +
				(x.retransmitted ? ", retransmitted" : "")));
			var td = el("td");
			td.appendChild(g);
			tr.appendChild(td);
			t.appendChild(tr);
		});
		app.appendChild(t);
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
