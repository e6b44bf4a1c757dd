import type { OrderRow, TransactionRow } from '@pmatch/db';
import { Router, type Request } from 'express';
import type { DepositSearch } from '../../data/console-search';
import { depositListOf, depositsForExport, type ExportPage } from '../../use-cases/console-lists';
import { clearHeldDeposits, confirmTogether } from '../../use-cases/confirm-together';
import { depositCountsOf, depositWithCandidates, nextHeldDeposit } from '../../use-cases/console-reads';
import type { OrdersApiDeps } from '../../use-cases/deps';
import { excludeTransaction, matchTransaction, restoreTransaction } from '../../use-cases/match-transaction';
import { findVisibleTransaction } from '../../use-cases/read-transactions';
import { tokyoDateInput } from '../format';
import { csvLine, sendCsv, type CsvCell } from '../csv';
import { DEPOSIT_CSV_HEADER, PAYMENT_CSV_HEADER, depositCsvCells, exportFileName, paymentCsvCells } from '../exports';
import { redirectDone, sendScreen } from '../render';
import { amountIn, auditContextOf, contextOf, cursorIn, field, fieldList, nextDay, pathId, queryText, requireRole, signedInOf } from '../request';
import { DepositScreen } from '../screens/deposit-detail';
import { BulkConfirmScreen, DEPOSIT_TABS, DepositListScreen, HELD_REASON_FILTERS, defaultSortOf, type DepositTab, type ListSort } from '../screens/deposits';

const LIST_LIMIT = 50;
/** Each tab's count stops here (shown as 1000+). */
const COUNT_CAP = 1000;
/** The most held deposits one bulk confirmation looks at and confirms. */
const BULK_LIMIT = 50;

/** Deposits by status and search; a deposit's decision explained; operators match, exclude and restore. */
export function depositRoutes(deps: OrdersApiDeps): Router {
  const router = Router();

  router.get('/dashboard/deposits', async (req, res) => {
    const { status, sort, filters, after } = depositListQuery(req);
    const { actor } = signedInOf(req);
    const { slice, nearMissOrders } = await depositListOf(deps, actor, {
      ...filters,
      oldestFirst: sort === 'oldest',
      limit: LIST_LIMIT,
      ...(after === undefined ? {} : { after }),
    });
    const counts = await depositCountsOf(deps, actor, DEPOSIT_TABS, COUNT_CAP);
    sendScreen(res, DepositListScreen, {
      ctx: contextOf(req),
      status,
      sort,
      rows: slice.rows,
      next: slice.nextAfter,
      nearMissOrders,
      req: req.query as Record<string, string>,
      counts,
      countCap: COUNT_CAP,
      now: deps.clock.now(),
    });
  });

  addExportRoutes(router, deps);

  // Bulk confirmation: a summary of what would be confirmed first; only its POST acts.
  router.get('/dashboard/deposits/bulk-confirm', requireRole('operator'), async (req, res) => {
    sendScreen(res, BulkConfirmScreen, { ctx: contextOf(req), pairs: await clearHeldDeposits(deps, signedInOf(req).actor, BULK_LIMIT) });
  });

  router.post('/dashboard/deposits/bulk-confirm', requireRole('operator'), async (req, res) => {
    const asked = fieldList(req, 'pair').map((pair) => {
      const [transaction_id = '', order_id = ''] = pair.split(':');
      return { transaction_id, order_id };
    });
    const { confirmed, left } = await confirmTogether(deps, signedInOf(req).actor, asked, BULK_LIMIT, auditContextOf(req));
    redirectDone(res, '/dashboard/deposits', 'bulk', { confirmed: String(confirmed), left: String(left) });
  });

  router.get('/dashboard/deposits/:id', async (req, res) => {
    const search = queryText(req, 'order_search');
    const shown = await depositWithCandidates(deps, signedInOf(req).actor, pathId(req), {
      searching: req.query.find === '1' || search !== undefined,
      text: search,
    });
    sendScreen(res, DepositScreen, { ctx: contextOf(req), ...shown, search, now: deps.clock.now() });
  });

  router.post('/dashboard/deposits/:id/match', requireRole('operator'), async (req, res) => {
    const { actor } = signedInOf(req);
    const deposit = await findVisibleTransaction(deps, actor, pathId(req));
    await matchTransaction(
      deps,
      actor,
      deposit,
      { order_id: field(req, 'order_id') ?? '', remember_payer: field(req, 'remember_payer') === 'on' },
      auditContextOf(req),
    );
    if (field(req, 'then') !== 'next') return redirectDone(res, `/dashboard/deposits/${deposit.id}`, 'confirmed');
    // "Confirm and next": the next held deposit, oldest first, says the last one was confirmed.
    const next = await nextHeldDeposit(deps, actor, deposit);
    redirectDone(res, next === undefined ? '/dashboard/deposits' : `/dashboard/deposits/${next}`, 'confirmed', { previous: deposit.id });
  });

  router.post('/dashboard/deposits/:id/exclude', requireRole('operator'), async (req, res) => {
    const { actor } = signedInOf(req);
    const deposit = await findVisibleTransaction(deps, actor, pathId(req));
    await excludeTransaction(deps, actor, deposit, auditContextOf(req));
    redirectDone(res, `/dashboard/deposits/${deposit.id}`, 'excluded');
  });

  router.post('/dashboard/deposits/:id/restore', requireRole('operator'), async (req, res) => {
    const { actor } = signedInOf(req);
    const deposit = await findVisibleTransaction(deps, actor, pathId(req));
    await restoreTransaction(deps, actor, deposit, auditContextOf(req));
    redirectDone(res, `/dashboard/deposits/${deposit.id}`, 'restored');
  });

  return router;
}

