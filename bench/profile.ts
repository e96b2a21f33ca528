/**
 * Where the gateway's time goes when a benchmark misses its target: a summary of the V8 CPU
 * profile the gateway wrote (`BENCH_PROFILE=1` starts it with `--cpu-prof --cpu-prof-dir=<tmp>`,
 * bench/stack.ts; the profile is written when the process exits).
 *
 * A `.cpuprofile` is JSON: `nodes` (call-tree nodes, each with a `callFrame` {functionName, url,
 * lineNumber (0-based)} and a `hitCount` of samples taken while it was on top of the stack),
 * `samples` (the node id of each sample, in order), `timeDeltas` (µs between samples) and
 * `startTime` (µs on the monotonic clock, the one `process.hrtime` reads, so a benchmark can keep
 * only the samples taken during its measured run: `window`). Self time of a frame = the time of
 * the samples taken while it was on top of the stack, summed over every call-tree node of the same
 * function (functionName + url:line).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { table } from './load';
import type { BenchStack } from './stack';

/** The parts of a V8 `.cpuprofile` the summary reads. */
export interface CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    hitCount?: number;
    children?: number[];
  }>;
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/** A time window on the monotonic clock, microseconds (`monotonicMicros()` at its start and end). */
export interface ProfileWindow {
  fromUs: number;
  toUs: number;
}

/** One line of the summary: a frame (or a package) and its self time. */
export interface SelfTime {
  name: string;
  ms: number;
  /** Share of the busy (not idle) time in the window, 0..1. */
  share: number;
}

/** The summary of a profile (or of its window). */
export interface ProfileSummary {
  /** Milliseconds covered: the window's (or the whole profile's). */
  totalMs: number;
  /** Milliseconds the process was idle (waiting for I/O), a share of `totalMs`. */
  idleMs: number;
  /** Whether the window held samples (else the whole profile is summarised). */
  windowed: boolean;
  frames: SelfTime[];
  packages: SelfTime[];
  /** The project's own functions (outside node_modules and node's internals) by total time: self plus callees. */
  ownInclusive: SelfTime[];
}

/** Now on the monotonic clock that V8 profiles use, microseconds. */
export function monotonicMicros(): number {
  return Number(process.hrtime.bigint() / 1000n);
}

/** `file:///…/node_modules/@scope/pkg/dist/x.js` → `@scope/pkg/dist/x.js`; the project's files relative to it. */
function shortUrl(url: string): string {
  const file = url.replace(/^file:\/\//, '');
  const nm = file.lastIndexOf('/node_modules/');
  if (nm >= 0) return file.slice(nm + '/node_modules/'.length);
  const cwd = `${process.cwd()}/`;
  return file.startsWith(cwd) ? file.slice(cwd.length) : file;
}

/** `functionName file:line` (line 1-based), or V8's pseudo-frame name. */
function frameName(frame: { functionName: string; url: string; lineNumber: number }): string {
  return frame.url
    ? `${frame.functionName || '(anonymous)'} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`
    : frame.functionName;
}

/** What a frame belongs to: a package, a directory of the project (e.g. dist/webhooks), node's internals, or V8's pseudo-frames. */
function packageOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node internals';
  const file = url.replace(/^file:\/\//, '');
  const nm = file.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const parts = file.slice(nm + '/node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  const parts = shortUrl(url).split('/');
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : parts.slice(0, -1).join('/') || parts[0];
}

/**
 * Sums the self time of each function (functionName + url:line) and of each package over the
 * samples in `window` (all samples when no window is given or none falls in it); the `top` largest
 * of each, as shares of the busy time (idle samples are counted apart).
 */
export function summarizeProfile(profile: CpuProfile, window?: ProfileWindow, top = 15): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  // Sample i is taken at startTime + deltas[0..i]; it stands for the time until the next sample.
  const times: number[] = [];
  let t = profile.startTime;
  for (let i = 0; i < samples.length; i++) times.push((t += deltas[i] ?? 0));
  const weightOf = (i: number) => (i + 1 < samples.length ? (deltas[i + 1] ?? 0) : 0);
  const inWindow = (i: number) => !window || (times[i] >= window.fromUs && times[i] <= window.toUs);
  const windowed = window !== undefined && samples.some((_s, i) => inWindow(i));
  const keep = (i: number) => !windowed || inWindow(i);

  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const own = (url: string) => url !== '' && !url.startsWith('node:') && !url.includes('/node_modules/');
  const inclusive = new Map<string, number>();
  const frames = new Map<string, number>();
  const packages = new Map<string, number>();
  let totalUs = 0;
  let idleUs = 0;
  for (let i = 0; i < samples.length; i++) {
    if (!keep(i)) continue;
    const node = byId.get(samples[i]);
    if (!node) continue;
    const us = weightOf(i);
    totalUs += us;
    const { functionName, url } = node.callFrame;
    if (functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    const name = frameName(node.callFrame);
    frames.set(name, (frames.get(name) ?? 0) + us);
    // Total time: every distinct own function on this sample's stack gets the sample once.
    const onStack = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)?.callFrame;
      if (frame && own(frame.url)) onStack.add(frameName(frame));
    }
    for (const f of onStack) inclusive.set(f, (inclusive.get(f) ?? 0) + us);
    const pkg = packageOf(url, functionName);
    packages.set(pkg, (packages.get(pkg) ?? 0) + us);
  }
  const rank = (m: Map<string, number>, n: number): SelfTime[] =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, us]) => ({ name, ms: us / 1000, share: totalUs > idleUs ? us / (totalUs - idleUs) : 0 }));
  return {
    totalMs: totalUs / 1000,
    idleMs: idleUs / 1000,
    windowed,
    frames: rank(frames, top),
    packages: rank(packages, 10),
    ownInclusive: rank(inclusive, 12),
  };
}

