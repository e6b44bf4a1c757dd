import { DEAD_LETTERED_QUEUES, DeadLetterReplayError, MissingQueueError, type DeadLetterQueue } from '@pmatch/platform';
import type { DeadLetterLink } from './dead-letter-link';
import { EXIT_CODES, OpsError } from './failures';

/** What `dlq list` prints of each dead-letter queue and its first letters. */
function queueView(queue: DeadLetterQueue) {
  return {
    object: 'dead_letter_queue',
    queue: queue.queue,
    message_count: queue.messageCount,
    messages: queue.messages.map((m) => ({
      message_id: m.messageId,
      routing_key: m.routingKey,
      original_queue: m.originalQueue,
      death_count: m.deathCount,
      death_reason: m.reason,
      first_death_at: m.firstDeathAt,
    })),
  };
}

/** Every dead-letter queue (or `queue`'s) with its count and its first `limit` letters; nothing is taken off. */
export async function listDeadLetters(link: DeadLetterLink, options: { queue?: string; limit: number }) {
  const queues = await named(() => link.list({ queues: options.queue === undefined ? DEAD_LETTERED_QUEUES : [options.queue], limit: options.limit }));
  return { object: 'list', data: queues.map(queueView), has_more: false };
}

/**
 * Moves dead letters back to their original queue: every one, `queue`'s, or the one with
 * `messageId` (searched in `queue`'s, or in all). One named that is in none is `resource_missing`.
 */
export async function replayDeadLetters(link: DeadLetterLink, options: { queue?: string; messageId?: string }) {
  const results = await named(() =>
    link.replay({
      queues: options.queue === undefined ? DEAD_LETTERED_QUEUES : [options.queue],
      ...(options.messageId === undefined ? {} : { messageId: options.messageId }),
    }),
  );
  const replayed = results.reduce((sum, r) => sum + r.replayed.length, 0);
  if (options.messageId !== undefined && replayed === 0) {
    throw new OpsError('resource_missing', `no dead letter has message id ${options.messageId}`, EXIT_CODES.notFound, 'message-id');
  }
  return {
    object: 'dead_letter_replay',
    replayed,
    queues: results.map((r) => ({ queue: r.queue, original_queue: r.queue.replace(/\.dead$/, ''), replayed: r.replayed.length, message_ids: r.replayed })),
  };
}

/** The broker's refusals as the CLI's errors: a missing queue is `resource_missing`, a copy no queue took `replay_incomplete`. */
async function named<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof MissingQueueError) throw new OpsError('resource_missing', error.message, EXIT_CODES.notFound, 'queue');
    if (error instanceof DeadLetterReplayError) throw new OpsError('replay_incomplete', error.message, EXIT_CODES.failed);
    throw error;
  }
}
