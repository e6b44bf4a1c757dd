#!/usr/bin/env node
/**
 * Summarises V8 CPU profiles (`--cpu-prof`, as `BENCH_PROFILE=1` makes them) without a browser:
 * where the busy time went by area (our code, each npm package, Node internals, GC) and the
 * functions with the most self and total time.
 *
 *   node bench/profile-summary.mjs bench-results/profiles/<run>/matcher [more dirs or .cpuprofile files] [--top 25]
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const args = process.argv.slice(2);
const topIndex = args.indexOf('--top');
const top = topIndex >= 0 ? Number(args.splice(topIndex, 2)[1]) : 25;
if (args.length === 0) {
  console.error('usage: node bench/profile-summary.mjs <profile dir or .cpuprofile>... [--top N]');
  process.exit(2);
}

const files = args.flatMap((a) =>
  statSync(a).isDirectory()
    ? readdirSync(a)
        .filter((f) => f.endsWith('.cpuprofile'))
        .map((f) => join(a, f))
    : [a],
);
for (const file of files) summarise(file);

function area(url) {
  if (url === '') return 'native / VM';
  const pnpm = /node_modules\/\.pnpm\/[^/]+\/node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pnpm) return pnpm[1];
  const plain = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (plain) return plain[1];
  const ours = /\/(services|packages)\/([^/]+)\//.exec(url);
  if (ours) {
    if (url.includes('/generated/prisma/')) return `${ours[1]}/${ours[2]} (generated Prisma client)`;
    return `${ours[1]}/${ours[2]}`;
  }
  if (url.startsWith('node:') || !url.includes('/')) return 'node internals';
  return url;
}

function summarise(file) {
  const profile = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const totalUs = profile.endTime - profile.startTime;
  const keyOf = (n) => {
    const f = n.callFrame;
    const where = f.url ? `${relative(process.cwd(), f.url.replace(/^file:\/\//, ''))}:${f.lineNumber + 1}` : '';
    return `${f.functionName || '(anonymous)'} ${where}`.trim();
  };
  const idle = new Set(['(idle)']);
  let busyUs = 0;
  const selfByFunction = new Map();
  const selfByArea = new Map();
  for (const [id, us] of self) {
    const n = byId.get(id);
    if (idle.has(n.callFrame.functionName)) continue;
    busyUs += us;
    const k = keyOf(n);
    selfByFunction.set(k, (selfByFunction.get(k) ?? 0) + us);
    const a = ['(garbage collector)', '(program)'].includes(n.callFrame.functionName)
      ? n.callFrame.functionName
      : area(n.callFrame.url.replace(/^file:\/\//, ''));
    selfByArea.set(a, (selfByArea.get(a) ?? 0) + us);
  }
  // Total time per function: self time of its subtree, counted once however deep it recurses.
  const totalByFunction = new Map();
  const onStack = new Map();
  const visit = (id) => {
    const n = byId.get(id);
    const k = keyOf(n);
    const first = !onStack.get(k);
    onStack.set(k, (onStack.get(k) ?? 0) + 1);
    let sum = idle.has(n.callFrame.functionName) ? 0 : (self.get(id) ?? 0);
    for (const child of n.children ?? []) sum += visit(child);
    onStack.set(k, onStack.get(k) - 1);
    if (first) totalByFunction.set(k, (totalByFunction.get(k) ?? 0) + sum);
    return sum;
  };
  visit(profile.nodes[0].id);

  const pct = (us) => `${((100 * us) / busyUs).toFixed(1).padStart(5)} %`;
  const ms = (us) => `${(us / 1000).toFixed(0).padStart(7)} ms`;
  const rows = (map, n) => [...map].sort((a, b) => b[1] - a[1]).slice(0, n);
  console.log(`\n## ${relative(process.cwd(), file)}`);
  console.log(
    `profile ${(totalUs / 1e6).toFixed(1)} s, busy ${(busyUs / 1e6).toFixed(1)} s (${((100 * busyUs) / totalUs).toFixed(0)} % of the process's wall time)\n`,
  );
  console.log('### busy time by area (self time)');
  for (const [k, us] of rows(selfByArea, top)) console.log(`${pct(us)} ${ms(us)}  ${k}`);
  console.log('\n### functions by self time');
  for (const [k, us] of rows(selfByFunction, top)) console.log(`${pct(us)} ${ms(us)}  ${k}`);
  console.log('\n### functions by total time (self + callees)');
  const skip = /^\((root|program|idle|garbage collector)\)/;
  for (const [k, us] of rows(new Map([...totalByFunction].filter(([k]) => !skip.test(k))), top)) console.log(`${pct(us)} ${ms(us)}  ${k}`);
}
