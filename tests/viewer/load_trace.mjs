// Loads a trace with the trace engine of Chrome DevTools' performance panel (the model the panel draws
// from; published for Node as @paulirish/trace_engine) and checks that the viewer found what the file
// holds: every traced rank as a process, every stream as a named thread, every slice on its thread, and
// every flow (arrow) it can draw. Prints what it found; exits 1 naming what is missing.
//
// Usage: node load_trace.mjs TRACE.json [--processes N] [--min-message-flows N] [--min-collective-flows N]
import fs from 'node:fs';

const here = new URL('.', import.meta.url).pathname;
let Trace;
try {
  Trace = await import(`${here}node_modules/@paulirish/trace_engine/models/trace/trace.js`);
} catch (e) {
  console.error(`load_trace: the trace viewer is not installed (${e.code ?? e.message}): run scripts/install-deps.sh`);
  process.exit(1);
}
// The engine measures boxes for screenshots with the browser's DOMRect; Node has none.
globalThis.DOMRect ??= class DOMRect {
  constructor(x = 0, y = 0, width = 0, height = 0) { Object.assign(this, {x, y, width, height}); }
};

const args = process.argv.slice(2);
const file = args[0];
const option = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const failures = [];
const check = (ok, what) => { if (!ok) failures.push(what); };

const document = JSON.parse(fs.readFileSync(file, 'utf8'));
const events = document.traceEvents;
const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(events);
const data = model.parsedTrace().data;

// What the file holds.
const processNames = new Map(), threadNames = new Map(), slicesPerThread = new Map();
const key = (pid, tid) => `${pid}/${tid}`;
for (const e of events) {
  // Ranks are processes of slices; "node N" processes hold counters only.
  if (e.ph === 'M' && e.name === 'process_name' && e.args.name.startsWith('rank ')) processNames.set(e.pid, e.args.name);
  if (e.ph === 'M' && e.name === 'thread_name') threadNames.set(key(e.pid, e.tid), e.args.name);
  if (e.ph === 'X') slicesPerThread.set(key(e.pid, e.tid), (slicesPerThread.get(key(e.pid, e.tid)) ?? 0) + 1);
}
const slices = [...slicesPerThread.values()].reduce((a, b) => a + b, 0);
// The flows the viewer can show: DevTools keeps a flow's slices by start time, so a flow whose slices
// all start at one instant (a collective's members joining together) collapses to one slice and is
// dropped; every other flow must be found.
const flowTimes = new Map();
for (const e of events)
  if (e.ph === 's' || e.ph === 't' || e.ph === 'f') {
    if (!flowTimes.has(e.id)) flowTimes.set(e.id, {name: e.name, times: new Set()});
    flowTimes.get(e.id).times.add(e.ts);
  }
const drawable = {msg: 0, coll: 0};
for (const {name, times} of flowTimes.values()) if (times.size >= 2) ++drawable[name];

// What the viewer found.
let foundThreads = 0, foundSlices = 0;
for (const [pid, proc] of data.Renderer.processes) {
  check(processNames.has(pid), `process ${pid} is not one of the file's ranks`);
  for (const [tid, thread] of proc.threads) {
    const k = key(pid, tid);
    ++foundThreads;
    foundSlices += thread.entries.length;
    check(thread.name === threadNames.get(k), `thread ${k} is named ${thread.name}, not ${threadNames.get(k)}`);
    check(thread.entries.length === (slicesPerThread.get(k) ?? 0),
          `thread ${k} (${thread.name}) has ${thread.entries.length} slices in the viewer, ${slicesPerThread.get(k)} in the file`);
  }
}
const flows = data.Flows.flows;
const found = {msg: 0, coll: 0};
for (const flow of flows) {
  check(flow.length >= 2, 'a flow binds fewer than two slices');
  ++found[flow.some(e => e.args?.k === 'send' || e.args?.k === 'recv') ? 'msg' : 'coll'];
}
const processes = data.Renderer.processes.size;
console.log(`load_trace: ${file}: ${processes} processes, ${foundThreads} threads, ${foundSlices} slices ` +
            `(file: ${processNames.size} ranks, ${slicesPerThread.size} threads, ${slices} slices), ` +
            `${flows.length} flows: ${found.msg} of ${drawable.msg} message flows, ${found.coll} of ` +
            `${drawable.coll} collective flows whose slices start at different times (file: ${flowTimes.size} flows)`);

check(processes === processNames.size, `${processes} processes in the viewer, ${processNames.size} ranks in the file`);
check(foundThreads === slicesPerThread.size, `${foundThreads} threads in the viewer, ${slicesPerThread.size} in the file`);
check(foundSlices === slices, `${foundSlices} slices in the viewer, ${slices} in the file`);
const expectProcesses = option('--processes', -1);
if (expectProcesses >= 0) check(processes === expectProcesses, `${processes} processes, expected ${expectProcesses}`);
check(found.msg === drawable.msg, `${found.msg} message flows in the viewer, ${drawable.msg} in the file`);
check(found.coll === drawable.coll, `${found.coll} collective flows in the viewer, ${drawable.coll} in the file`);
check(found.msg >= option('--min-message-flows', 0),
      `${found.msg} message flows, expected at least ${option('--min-message-flows', 0)}`);
check(found.coll >= option('--min-collective-flows', 0),
      `${found.coll} collective flows, expected at least ${option('--min-collective-flows', 0)}`);

if (failures.length) {
  for (const f of failures.slice(0, 20)) console.error(`load_trace: FAIL: ${f}`);
  process.exit(1);
}
console.log('load_trace: ok');
