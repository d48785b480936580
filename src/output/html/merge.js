// Draws `netstage merge --report` from the JSON beside it, with
// page.js's helpers. body[data-rendered] says how many runs the
// histogram drew.

(function () {
	var D = JSON.parse(document.getElementById("netstage-data").textContent);
	var app = document.getElementById("app");

	function count(n) {
		return n.toLocaleString("en-US");
	}
	function rate(x) {
		return x >= 100 ? count(Math.round(x)) : fmt(x);
	}
	// A power of ten of microseconds, as an axis says it.
	function decade(e) {
		return e >= 6 ? Math.pow(10, e - 6) + " s" :
			e >= 3 ? Math.pow(10, e - 3) + " ms" :
			e >= 0 ? Math.pow(10, e) + " us" :
			Math.pow(10, e + 3).toFixed(0) + " ns";
	}
	// BINS a decade: the histograms' buckets (128 an octave) summed,
	// so that a run's line shows its shape rather than every bucket.
	var BINS = 16;
	function rebin(buckets) {
		var m = {};
		buckets.forEach(function (b) {
			var k = Math.floor(Math.log10((b[0] + b[1]) / 2) * BINS);
			m[k] = (m[k] || 0) + b[2];
		});
		return Object.keys(m).map(Number).sort(function (a, b) {
			return a - b;
		}).map(function (k) {
			return [Math.pow(10, k / BINS), Math.pow(10, (k + 1) / BINS),
				m[k]];
		});
	}
	// One hue per run, the whole in slate.
	function color(i) {
		return "hsl(" + (200 + 47 * i % 160) + ",60%," +
			(40 + 8 * (i % 3)) + "%)";
	}
	var WHOLE = "#52606d";

	app.textContent = "";
	document.title = "netstage merge: " + D.runs.length + " " + D.role +
		" runs of " + D.workload;
	app.appendChild(el("h1", {}, document.title));
	var w = D.whole;
	var lead = (D.concurrent ? "At once: the rates add, " :
		"One after another: the whole's rate, ") + count(w.transactions) +
		" transactions" + (w.rate >= 0 ? ", " + rate(w.rate) +
		(D.mbps ? " Mbit/s" : " a second") : "") +
		(w.p50_us !== undefined ? "; merged p50 " + us(w.p50_us) +
		 ", p99 " + us(w.p99_us) : "") +
		". Percentiles are read from the runs' histograms merged " +
		"bucket by bucket, never averaged.";
	app.appendChild(el("p", { class: "lead" }, lead));
	if (D.missing.length)
		app.appendChild(el("p", { class: "error" }, "No result from " +
			D.missing.join(", ") + ": the whole lacks " +
			(D.missing.length > 1 ? "them." : "it.")));

	// The runs, and the whole beneath them.
	app.appendChild(el("h2", {}, "Runs"));
	var t = el("table");
	var hr = el("tr");
	["run", "transactions", D.mbps ? "Mbit/s" : "per second", "p50",
	 "p99", "p99.9", "CPU %"].forEach(function (h, i) {
		hr.appendChild(el("th", i ? {} : { class: "name" }, h));
	});
	t.appendChild(hr);
	D.runs.concat([w]).forEach(function (r, i) {
		var last = i === D.runs.length;
		var tr = el("tr", last ? { class: "total" } : {});
		var name = el("td", { class: "name" });
		var sw = el("span", { class: "swatch" });
		sw.style.background = last ? WHOLE : color(i);
		name.appendChild(sw);
		name.appendChild(document.createTextNode(last ? "merged" : r.name));
		tr.appendChild(name);
		tr.appendChild(el("td", {}, count(r.transactions)));
		tr.appendChild(el("td", {}, r.rate >= 0 ? rate(r.rate) : "-"));
		["p50_us", "p99_us", "p999_us"].forEach(function (k) {
			tr.appendChild(el("td", {}, r[k] !== undefined ?
				us(r[k]) : "-"));
		});
		tr.appendChild(el("td", {}, r.cpu >= 0 ? fmt(r.cpu) : ""));
		t.appendChild(tr);
	});
	app.appendChild(t);

	// Latency: the merged histogram's bars, each run's as a line, on
	// log axes (the tail is where runs differ).
	var drawn = 0;
	if (w.buckets && w.buckets.length) {
		app.appendChild(el("h2", {}, "Latency, merged and by run"));
		app.appendChild(el("p", { class: "lead" }, "Transactions in " +
			"each of " + BINS + " bins a decade, both axes " +
			"logarithmic: the bars the merge, a line each run; " +
			"dashed: the merged p50 and p99."));
		var W = Math.max(480, Math.min(1000, app.clientWidth - 20));
		var H = 300, L = 56, R = 32, T = 12, B = 36;
		var lo = Infinity, hi = 0, cmax = 1;
		D.runs.concat([w]).forEach(function (r) {
			if (r.buckets)
				r.bins = rebin(r.buckets);
			(r.bins || []).forEach(function (b) {
				lo = Math.min(lo, b[0]);
				hi = Math.max(hi, b[1]);
				cmax = Math.max(cmax, b[2]);
			});
		});
		lo = Math.max(lo, 0.001);
		var lx0 = Math.floor(Math.log10(lo)), lx1 = Math.ceil(Math.log10(hi));
		var ly1 = Math.ceil(Math.log10(cmax));
		if (ly1 < 1)
			ly1 = 1;
		// The axis runs from the decade below the data's least value:
		// only what lies below that (a p50 of 0) is held at its edge.
		function x(v) {
			return L + (Math.max(Math.log10(v), lx0) - lx0) /
				(lx1 - lx0) * (W - L - R);
		}
		function y(c) {
			return T + (1 - Math.log10(Math.max(c, 1)) / ly1) *
				(H - T - B);
		}
		var g = sv("svg", { width: W, height: H, role: "img",
			"aria-label": "latency histograms" });
		for (var e = lx0; e <= lx1; e++) {
			g.appendChild(sv("line", { x1: x(Math.pow(10, e)),
				x2: x(Math.pow(10, e)), y1: T, y2: H - B,
				stroke: "#e3e7eb" }));
			g.appendChild(sv("text", { x: x(Math.pow(10, e)),
				y: H - B + 14, "text-anchor": "middle" },
				decade(e)));
		}
		for (var k = 0; k <= ly1; k++) {
			g.appendChild(sv("line", { x1: L, x2: W - R,
				y1: y(Math.pow(10, k)), y2: y(Math.pow(10, k)),
				stroke: "#e3e7eb" }));
			g.appendChild(sv("text", { x: L - 6,
				y: y(Math.pow(10, k)) + 4, "text-anchor": "end" },
				count(Math.pow(10, k))));
		}
		g.appendChild(sv("text", { x: (L + W - R) / 2, y: H - 4,
			"text-anchor": "middle" }, "latency"));
		g.appendChild(sv("text", { x: 12, y: (T + H - B) / 2,
			transform: "rotate(-90 12 " + (T + H - B) / 2 + ")",
			"text-anchor": "middle" }, "transactions"));
		w.bins.forEach(function (b) {
			var x0 = x(b[0]), x1 = Math.max(x(b[1]), x0 + 1);
			g.appendChild(sv("rect", { x: x0, width: x1 - x0,
				y: y(b[2]), height: H - B - y(b[2]),
				fill: WHOLE, "fill-opacity": 0.35 }));
		});
		D.runs.forEach(function (r, i) {
			if (!r.bins || !r.bins.length)
				return;
			var pts = r.bins.map(function (b) {
				return x((b[0] + b[1]) / 2).toFixed(1) + "," +
					y(b[2]).toFixed(1);
			});
			g.appendChild(sv("polyline", { points: pts.join(" "),
				fill: "none", stroke: color(i),
				"stroke-width": 1.5 }));
			drawn++;
		});
		[["p50", w.p50_us], ["p99", w.p99_us]].forEach(function (m) {
			g.appendChild(sv("line", { x1: x(m[1]), x2: x(m[1]),
				y1: T, y2: H - B, stroke: "#1d2733",
				"stroke-dasharray": "4 3" }));
			g.appendChild(sv("text", { x: x(m[1]) + 4, y: T + 10 },
				m[0] + " " + us(m[1])));
		});
		app.appendChild(g);
	}

	// Each stage every run has, merged.
	if (D.stages.length) {
		app.appendChild(el("h2", {}, "Stages, merged"));
		app.appendChild(el("p", { class: "lead" }, "Each stage's p50 " +
			"(dark) and p99 (light) over every run's traced " +
			"transactions, on one scale."));
		var top = 0;
		D.stages.forEach(function (s) {
			top = Math.max(top, s.p99_us);
		});
		var st = el("table");
		var sh = el("tr");
		["stage", "p50", "p99", ""].forEach(function (h, i) {
			sh.appendChild(el("th", i && i < 3 ? {} : { class: "name" },
				h));
		});
		st.appendChild(sh);
		D.stages.forEach(function (s) {
			var tr = el("tr");
			tr.appendChild(el("td", { class: "name" }, s.name));
			tr.appendChild(el("td", {}, us(s.p50_us)));
			tr.appendChild(el("td", {}, us(s.p99_us)));
			var cell = el("td", { class: "name" });
			var bar = sv("svg", { width: 320, height: 12 });
			bar.appendChild(sv("rect", { x: 0, y: 2, height: 8,
				width: Math.max(1, 320 * s.p99_us / top),
				fill: "#9fb3c8" }));
			bar.appendChild(sv("rect", { x: 0, y: 2, height: 8,
				width: Math.max(1, 320 * s.p50_us / top),
				fill: "#334e68" }));
			cell.appendChild(bar);
			tr.appendChild(cell);
			st.appendChild(tr);
		});
		app.appendChild(st);
	}
	document.body.dataset.rendered = drawn;
})();
