import { Router } from 'express';
import { listAudit } from '../../data/audit-log';
import type { OrdersApiDeps } from '../../use-cases/deps';
import { tokyoTime } from '../format';
import { contextOf, queryText, requireRole, signedInOf } from '../http';
import { sendPage } from '../render';
import { Layout, Pager, Table } from '../views/layout';

const PAGE_SIZE = 50;

/** The organisation's audit log (admins): who did what, on which object, from where, when. */
export function auditPages(deps: OrdersApiDeps): Router {
  const router = Router();
  router.get('/dashboard/audit', requireRole('admin'), async (req, res) => {
    const ctx = contextOf(req);
    const { t } = ctx;
    const before = queryText(req, 'after');
    const page = await listAudit(deps.database.prisma, signedInOf(req).actor.organisationId, {
      limit: PAGE_SIZE,
      ...(before !== undefined && /^\d{1,19}$/.test(before) ? { beforeId: BigInt(before) } : {}),
    });
    sendPage(
      res,
      <Layout ctx={ctx} title={t.audit.title} section="audit">
        <Table
          ctx={ctx}
          rows={page.rows}
          columns={[
            { header: t.common.date, cell: (row) => tokyoTime(row.createdAt) },
            { header: t.audit.user, cell: (row) => row.userEmail },
            { header: t.audit.action, cell: (row) => <code>{row.action}</code> },
            { header: t.audit.object, cell: (row) => row.objectId ?? '' },
            { header: t.modeLabel, cell: (row) => (row.mode === null ? '' : t.modes[row.mode]) },
            { header: t.audit.address, cell: (row) => row.ip ?? '' },
            { header: t.audit.detail, cell: (row) => <code>{JSON.stringify(row.detail)}</code> },
          ]}
        />
        <Pager ctx={ctx} next={page.hasMore ? { after: String(page.rows.at(-1)!.id) } : undefined} />
      </Layout>,
    );
  });
  return router;
}
