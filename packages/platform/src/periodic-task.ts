import type { Logger } from './logger';

/**
 * Runs `run` every interval, and again at once while it keeps finding work. One pass at a time;
 * a failed pass is logged and retried at the next interval.
 */
export class PeriodicTask {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly name: string,
    private readonly run: () => Promise<number>,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  start(): void {
    this.schedule(0);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.pass();
    }, delayMs);
  }

  private async pass(): Promise<void> {
    let found = 0;
    try {
      found = await this.run();
    } catch (error) {
      this.logger.error({ err: error }, `${this.name} failed; will retry`);
    }
    this.schedule(found > 0 ? 0 : this.intervalMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
