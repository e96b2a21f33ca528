/**
 * Where the whole machine's CPU goes during a run, per unit of work (a payout, a request): the
 * gateway, the simulator, PostgreSQL (every `postgres` process: backends, WAL writer, checkpointer),
 * this process (the load generator, autocannon in process), and the rest of the machine's busy
 * time (the kernel's network and disk work outside any process's account, other services). With it
 * a missed throughput target reads as arithmetic: at `machine µs per unit`, two cores can do at most
 * `ceiling` units per second even with no idle time left, and the gateway's share says how much of
 * that ceiling a cheaper gateway could move.
 *
 * Sources: /proc/<pid>/stat (utime + stime of each process, USER_HZ ticks, via `cpuMicros`) and
 * /proc/stat's first line (the machine's busy and idle ticks over all cores). Linux only.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { cpuMicros, statCpuMicros, table, ticksToMicros } from './load';

/** A moment's CPU counters, microseconds used so far. */
export interface CpuSnapshot {
  gateway: number;
  simulator: number;
  /** Per `postgres` process (pid → µs): backends come and go, so their sum alone is not a counter. */
  postgres: Map<number, number>;
  generator: number;
  /** Machine-wide, every core: busy (user, nice, system, irq, softirq, steal) and idle (idle, iowait). */
  machineBusy: number;
  machineIdle: number;
  at: number;
}

/** CPU µs used so far by each process whose command name is `postgres`, by pid. */
function postgresMicros(): Map<number, number> {
  const used = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) === 'postgres')
        used.set(Number(entry), statCpuMicros(stat));
    } catch {
      // The process ended between the listing and the read.
    }
  }
  return used;
}

/**
 * PostgreSQL's CPU between two snapshots: each process's growth, a process started meanwhile counted
 * whole. A process that ended meanwhile is missing from `after`, and its CPU since `before` is lost
 * (it lands in `other`): a benchmark's pools keep their connections for the whole run.
 */
export function postgresUsed(before: CpuSnapshot, after: CpuSnapshot): number {
  let total = 0;
  for (const [pid, us] of after.postgres) total += us - (before.postgres.get(pid) ?? 0);
  return total;
}

/** The machine's busy and idle µs so far, over all cores (/proc/stat "cpu" line). */
function machineMicros(): { busy: number; idle: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return {
    busy: ticksToMicros(user + nice + system + irq + softirq + (steal || 0)),
    idle: ticksToMicros(idle + iowait),
  };
}

/** Reads every counter now. */
export function cpuSnapshot(pids: { gateway: number; simulator: number }): CpuSnapshot {
  const { user, system } = process.cpuUsage();
  const machine = machineMicros();
  return {
    gateway: pids.gateway ? cpuMicros(pids.gateway) : 0,
    simulator: pids.simulator ? cpuMicros(pids.simulator) : 0,
    postgres: postgresMicros(),
    generator: user + system,
    machineBusy: machine.busy,
    machineIdle: machine.idle,
    at: performance.now(),
  };
}

/** The budget between two snapshots, per unit of work. */
export interface CpuBudget {
  /** µs per unit, by consumer; `other` = the machine's busy time no listed process accounts for. */
  perUnitUs: { gateway: number; simulator: number; postgres: number; generator: number; other: number };
  /** Every core's busy µs per unit. */
  machinePerUnitUs: number;
  /** Share of the machine's capacity (all cores × wall time) that was idle, 0..1. */
  idleShare: number;
  cores: number;
  /** Units per second the cores could do at `machinePerUnitUs` with nothing idle. */
  ceilingPerSecond: number;
}

/** The budget of `units` units of work done between `before` and `after`. */
export function cpuBudget(before: CpuSnapshot, after: CpuSnapshot, units: number): CpuBudget {
  const n = Math.max(1, units);
  const used = (k: 'gateway' | 'simulator' | 'postgres' | 'generator') =>
    k === 'postgres' ? postgresUsed(before, after) : after[k] - before[k];
  const busy = after.machineBusy - before.machineBusy;
  const idle = after.machineIdle - before.machineIdle;
  const listed = used('gateway') + used('simulator') + used('postgres') + used('generator');
  const cores = availableParallelism();
  const machinePerUnitUs = busy / n;
  return {
    perUnitUs: {
      gateway: used('gateway') / n,
      simulator: used('simulator') / n,
      postgres: used('postgres') / n,
      generator: used('generator') / n,
      other: Math.max(0, busy - listed) / n,
    },
    machinePerUnitUs,
    idleShare: busy + idle > 0 ? idle / (busy + idle) : 0,
    cores,
    ceilingPerSecond: machinePerUnitUs > 0 ? (cores * 1_000_000) / machinePerUnitUs : 0,
  };
}

/**
 * The budget as printed lines: a table of µs per unit and share of the busy time by consumer,
 * then the machine's idle share and the ceiling it implies, against `target` units/s.
 */
export function budgetTable(budget: CpuBudget, unit: string, target?: number): string {
  const rows = Object.entries(budget.perUnitUs).map(([name, us]) => [
    name === 'other' ? 'other (kernel outside processes, other services)' : name,
    us.toFixed(0),
    `${((100 * us) / Math.max(1, budget.machinePerUnitUs)).toFixed(1)} %`,
  ]);
  rows.push(['machine, all cores busy', budget.machinePerUnitUs.toFixed(0), '100 %']);
  const ceiling = budget.ceilingPerSecond;
  const lines = [
    `where the machine's CPU went, per ${unit} (/proc: each process's own counters; the machine's busy time over ${budget.cores} cores)`,
    table(['consumer', `µs per ${unit}`, 'share of busy'], rows),
    `machine idle ${(100 * budget.idleShare).toFixed(1)} % of ${budget.cores} cores; at ${budget.machinePerUnitUs.toFixed(0)} µs per ${unit} the ${budget.cores} cores could do at most ${ceiling.toFixed(0)} ${unit}s/s with nothing idle${
      target
        ? ` (target ${target}/s needs ≤ ${((budget.cores * 1_000_000) / target).toFixed(0)} µs per ${unit} of the whole machine)`
        : ''
    }`,
  ];
  return `${lines.join('\n')}\n`;
}
