import type { ChildProcess } from 'node:child_process';
import type { ServiceName } from './system-environment';

/** One process of a service, as the test system started it. */
export interface ServiceProcess {
  process: ChildProcess;
  port: number;
  output: string[];
  /** Stopped by the test (kill, terminate, stop): a supervisor leaves it down. */
  stoppedOnPurpose: boolean;
}

export function isRunning(running: ServiceProcess | undefined): boolean {
  return running !== undefined && running.process.exitCode === null && running.process.signalCode === null;
}

/** Restart backoff of the supervisor: short, because tests wait on it, and doubling like start-all's. */
const BACKOFF_START_MS = 200;
const BACKOFF_MAX_MS = 2_000;

/** A replica as the supervisor knows it: its service, number and label (`matcher#2`). */
interface Replica {
  name: ServiceName;
  replica: number;
  label: string;
}

/**
 * Starts again, with backoff, replicas that exited on their own, as scripts/start-all.mjs or an
 * orchestrator does, and counts their exits and restarts. `start` starts a replica and resolves
 * once it is ready; `current` is the replica's current process.
 */
export class ReplicaSupervisor {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly backoffMs = new Map<string, number>();
  private readonly exits = new Map<ServiceName, number>();
  private readonly restarts = new Map<ServiceName, number>();
  /** The end of the output of each process that exited on its own, with how it ended. */
  private readonly exitedOutput = new Map<ServiceName, string[]>();
  private stopped = false;

  constructor(
    private readonly start: (name: ServiceName, replica: number) => Promise<void>,
    private readonly current: (name: ServiceName, replica: number) => ServiceProcess | undefined,
  ) {}

  /** A replica exited on its own: its output is kept, and it is started again after its backoff. */
  exited({ name, replica, label }: Replica, running: ServiceProcess): void {
    if (this.stopped) return;
    this.exits.set(name, (this.exits.get(name) ?? 0) + 1);
    const how = running.process.signalCode ?? `code ${running.process.exitCode}`;
    const who = label === name ? '' : ` ${label}`;
    const kept = [...(this.exitedOutput.get(name) ?? []), `--- exited on its own (${how})${who}:\n${running.output.join('').slice(-20_000)}`];
    this.exitedOutput.set(name, kept.slice(-5));
    const delay = this.backoffMs.get(label) ?? BACKOFF_START_MS;
    this.backoffMs.set(label, Math.min(delay * 2, BACKOFF_MAX_MS));
    clearTimeout(this.timers.get(label));
    this.timers.set(
      label,
      setTimeout(() => void this.restart({ name, replica, label }), delay),
    );
  }

  /** A replica is being started by the test: a restart pending for it is called off. */
  starting(label: string): void {
    clearTimeout(this.timers.get(label));
    this.timers.delete(label);
  }

  private async restart({ name, replica, label }: Replica): Promise<void> {
    if (this.stopped) return;
    this.timers.delete(label);
    this.restarts.set(name, (this.restarts.get(name) ?? 0) + 1);
    try {
      await this.start(name, replica);
      this.backoffMs.delete(label);
    } catch {
      // It exited before it was ready (exited() has scheduled the next try), or it hangs unready:
      // then it is killed like a failed liveness probe would, and exited() takes it from there.
      const running = this.current(name, replica);
      if (running && isRunning(running)) running.process.kill('SIGKILL');
    }
  }

  /** How often the service's replicas exited on their own, and how often one was started again. */
  counts(name: ServiceName): { exits: number; restarts: number } {
    return { exits: this.exits.get(name) ?? 0, restarts: this.restarts.get(name) ?? 0 };
  }

  /** The last output of the (at most five) latest processes of the service's replicas that exited on their own. */
  exitedLogs(name: ServiceName): string {
    return (this.exitedOutput.get(name) ?? []).join('\n');
  }

  /** No restart from now on. */
  stop(): void {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
  }
}
