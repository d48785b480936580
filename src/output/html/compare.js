// Draws `netstage compare --report` from the JSON beside it, with
// page.js's helpers: what changed beyond noise first, then every
// figure of each side with its change and that change's interval.
// body[data-rendered] says how many figures the tables drew.

(function () {
	var D = JSON.parse(document.getElementById("netstage-data").textContent);
	var C = D.compare;
	var app = document.getElementById("app");
	var WORSE = "#b00020", BETTER = "#1a7f37", LEVEL = "#8a96a3";

	function color(f) {
		return f.judgement === "worse" ? WORSE :
			f.judgement === "better" ? BETTER : LEVEL;
	}
	// stage_app_p50_us -> "app p50"; latency_p99.9_us -> "latency p99.9"
	function label(f) {
		var n = f.name.replace(/_us$/, "").replace(/^stage_/, "");
		var i = n.lastIndexOf("_");
		return i < 0 ? n : n.slice(0, i) + " " + n.slice(i + 1);
	}
	function value(f, x) {
		if (x === null)
			return "-";
		if (x < 0)
			return "-" + value(f, -x);
		return /^throughput/.test(f.name) ? fmt(x) : us(x);
	}
	function pct(f) {
		return f.change_pct === null ? "from 0" :
			(f.change_pct > 0 ? "+" : "") + f.change_pct.toFixed(1) + "%";
	}
	function runs(n, files) {
		return n + " run" + (n === 1 ? "" : "s") + " (" +
			files.join(", ") + ")";
	}

	app.textContent = "";
	document.title = "netstage compare: " + C.workload + ", B against A";
	app.appendChild(el("h1", {}, document.title));
	// Stages first, which say where the time went, then the totals;
	// the surest first within each.
	var beyond = D.figures.filter(function (f) {
		return f.verdict !== "level";
	}).sort(function (a, b) {
		var sa = /^stage_/.test(a.name), sb = /^stage_/.test(b.name);
		return sa !== sb ? sb - sa : a.p - b.p;
	});
	var lead = C.compare_beyond_noise + " of " + C.compare_tested +
		" figures changed beyond noise" + (beyond.length ? ": " +
		beyond.slice(0, 4).map(function (f) {
			return f.side + " " + label(f) + " " + value(f, f.a) +
				" \u2192 " + value(f, f.b) + " (" + pct(f) + ", " +
				f.judgement + ")";
		}).join("; ") + (beyond.length > 4 ? "; ..." : "") : "") + ".";
	app.appendChild(el("p", { class: "lead", id: "answer" }, lead));
	app.appendChild(el("p", {}, "A: " + runs(C.compare_runs_a, D.a)));
	app.appendChild(el("p", {}, "B: " + runs(C.compare_runs_b, D.b)));
	app.appendChild(el("p", { class: "lead" }, C.compare_noise === "runs" ?
		"Noise: run to run, Welch's t over each group's runs. " +
		"Beyond it: Holm-adjusted p below " + C.compare_level +
		" over every figure tested, so the comparison as a whole " +
		"errs at most that often." :
		"Noise: each run's own (its intervals, its histograms' " +
		"order statistics), one run a side; runs vary more than " +
		"that from one to the next: compare groups of repeated " +
		"runs (A1 A2 A3 vs B1 B2 B3) to see run-to-run noise. " +
		"Beyond it: Holm-adjusted p below " + C.compare_level + "."));

	// The change's 95% interval as a bar about zero, in percent of A,
	// on one scale for all rows (the largest change, at most 100%).
	var W = window.innerWidth < 1000 ? 140 : 220, H = 16;
	var top = 5;
	D.figures.forEach(function (f) {
		if (f.a && f.low !== null)
			top = Math.max(top, Math.abs(100 * f.low / f.a),
				       Math.abs(100 * f.high / f.a));
	});
	top = Math.min(top, 100);
	function bar(f) {
		var s = sv("svg", { width: W, height: H, class: "interval" });
		var x = function (p) {
			p = Math.max(-top, Math.min(top, p));
			return W / 2 + p / top * (W / 2 - 4);
		};
		s.appendChild(sv("line", { x1: W / 2, x2: W / 2, y1: 0, y2: H,
			stroke: "#c4ccd4" }));
		if (!f.a || f.low === null)
			return s;
		var lo = x(100 * f.low / f.a), hi = x(100 * f.high / f.a);
		s.appendChild(sv("rect", { x: lo, y: 5, width: Math.max(hi - lo, 1),
			height: 6, fill: color(f), opacity: 0.5 }));
		if (Math.abs(f.change_pct) <= top) {
			s.appendChild(sv("circle", { cx: x(f.change_pct), cy: 8,
				r: 3, fill: color(f) }));
			return s;
		}
		// Off the scale: a head at its edge, pointing out.
		var e = f.change_pct > 0 ? W - 2 : 2, d = f.change_pct > 0 ? -7 : 7;
		s.appendChild(sv("path", { d: "M" + e + " 8 l" + d + " -5 v10 z",
			fill: color(f) }));
		return s;
	}

	var drawn = 0;
	["client", "server"].forEach(function (side) {
		var rows = D.figures.filter(function (f) {
			return f.side === side;
		});
		if (!rows.length)
			return;
		app.appendChild(el("h2", {}, side));
		var wrap = el("div", { class: "scroll" });
		var t = el("table", {});
		var h = el("tr", {});
		["figure", "A", "B", "change", "", "beyond noise?",
		 "change, 95% interval (\u00b1" + fmt(top) + "% of A)"].forEach(
			function (c, i) {
				h.appendChild(el("th", i ? {} : { class: "name" }, c));
			});
		t.appendChild(h);
		rows.forEach(function (f) {
			var r = el("tr", { class: f.verdict === "level" ? "" :
					   "beyond" });
			r.appendChild(el("td", { class: "name" }, label(f)));
			r.appendChild(el("td", {}, value(f, f.a)));
			r.appendChild(el("td", {}, value(f, f.b)));
			r.appendChild(el("td", {}, (f.change > 0 ? "+" : "") +
				value(f, f.change)));
			r.appendChild(el("td", {}, pct(f)));
			var v = el("td", { class: "name" }, f.p === null ?
				"untested" : f.verdict === "level" ? "no" :
				"yes, " + f.verdict + " (" + f.judgement + ")");
			v.style.color = color(f);
			r.appendChild(v);
			var c = el("td", {});
			c.appendChild(bar(f));
			r.appendChild(c);
			t.appendChild(r);
			drawn++;
		});
		wrap.appendChild(t);
		app.appendChild(wrap);
	});
	document.body.dataset.rendered = drawn;
})();
