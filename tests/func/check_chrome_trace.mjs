// Load a --perfetto trace with Chrome DevTools' trace engine, the parser
// behind its Performance panel, and check it keeps every slice nested as
// written: each thread's roots are transactions, each stage slice is a
// child of one, none is dropped.
//
//   node check_chrome_trace.mjs ENGINE_DIR TRACE.json
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [engineDir, file] = process.argv.slice(2);
if (!fs.existsSync(engineDir))
	throw new Error(`no trace engine in ${engineDir}: scripts/install-deps.sh installs it`);
const Trace = await import(pathToFileURL(
	path.join(engineDir, 'models/trace/trace.js')).href);
const events = JSON.parse(fs.readFileSync(file, 'utf8')).traceEvents;
const slices = events.filter(e => e.ph === 'X').length;

const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(events);
const renderer = model.parsedTrace().data.Renderer;
let kept = 0, roots = 0;

for (const [pid, proc] of renderer.processes) {
	for (const [tid, thread] of proc.threads) {
		for (const root of thread.tree.roots) {
			if (root.entry.name !== 'transaction')
				throw new Error(`${pid}/${tid}: root ${root.entry.name}`);
			for (const child of root.children)
				if (child.children.length)
					throw new Error(`${pid}/${tid}: ${child.entry.name} has children`);
			roots++;
			kept += 1 + root.children.length;
		}
	}
}
if (kept !== slices)
	throw new Error(`the engine kept ${kept} of ${slices} slices`);
console.log(`chrome trace engine: ${roots} transactions, all ${slices} slices nested`);