/** The deposit list as CSV files (docs/decisions/0182); whoever may see the list may download them. */
function addExportRoutes(router: Router, deps: OrdersApiDeps): void {
  // The list's deposits as CSV, under the same filters; whoever may see the list may download it.
  router.get('/dashboard/deposits.csv', async (req, res) => {
    const { actor } = signedInOf(req);
    const { status, filters } = depositListQuery(req);
    const pages = mapPages(depositsForExport(deps, actor, filters), depositCsvCells);
    await sendCsv(res, exportFileName(`deposits-${status}`, actor.mode, deps.clock.now()), DEPOSIT_CSV_HEADER, pages);
  });

  // The payments (confirmed deposits and their orders) under the list's name, amount and date filters.
  router.get('/dashboard/payments.csv', async (req, res) => {
    const { actor } = signedInOf(req);
    const { filters } = depositListQuery(req);
    const confirmed: Omit<DepositSearch, 'limit'> = { ...filters, status: 'confirmed' };
    delete confirmed.reason;
    const pages = mapPages(depositsForExport(deps, actor, confirmed), paymentCsvCells);
    await sendCsv(res, exportFileName('payments', actor.mode, deps.clock.now()), PAYMENT_CSV_HEADER, pages);
  });
}

/**
 * The deposit list's query: its tab (held unless another is named), its order (oldest first on
 * the held and unmatched tabs unless asked otherwise, newest first on the others), its filters
 * (a reason only on the held tab) and its cursor. Malformed filters are left out, as a search form
 * with nothing typed.
 */
function depositListQuery(req: Request): { status: DepositTab; sort: ListSort; filters: Omit<DepositSearch, 'limit'>; after: bigint | undefined } {
  const status = (DEPOSIT_TABS as readonly string[]).includes(req.query.status as string) ? (req.query.status as DepositTab) : 'held';
  const asked = queryText(req, 'sort');
  const sort: ListSort = asked === 'oldest' || asked === 'newest' ? asked : defaultSortOf(status);
  const name = queryText(req, 'name');
  const amount = amountIn(queryText(req, 'amount'));
  const from = tokyoDateInput(queryText(req, 'from'));
  const to = nextDay(tokyoDateInput(queryText(req, 'to')));
  const reason = queryText(req, 'reason');
  const filters: Omit<DepositSearch, 'limit'> = {
    status,
    ...(name === undefined ? {} : { name }),
    ...(amount === undefined ? {} : { amount }),
    ...(from === undefined ? {} : { from }),
    ...(to === undefined ? {} : { to }),
    ...(status === 'held' && reason !== undefined && (HELD_REASON_FILTERS as readonly string[]).includes(reason) ? { reason } : {}),
  };
  return { status, sort, filters, after: cursorIn(queryText(req, 'after')) };
}

/** Each page of deposits as the lines of a CSV file. */
async function* mapPages(
  pages: AsyncIterable<ExportPage>,
  cells: (deposit: TransactionRow, order: OrderRow | undefined) => CsvCell[],
): AsyncGenerator<string[]> {
  for await (const page of pages) yield page.rows.map((row) => csvLine(cells(row, row.orderId === null ? undefined : page.orders.get(row.orderId))));
}