/** The summary as text: the top self-time frames, then self time by package. */
export function formatProfile(summary: ProfileSummary, title: string): string {
  const rows = (list: SelfTime[]) => list.map((f) => [f.name, f.ms.toFixed(0), `${(f.share * 100).toFixed(1)} %`]);
  return [
    `${title}: ${summary.totalMs.toFixed(0)} ms profiled${summary.windowed ? ' during the measured run' : ' (whole process: no sample fell in the run)'}, idle ${((summary.idleMs / Math.max(1, summary.totalMs)) * 100).toFixed(0)} %; shares below are of the busy ${(summary.totalMs - summary.idleMs).toFixed(0)} ms`,
    '',
    table(['top self-time frames', 'self ms', 'share'], rows(summary.frames)),
    '',
    table(['self time by package / directory', 'self ms', 'share'], rows(summary.packages)),
    '',
    table(["the project's functions by total time (self + callees)", 'total ms', 'share'], rows(summary.ownInclusive)),
  ].join('\n');
}

/**
 * Reads the newest `.cpuprofile` in `dir` (the process must have exited), summarises the samples in
 * `window` and returns the text, with the file's path (kept, to open in a profiler).
 * @throws Error when `dir` holds no profile
 */
export function profileReport(dir: string, window: ProfileWindow | undefined, title: string): string {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .sort();
  if (!files.length) throw new Error(`no .cpuprofile in ${dir} (did the gateway exit cleanly?)`);
  const file = path.join(dir, files[files.length - 1]);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  return `${formatProfile(summarizeProfile(profile, window), title)}\n\nthe whole profile: ${file} (Chrome DevTools, Performance → Load profile)`;
}

/**
 * The end of a benchmark's output about where the gateway's time went: with a profile
 * (BENCH_PROFILE=1) the gateway is stopped and its samples in `window` summarised; without one, a
 * hint when a target was `missed`, else nothing.
 */
export async function whereTheTimeGoes(
  stack: Pick<BenchStack, 'profileDir' | 'stopGateway'>,
  window: ProfileWindow | undefined,
  missed: boolean,
): Promise<string> {
  if (!stack.profileDir) {
    return missed ? 'a target was missed: run again with BENCH_PROFILE=1 for the gateway CPU profile top frames\n' : '';
  }
  await stack.stopGateway();
  return `\n${profileReport(stack.profileDir, window, 'gateway CPU profile')}\n`;
}

/**
 * Runs `run` under this process's own V8 CPU profiler (the inspector, `intervalUs` sampling) and
 * returns its result and the profile summarized (top `top` frames, formatted under `title`), the
 * whole profile written to `<tmp>/wg-<name>-<pid>.cpuprofile`: the in-process benchmarks'
 * (bench:overhead, bench:payouts-overhead) `BENCH_PROFILE=1`.
 */
export async function profileInProcess<T>(
  name: string,
  title: string,
  run: () => Promise<T>,
  { intervalUs = 100, top = 25 } = {},
): Promise<{ result: T; report: string }> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
    await session.post('Profiler.start');
    const result = await run();
    const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: CpuProfile };
    await session.post('Profiler.disable');
    const file = path.join(tmpdir(), `wg-${name.replace(/\W+/g, '-')}-${process.pid}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    return {
      result,
      report: `${formatProfile(summarizeProfile(profile, undefined, top), title)}\n\nthe whole profile: ${file}`,
    };
  } finally {
    session.disconnect();
  }
}
