/**
 * What held the service's event loop, from a V8 CPU profile of it under the bench or the soak
 * (`BENCH_SERVICE_NODE_FLAGS='--cpu-prof --cpu-prof-dir=/tmp/profiles --cpu-prof-interval=1000'`, docs/performance.md):
 * the stretches of consecutive samples that are neither idle nor V8's own bookkeeping, at least MIN_MS long, each with
 * the frames that hold most of it, then the frames over all of them. A frame is named by the deepest function of the
 * service's own code on the sample's stack (`dist/`, not a dependency), with the leaf beside it when they differ.
 *
 * A stretch is busy time with no idle sample in it, not always one task: with samples a millisecond apart, tasks that
 * follow each other without a millisecond's pause make one stretch. Requests wait behind it all the same.
 *
 * Usage: `tsx bench/long-tasks.ts <file.cpuprofile> [MIN_MS=10] [FROM_S=0] [TO_S]` (seconds from the profile's start).
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A busy stretch: its start and end (microseconds, the profile's clock) and its samples counted by frame. */
interface Stretch {
  from: number;
  to: number;
  frames: Map<string, number>;
}

const [file, minMs = '10', fromS = '0', toS = 'Infinity'] = process.argv.slice(2);
if (!file) {
  console.error('usage: tsx bench/long-tasks.ts <file.cpuprofile> [MIN_MS] [FROM_S] [TO_S]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

const nameOf = (node: ProfileNode) =>
  `${node.callFrame.functionName || '(anonymous)'}@${node.callFrame.url.split('/').at(-1)}:${node.callFrame.lineNumber + 1}`;
const ownCode = (node: ProfileNode) => node.callFrame.url.includes('/dist/') && !node.callFrame.url.includes('node_modules');

/** The sample's frame: the deepest function of the service's own code on its stack, and the leaf when another. */
function frameOf(id: number): string {
  const leaf = byId.get(id)!;
  for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
    const node = byId.get(at)!;
    if (ownCode(node)) return node === leaf ? nameOf(node) : `${nameOf(node)} <- ${nameOf(leaf)}`;
  }
  return nameOf(leaf);
}

const resting = new Set(profile.nodes.filter((n) => ['(idle)', '(program)'].includes(n.callFrame.functionName)).map((n) => n.id));
const stretches: Stretch[] = [];
let current: Stretch | null = null;
let time = profile.startTime;
for (const [i, sample] of profile.samples.entries()) {
  time += profile.timeDeltas[i];
  if (resting.has(sample)) {
    if (current) stretches.push(current);
    current = null;
    continue;
  }
  current ??= { from: time, to: time, frames: new Map() };
  current.to = time;
  const frame = frameOf(sample);
  current.frames.set(frame, (current.frames.get(frame) ?? 0) + 1);
}
if (current) stretches.push(current);

const seconds = (at: number) => (at - profile.startTime) / 1e6;
const long = stretches.filter(
  (s) => (s.to - s.from) / 1000 >= Number(minMs) && seconds(s.from) >= Number(fromS) && seconds(s.from) <= Number(toS),
);
const top = (frames: Map<string, number>, n: number) => [...frames].sort((a, b) => b[1] - a[1]).slice(0, n);
const busyMs = long.reduce((sum, s) => sum + (s.to - s.from) / 1000, 0);
console.log(`${long.length} busy stretches of at least ${minMs} ms, ${Math.round(busyMs)} ms in all`);
const all = new Map<string, number>();
for (const stretch of long) {
  const heaviest = top(stretch.frames, 3).map(([frame, samples]) => `${frame} ${samples}`);
  console.log(
    `${seconds(stretch.from).toFixed(1).padStart(8)} s ${((stretch.to - stretch.from) / 1000).toFixed(1).padStart(7)} ms  ${heaviest.join(' | ')}`,
  );
  for (const [frame, samples] of stretch.frames) all.set(frame, (all.get(frame) ?? 0) + samples);
}
console.log('--- samples by frame, over all of them');
for (const [frame, samples] of top(all, 40)) console.log(`${String(samples).padStart(6)} ${frame}`);
