import { AppError } from '@pmatch/contracts';
import { BaseConfig, DeadLetters, loadConfig, type DeadLetterQueue, type ReplayResult } from '@pmatch/platform';

/** Read only by the `dlq` commands, when they run. */
export const DeadLetterLinkConfig = BaseConfig.pick({ RABBITMQ_URL: true, AMQP_PREFIX: true });

/** The dead-letter queues, as the `dlq` commands use them (`DeadLetters`). */
export interface DeadLetterLink {
  list(options: { queues?: readonly string[]; limit: number }): Promise<DeadLetterQueue[]>;
  replay(options: { queues?: readonly string[]; messageId?: string }): Promise<ReplayResult[]>;
}

/** Connects to RabbitMQ on first use only, like the matcher link: other commands need no broker. */
export class LazyDeadLetterLink implements DeadLetterLink {
  private connection: Promise<DeadLetters> | undefined;

  constructor(private readonly env: NodeJS.ProcessEnv = process.env) {}

  async list(options: { queues?: readonly string[]; limit: number }): Promise<DeadLetterQueue[]> {
    return (await this.connect()).list(options);
  }

  async replay(options: { queues?: readonly string[]; messageId?: string }): Promise<ReplayResult[]> {
    return (await this.connect()).replay(options);
  }

  async close(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    await (await connection?.catch(() => undefined))?.close();
  }

  private connect(): Promise<DeadLetters> {
    this.connection ??= (async () => {
      const config = loadConfig(DeadLetterLinkConfig, this.env);
      try {
        return await DeadLetters.connect(config.RABBITMQ_URL, config.AMQP_PREFIX);
      } catch (error) {
        // amqplib names the host and port it failed to reach, never the URL's credentials.
        throw new AppError('service_unavailable', `cannot reach RabbitMQ (RABBITMQ_URL): ${error instanceof Error ? error.message : String(error)}`, {
          cause: error,
        });
      }
    })();
    return this.connection;
  }
}
