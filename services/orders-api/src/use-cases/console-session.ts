import type { Mode } from '@pmatch/contracts';
import type { ConsoleSessionRow, UserRow } from '@pmatch/db';
import { accountIdsOf } from '../data/bank-accounts';
import { deleteSession, findSession, setSessionMode, touchSession } from '../data/console-sessions';
import { findOrganisation } from '../data/users';
import { inAuditedTransaction, type AuditContext } from './audit';
import { owesSecondFactorSetup, type ConsoleDeps } from './console-login';

/** A session ends after this long without a request, and this long after it began whatever happens. */
export const SESSION_IDLE_MS = 30 * 60 * 1000;
export const SESSION_MAX_MS = 12 * 60 * 60 * 1000;
/** `last_seen_at` is written at most this often: idle time is measured to the minute. */
const TOUCH_EVERY_MS = 60 * 1000;

/** A live session with its person, organisation and what the person may reach. */
export interface OpenSession {
  session: ConsoleSessionRow;
  user: UserRow;
  organisationName: string;
  mode: Mode;
  /** The bank accounts of the organisation in the session's mode. */
  accountIds: string[];
  /** Those of them that are dedicated transfer accounts. */
  dedicatedAccountIds: string[];
  /** An admin who must set up a second factor before using anything else. */
  owesSecondFactorSetup: boolean;
}

/**
 * The session a token opens, or why none: `ended` when it was past its idle or absolute timeout
 * (it is deleted), `none` when there is no such session. Its `last_seen_at` moves at most once a minute.
 */
export async function openSession(deps: ConsoleDeps, token: string): Promise<OpenSession | 'ended' | 'none'> {
  const found = await findSession(deps.database.prisma, token);
  if (found === null) return 'none';
  const now = deps.clock.now().getTime();
  if (now - found.lastSeenAt.getTime() > SESSION_IDLE_MS || now - found.createdAt.getTime() > SESSION_MAX_MS) {
    await deleteSession(deps.database.prisma, token);
    return 'ended';
  }
  if (now - found.lastSeenAt.getTime() >= TOUCH_EVERY_MS) await touchSession(deps.database.prisma, token, deps.clock.now());
  const { user, ...session } = found;
  const mode = session.mode as Mode;
  const [organisation, { accountIds, dedicatedAccountIds }] = await Promise.all([
    findOrganisation(deps.database.prisma, user.organisationId),
    accountIdsOf(deps.database.prisma, user.organisationId, mode),
  ]);
  return {
    session,
    user,
    organisationName: organisation.name,
    mode,
    accountIds,
    dedicatedAccountIds,
    owesSecondFactorSetup: !session.secondFactorPending && (await owesSecondFactorSetup(deps, user)),
  };
}

/** Ends the session and records the log-out. */
export async function logOut(deps: ConsoleDeps, token: string, audit: AuditContext): Promise<void> {
  await inAuditedTransaction(
    deps,
    audit,
    (tx) => deleteSession(tx, token),
    () => ({ action: 'logout', objectId: audit.userId, detail: {} }),
  );
}

/** Switches the session between test and live. */
export async function switchMode(deps: ConsoleDeps, token: string, mode: Mode): Promise<void> {
  await setSessionMode(deps.database.prisma, token, mode);
}

/** Deletes the sessions no request can use any more; the periodic sweep. */
export { deleteEndedSessions } from '../data/console-sessions';
