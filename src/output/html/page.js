"use strict";
// What every page netstage writes draws with (built into the binary
// before the page's own script): no library, nothing fetched. A script
// error is shown on the page and in body[data-error] (the tests read
// it, and body[data-rendered] the page's own script sets).
window.addEventListener("error", function (e) {
	document.body.dataset.error = e.message;
	var p = document.createElement("p");
	p.className = "error";
	p.textContent = "report error: " + e.message;
	document.body.appendChild(p);
});

// An element with attributes and text; sv: the same in SVG.
function el(tag, attrs, text) {
	var e = document.createElement(tag);
	for (var k in attrs || {})
		e.setAttribute(k, attrs[k]);
	if (text !== undefined)
		e.textContent = text;
	return e;
}
function sv(tag, attrs, text) {
	var e = document.createElementNS("http://www.w3.org/2000/svg", tag);
	for (var k in attrs || {})
		e.setAttribute(k, attrs[k]);
	if (text !== undefined)
		e.textContent = text;
	return e;
}
// Three significant digits or so; us: microseconds, as ms from 1000.
function fmt(x) {
	return x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) :
		x.toFixed(2);
}
function us(x) {
	return x >= 1000 ? fmt(x / 1000) + " ms" : fmt(x) + " us";
}
