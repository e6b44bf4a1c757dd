import { AppError, OrderReply, QUEUES, fromWireError, type MatcherCommand, type Order } from '@pmatch/contracts';
import { Broker, createLogger, loadConfig } from '@pmatch/platform';
import { MatcherLinkConfig } from './config';

/** How the CLI asks the matcher, the only writer of payments (docs/ARCHITECTURE.md), to change an order. */
export interface MatcherLink {
  orderCommand(command: MatcherCommand): Promise<Order>;
}

/**
 * Connects to RabbitMQ on first use only, so commands that never talk to the matcher neither read
 * the broker settings nor need a broker. A refusal by the matcher becomes its AppError.
 */
export class LazyMatcherLink implements MatcherLink {
  private connection: Promise<{ broker: Broker; config: MatcherLinkConfig }> | undefined;

  constructor(private readonly env: NodeJS.ProcessEnv = process.env) {}

  async orderCommand(command: MatcherCommand): Promise<Order> {
    const { broker, config } = await this.connect();
    let reply: OrderReply;
    try {
      reply = await broker.request(QUEUES.matcherCommands, command, OrderReply, config.COMMAND_TIMEOUT_MS);
    } catch (error) {
      if (error instanceof AppError && error.code === 'service_unavailable') {
        // The command stays queued and the matcher carries it out once it runs again.
        throw new AppError(
          'service_unavailable',
          `the matcher did not answer within ${config.COMMAND_TIMEOUT_MS} ms; it may still carry the command out: read the order before repeating it`,
        );
      }
      throw error;
    }
    if (!reply.ok) {
      const refusal = fromWireError(reply.error);
      throw new AppError(
        refusal.code,
        `the matcher refused (${refusal.code}): ${refusal.message}`,
        refusal.param === undefined ? {} : { param: refusal.param },
      );
    }
    return reply.order;
  }

  async close(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    if (connection === undefined) return;
    const opened = await connection.catch(() => undefined);
    await opened?.broker.close();
  }

  private connect(): Promise<{ broker: Broker; config: MatcherLinkConfig }> {
    this.connection ??= (async () => {
      const config = loadConfig(MatcherLinkConfig, this.env);
      try {
        // Silent: the CLI's stdout carries only its one JSON object, and any failure reaches the
        // operator as the command's own error line.
        const broker = await Broker.connect(config.RABBITMQ_URL, config.AMQP_PREFIX, createLogger('ops', 'silent'));
        return { broker, config };
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
